"""The game on the Yatzy family's sheets: the engine plays whole games of Yatzy (15 boxes) and Maxi Yatzy (6
dice, 20 boxes) through legal moves, scores each box as the spec words it, pays the upper bonus at 63 and 75,
saves and loads them; the computer plays them to the end; the terminal and its words follow the sheet."""

import json
import re
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner
from family_server import six_dice_game
from reference import family_points
from solutions import solved

from pentadice.advisor import Advisor
from pentadice.faces import words
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.moves import Keep, Score
from pentadice.players.engine import Game, GameError, Player, parse_players
from pentadice.solver import induction
from pentadice.tables import table

YATZY = rules.get_rules("yatzy")
MAXI = rules.get_rules("maxi-yatzy")
SIX = six_dice_game()  # 6 dice, threshold 75, nine of Maxi Yatzy's boxes: solved in seconds


def random_game(rs: rules.RuleSet, seed: int) -> Game:
    """A game of two people making random legal moves, every box's points checked against the spec's words."""
    rng = np.random.default_rng(seed)
    g = Game(rs, [Player("Ana"), Player("Bo")], seed=seed, auto_commit_seconds=None)
    earned = Counter()
    while not g.over:
        g.start_turn()
        assert len(g.dice) == rs.dice
        while True:
            legal, bonus = g.legal_boxes()
            open_boxes = {b for b in rs.boxes if b not in g.player.boxes}
            assert set(legal) == open_boxes and bonus == 0  # no joker, no bonus: any open box takes any roll
            assert legal == {b: family_points(b, g.dice) for b in open_boxes}
            if g.rolls_left > 0 and rng.random() < 0.6:
                keep = tuple(d for d in g.dice if rng.random() < 0.5)[: rs.dice - 1]
                played = g.play(Keep(keep))
                assert len(played.dice) == rs.dice and not Counter(keep) - Counter(played.dice)
                continue
            box = str(rng.choice(sorted(legal)))
            played = g.play(Score(box))
            assert played.scored.points == legal[box]
            earned[played.player] += played.scored.upper_bonus
            break
    for p in g.players:
        assert len(p.boxes) == rs.n_boxes == p.turns
        t = g.totals(p)
        upper = sum(p.boxes[b] for b in rules.UPPER_IDS)
        assert t["upper"] == upper and t["upper_bonus"] == (50 if upper >= rs.upper_threshold else 0)
        assert t["upper_bonus"] == earned[p.name]  # paid once, by the box that reached the threshold
        assert t["total"] == sum(p.boxes.values()) + t["upper_bonus"] and t["penta_bonus"] == 0
    return g


@pytest.mark.parametrize(("rs", "seed"), [(YATZY, 1), (YATZY, 2), (MAXI, 1), (MAXI, 2)])
def test_a_whole_game_through_legal_moves(rs, seed):
    g = random_game(rs, seed)
    assert g.winners() and g.view()["over"]
    assert len(g.history) >= 2 * rs.n_boxes
    again = Game.from_json(g.to_json())  # the finished game with its history loads back
    assert [p.sheet for p in again.players] == [p.sheet for p in g.players]


def coach_upper(rs: rules.RuleSet, counts: dict[int, int]) -> list:
    """A coach game filling the upper boxes, face f with ``counts[f]`` dice of it; what each box earned."""
    g = Game(rs, [Player("Ana")], coach=True)
    out = []
    for face in range(1, 7):
        other = 1 if face != 1 else 2
        dice = [face] * counts[face] + [other] * (rs.dice - counts[face])
        g.start_turn(rolled=dice)
        out.append(g.play(Score(rules.UPPER_IDS[face - 1])).scored)
    return g, out


@pytest.mark.parametrize(
    ("rs", "counts", "bonus"),
    [
        (YATZY, {f: 3 for f in range(1, 7)}, 50),  # 63: the threshold
        (YATZY, {1: 2, 2: 3, 3: 3, 4: 3, 5: 3, 6: 3}, 0),  # 62
        (MAXI, {1: 3, 2: 3, 3: 4, 4: 4, 5: 4, 6: 3}, 50),  # 75
        (MAXI, {1: 2, 2: 3, 3: 4, 4: 4, 5: 4, 6: 3}, 0),  # 74: Yatzy's 63 would have paid
    ],
)
def test_the_upper_bonus_at_the_sheets_threshold(rs, counts, bonus):
    g, scored = coach_upper(rs, counts)
    upper = sum(f * c for f, c in counts.items())
    assert g.totals(g.players[0]) == {
        "upper": upper,
        "upper_bonus": bonus,
        "lower": 0,
        "penta_bonus": 0,
        "total": upper + bonus,
    }
    assert [s.upper_bonus for s in scored] == [0] * 5 + [bonus]


def test_the_sheets_boxes_and_no_other():
    g = Game(YATZY, [Player("Ana")], seed=1)
    g.start_turn()
    with pytest.raises(GameError, match="Yatzy \\(Scandinavian\\) has no box 'penta'"):
        g.score("penta")
    assert set(g.view()["legal"]) == set(YATZY.boxes) and len(g.view()["legal"]) == 15
    with pytest.raises(GameError, match="6 dice"):
        Game(MAXI, [Player("Ana")], coach=True).start_turn(rolled=[1, 2, 3, 4, 5])
    m = Game(MAXI, [Player("Ana")], seed=1)
    assert len(m.start_turn()) == 6 and len(m.view()["legal"]) == 20
    with pytest.raises(GameError, match="keeping all the dice"):
        m.play(Keep(m.dice))
    six = Game(MAXI, [Player("Ana")], coach=True)
    six.start_turn(rolled=[1] * 6)
    with pytest.raises(GameError, match="only six 1s"):
        six.play(Keep((1,) * 7), rolled=[])
    data = json.loads(m.to_json())
    assert data["rules"] == "maxi-yatzy" and len(data["dice"]) == 6
    data["dice"] = data["dice"][:5]
    with pytest.raises(GameError, match="6 dice, or null"):
        Game.from_json(json.dumps(data))


@pytest.mark.parametrize("rs", [YATZY, MAXI])
def test_the_win_strategy_is_refused_where_it_cannot_play(rs):
    from pentadice.players import win

    reason = win.refusal(rs)
    if reason is None:
        assert Game(rs, parse_players("Ana,cpu:win"), seed=1).players[1].strategy == "win"
    else:
        with pytest.raises(GameError) as e:
            Game(rs, parse_players("Ana,cpu:win"), seed=1)
        assert str(e.value) == reason


@pytest.fixture(scope="module")
def advisors() -> dict:
    return {
        "yatzy": Advisor(table.Table(YATZY, solved("yatzy").values, {}, None)),
        "six": Advisor(table.Table(SIX, induction.solve(SIX).values, {}, None)),
    }


@pytest.mark.parametrize("which", ["yatzy", "six"])
def test_the_computer_plays_a_whole_game(advisors, which):
    advisor = advisors[which]
    rs = advisor.rules
    g = Game(rs, parse_players("cpu:A,cpu:B"), seed=4)
    happened = g.advance(advisor, now=0.0)
    assert g.over and all(len(p.boxes) == rs.n_boxes for p in g.players)
    scored = [h for h in happened if not isinstance(h, tuple) and h.scored is not None]
    assert len(scored) == 2 * rs.n_boxes
    for p in g.players:
        t = g.totals(p)
        upper = sum(p.boxes[b] for b in rules.UPPER_IDS)
        assert t["upper_bonus"] == (50 if upper >= rs.upper_threshold else 0)
        assert t["total"] == sum(p.boxes.values()) + t["upper_bonus"]
        assert t["upper_bonus"] == sum(s.scored.upper_bonus for s in scored if s.player == p.name)


def test_a_review_lists_each_sheet_in_the_games_own_order(advisors):
    """Yatzy's full house comes after its straights; on Penta's sheet it comes before them."""
    from pentadice.players.review import review

    advisor = advisors["yatzy"]
    g = Game(YATZY, parse_players("cpu:A"), seed=3)  # its sheets hold a full house and a straight before a pair
    g.advance(advisor, now=0.0)
    data = review(g, advisor).as_dict()
    sheets = [d["sheet"] for d in data["decisions"]]
    penta_order = [b for b in rules.get_rules("penta").box_ids]
    assert any(list(s) != [b for b in penta_order if b in s] for s in sheets if set(s) <= set(penta_order))
    for sheet in sheets:
        assert list(sheet) == [b for b in YATZY.box_ids if b in sheet]


def test_words_for_six_dice_and_the_sheets_sections():
    assert words.dice_count(6) == "six dice"
    assert words.keep_text((), MAXI) == "Keep nothing and reroll all six dice"
    g = Game(MAXI, [Player("Ana")], seed=1)
    text = words.sheet_text(g)
    labels = [line[:18].strip() for line in text.splitlines()[2:]]
    assert labels[:8] == ["Ones", "Twos", "Threes", "Fours", "Fives", "Sixes", "Upper", "Bonus (75+)"]
    assert labels[8:-2] == [MAXI.box_name(b) for b in MAXI.boxes[6:]] and labels[-2:] == ["Lower", "TOTAL"]
    yatzy = words.sheet_text(Game(YATZY, [Player("Ana")], seed=1))
    assert "Bonus (63+)" in yatzy and "Yatzy bonus" not in yatzy and "Penta" not in yatzy + text


@pytest.fixture(scope="module")
def yatzy_table_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("yatzy-table")
    table.save(YATZY, solved("yatzy").values, directory)
    return directory


def test_play_yatzy_in_the_terminal(yatzy_table_dir, tmp_path):
    save = tmp_path / "game.json"
    args = ["play", "--rules", "yatzy", "--players", "Ana,cpu", "--seed", "3", "--pause", "0", "--auto-commit", "0"]
    result = CliRunner().invoke(main, [*args, "--data", str(yatzy_table_dir), "--save", str(save)], input="best\n" * 80)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "== Ana, turn 15 of 15 ==" in out and "turn 16" not in out and re.search(r"(Ana|cpu) wins with", out)
    assert "Bonus (63+)" in out and "One pair" in out and "Two pairs" in out and "Penta" not in out
    saved = json.loads(save.read_text())
    assert saved["rules"] == "yatzy" and all(len(p["sheet"]) == 15 for p in saved["players"])
    assert list(saved["players"][0]["sheet"]) == list(YATZY.box_ids)  # the sheet's own order


def test_a_six_dice_game_in_the_terminal(advisors):
    import io

    from pentadice.faces.terminal import LineInput, TerminalGame

    lines: list[str] = []
    g = Game(SIX, parse_players("Ana,cpu"), seed=2, auto_commit_seconds=None)
    keys = "keep 7\n" + "best\n" * 60  # a die that is not there, then the computer's choice to the end
    front = TerminalGame(g, advisors["six"], LineInput(io.StringIO(keys)), lambda text="", nl=True: lines.append(text))
    front.run()
    out = "\n".join(lines)
    assert g.over and "no 7" in out
    rolls = re.findall(r"^Roll 1: ((?:\[\d\] ?)+)$", out, flags=re.M)
    assert len(rolls) == 2 * SIX.n_boxes and all(r.count("[") == 6 for r in rolls)
    assert "Bonus (75+)" in out and "Three pairs" in out and "Tower" in out
