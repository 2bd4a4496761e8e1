"""The game engine: every rule through play, computer players, the auto-commit, saving and loading."""

import json
from collections import Counter

import pytest

from pentadice.advisor import NO_SCORE_MESSAGE
from pentadice.game import rules
from pentadice.game.moves import Keep
from pentadice.game.sheet import Sheet
from pentadice.players.engine import Game, GameError, Player, computer_move, parse_players

PENTA = rules.get_rules("penta")
# A sheet on which 1 1 3 4 6 scores nothing in any open box.
NO_SCORE_SHEET = {
    "ones": 2,
    "threes": 6,
    "fours": 8,
    "sixes": 12,
    "chance": 20,
    "three_of_a_kind": 0,
    "four_of_a_kind": 0,
    "small_straight": 0,
}


def game_at(boxes=None, dice=None, rolls_made=3, players=1, penta_bonus=0, seed=1):
    g = Game(PENTA, [Player(f"p{i}") for i in range(players)], seed=seed)
    g.players[0].sheet = Sheet(dict(boxes or {}), penta_bonus)
    if dice is not None:
        g.dice, g.rolls_made = tuple(sorted(dice)), rolls_made
    return g


def test_joker_forces_the_face_box_and_pays_100():
    g = game_at({"penta": 50}, (4,) * 5)
    with pytest.raises(GameError, match="the joker does not allow Chance now; allowed: Fours"):
        g.score("chance")
    s = g.score("fours")
    assert (s.points, s.penta_bonus) == (20, 100)
    assert g.players[0].penta_bonus == 100 and g.totals(g.players[0])["total"] == 50 + 20 + 100


def test_joker_lower_box_then_upper_box_at_zero():
    g = game_at({"penta": 50, "fours": 12}, (4,) * 5)
    with pytest.raises(GameError, match="does not allow Ones"):
        g.score("ones")
    assert (g.score("large_straight").points, g.players[0].penta_bonus) == (40, 100)
    lower = {
        b: 0 for b in ["three_of_a_kind", "four_of_a_kind", "full_house", "small_straight", "large_straight", "chance"]
    } | {"chance": 20}
    g = game_at({"penta": 50, "fours": 12, **lower}, (4,) * 5)
    assert g.warning == NO_SCORE_MESSAGE
    s = g.score("sixes")
    assert (s.points, s.penta_bonus) == (0, 100)


def test_no_bonus_and_no_joker_with_the_penta_box_at_zero():
    g = game_at({"penta": 0}, (4,) * 5)
    s = g.score("chance")
    assert (s.points, s.penta_bonus) == (20, 0)


def test_first_penta_scores_50_without_bonus():
    g = game_at({}, (6,) * 5)
    s = g.score("penta")
    assert (s.points, s.penta_bonus) == (50, 0)


def test_sacrifice_warning():
    g = game_at(
        NO_SCORE_SHEET,
        (1, 1, 3, 4, 6),
    )
    assert g.no_box_scores and g.warning == NO_SCORE_MESSAGE
    assert not game_at({}, (1, 1, 3, 4, 6)).no_box_scores


def test_upper_bonus_at_63():
    g = game_at({"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15}, (6, 6, 6, 1, 2))
    s = g.score("sixes")
    assert s.upper_bonus == 35
    t = g.totals(g.players[0])
    assert t["upper"] == 63 and t["upper_bonus"] == 35 and t["total"] == 98


def test_rolling_and_keeping():
    g = Game(PENTA, [Player("a")], seed=5)
    with pytest.raises(GameError, match="roll the dice first"):
        g.score("chance")
    with pytest.raises(GameError, match="no dice to keep before the first roll"):
        g.roll([1])
    first = g.roll()
    assert len(first) == 5 and g.rolls_left == 2
    missing = next(d for d in range(1, 7) if d not in first)
    with pytest.raises(GameError, match=f"cannot keep {missing}: the dice show"):
        g.roll([missing])
    second = g.roll(first[:2])
    assert not Counter(first[:2]) - Counter(second)  # the kept dice are still there
    g.roll(second)
    assert g.dice == second  # keeping all five rerolls nothing
    with pytest.raises(GameError, match="no rolls left"):
        g.roll()
    g.score("chance")
    g.roll()
    with pytest.raises(GameError, match="unknown box 'sevens'"):
        g.score("sevens")
    with pytest.raises(GameError, match="Chance is already filled"):
        g.score("chance")


def test_same_seed_same_dice():
    a, b = Game(PENTA, [Player("a")], seed=9), Game(PENTA, [Player("a")], seed=9)
    assert [a.roll() for _ in range(3)] == [b.roll() for _ in range(3)]


def test_several_players_play_to_the_end_and_the_best_total_wins(penta_advisor):
    g = Game(PENTA, parse_players("cpu,cpu:Bo,cpu"), seed=11)
    moves = 0
    while not g.over:
        if g.dice is None:
            g.roll()
        computer_move(g, penta_advisor)
        moves += 1
    assert all(len(p.boxes) == 13 for p in g.players)
    assert g.dice is None and moves >= 39
    totals = {p.name: g.totals(p)["total"] for p in g.players}
    assert {w.name for w in g.winners()} == {n for n, t in totals.items() if t == max(totals.values())}
    with pytest.raises(GameError, match="the game is over"):
        g.roll()


def test_a_tie_has_several_winners():
    g = Game(PENTA, [Player("a"), Player("b")], seed=1)
    sheet = {b: 0 for b in PENTA.box_ids} | {"chance": 22}
    for p in g.players:
        p.boxes.update(sheet)
    assert g.over and [p.name for p in g.winners()] == ["a", "b"]


def test_turns_alternate_between_players(penta_advisor):
    g = Game(PENTA, [Player("a"), Player("b")], seed=2)
    g.roll()
    g.score("chance")
    assert g.player.name == "b" and g.dice is None and g.rolls_made == 0


def test_auto_commit_fills_the_advisors_best_box(penta_advisor):
    import numpy as np
    from sheets import random_sheet

    rng = np.random.default_rng(4)
    for _ in range(25):
        sheet = random_sheet(PENTA, rng, int(rng.integers(0, 12)))
        g = game_at(dict(sheet.boxes), tuple(int(x) for x in rng.integers(1, 7, 5)), penta_bonus=sheet.penta_bonus)
        best = penta_advisor.best_box(g.situation())
        s = g.auto_commit(penta_advisor)
        assert s.auto and s.box == best.box and s.points == best.points
    g = game_at({}, (1, 2, 3, 4, 5), rolls_made=2)
    with pytest.raises(GameError, match="only fills a box after the last roll"):
        g.auto_commit(penta_advisor)


def test_save_and_resume_rolls_what_the_original_would_have(penta_advisor):
    g = Game(PENTA, parse_players("Ana,cpu"), seed=21)
    g.roll()
    g.roll(g.dice[:2])
    saved = g.to_json()
    copy = Game.from_json(saved)
    assert copy.dice == g.dice and copy.rolls_made == 2 and [p.name for p in copy.players] == ["Ana", "cpu"]
    assert copy.roll() == g.roll()
    assert copy.score("chance") == g.score("chance")
    assert copy.roll() == g.roll()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: "not json", "not valid JSON"),
        (lambda d: json.dumps({"format": "other"}), "not a saved pentadice game"),
        (lambda d: json.dumps({**d, "rules": "kniffel"}), "unknown rule set"),
        (
            lambda d: json.dumps({**d, "players": [{"name": "a", "computer": False, "sheet": {"fours": 7}}]}),
            "fours=7 is impossible",
        ),
        (lambda d: json.dumps({**d, "current": 5}), "no such current player"),
        (lambda d: json.dumps({**d, "dice": [1, 2, 3], "rolls_made": 1}), "impossible dice"),
        (lambda d: json.dumps({**d, "rolls_made": 0}), "dice and rolls disagree"),
        (lambda d: json.dumps({**d, "rng": None}), "rng must be an object"),  # left out, it is fresh dice
    ],
)
def test_malformed_saved_games_are_refused(mutate, message):
    g = Game(PENTA, [Player("a"), Player("b")], seed=1)
    g.roll()
    data = json.loads(g.to_json())
    with pytest.raises(GameError, match=message):
        Game.from_json(mutate(data))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty player name"),
        ("Ana,,Bo", "empty player name"),
        ("Ana,Ana", "two players are called 'Ana'"),
        ("a,b,c,d,e,f,g", "1 to 6 players, not 7"),
        ("bot:x", "unknown player kind 'bot'"),
    ],
)
def test_bad_players_are_refused(spec, message):
    with pytest.raises(GameError, match=message):
        parse_players(spec)


def test_players_are_people_or_computers():
    players = parse_players("Ana, cpu ,cpu:Deep Blue")
    assert [(p.name, p.computer) for p in players] == [("Ana", False), ("cpu", True), ("Deep Blue", True)]
    assert [p.name for p in parse_players("cpu,Ana,cpu")] == ["cpu 1", "Ana", "cpu 2"]  # numbered when several


# The sacrifice warning on the last roll only; clearer keep messages; the auto-commit time checked;
# names printable; saved games checked as strictly as a sheet on the command line.


@pytest.mark.parametrize("rolls_made", [1, 2])
def test_the_sacrifice_warning_waits_for_the_last_roll(rolls_made):
    g = game_at(NO_SCORE_SHEET, (1, 1, 3, 4, 6), rolls_made=rolls_made)
    assert g.no_box_scores and g.warning is None  # rerolls are left: there is still a choice
    assert game_at(NO_SCORE_SHEET, (1, 1, 3, 4, 6), rolls_made=3).warning == NO_SCORE_MESSAGE


def test_keeping_more_of_a_face_than_shows_says_which_dice_show():
    g = game_at({}, (1, 3, 3, 4, 5), rolls_made=1)
    with pytest.raises(GameError, match=r"^cannot keep 3 3 3: the dice show 1 3 3 4 5 \(only two 3s\)$"):
        g.roll([3, 3, 3])
    with pytest.raises(GameError, match=r"^cannot keep 2 6: the dice show 1 3 3 4 5 \(no 2, no 6\)$"):
        g.roll([6, 2])
    # Five dice that are not showing are refused as not showing, not as "keeping all the dice".
    with pytest.raises(GameError, match=r"^cannot keep 6 6 6 6 6: the dice show 1 3 3 4 5 \(no 6\)$"):
        g.play(Keep((6, 6, 6, 6, 6)))
    with pytest.raises(GameError, match="keeping all the dice rolls nothing"):
        g.play(Keep((1, 3, 3, 4, 5)))


@pytest.mark.parametrize("text", ["inf", "-inf", "1e300", "nan", "-1", "86401", "3s", "", "1_0", "\u0663", "0x10"])
def test_auto_commit_times_that_are_refused(text):
    from pentadice.players.engine import parse_auto_commit

    with pytest.raises(GameError, match="is not a number of seconds from 0 to 86400, or off"):
        parse_auto_commit(text)


def test_auto_commit_times_that_are_taken():
    from pentadice.players.engine import parse_auto_commit

    assert [parse_auto_commit(t) for t in ["0", "3", " 2.5 ", ".5", "OFF", "86400"]] == [0, 3, 2.5, 0.5, None, 86400]
    for bad in [float("inf"), float("nan"), 1e300, 10**400, -1, True, "3"]:
        with pytest.raises(GameError, match="auto-commit time"):
            Game(PENTA, [Player("a")], auto_commit_seconds=bad)
    off = Game(PENTA, [Player("a")], seed=1, auto_commit_seconds=None)
    assert json.loads(off.to_json())["auto_commit_seconds"] is None
    assert Game.from_json(off.to_json()).auto_commit_seconds is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("\x1b]0;pwned\x07Ana", "control character"),
        ("Ana,cpu:\x1b[2J", "control character"),
        ("Ana\u202eoB", "control character"),  # a right-to-left override
        ("Ana\x9b31m", "control character"),  # a C1 control (CSI)
        ("x" * 33, "longer than 32 characters"),
    ],
)
def test_names_that_could_hurt_a_terminal_are_refused(spec, message):
    with pytest.raises(GameError, match=message):
        parse_players(spec)


def test_clean_replaces_every_control_character():
    from pentadice.support.inputs import clean

    assert clean("\x1b]0;pwned\x07Ana") == "?]0;pwned?Ana"
    assert clean("a\x9bb\u202ec\x00d\x7fe\u2028f\ud800") == "a?b?c?d?e?f?"
    assert clean("José 李 ☃ cpu 1") == "José 李 ☃ cpu 1"


def saved(count=2, rolls=1, seed=3, **changes):
    """A valid saved game as JSON data, with top-level ``changes``."""
    g = Game(PENTA, [Player(n) for n in "ab"[:count]], seed=seed)
    for _ in range(rolls):
        g.roll()
    return {**json.loads(g.to_json()), **changes}


def with_player(data, i=0, **changes):
    players = [dict(p) for p in data["players"]]
    players[i] = {**players[i], **changes}
    return {**data, "players": players}


FULL_SHEET = {b: 0 for b in PENTA.box_ids} | {"chance": 22}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (with_player(saved(), computer="false"), "computer must be true or false, not 'false'"),
        (with_player(saved(), computer=0), "computer must be true or false"),
        (with_player(saved(), name=""), "empty player name"),
        (with_player(saved(), name=7), "a player's name is text"),
        (with_player(saved(), name="\x1b]0;pwned\x07Ana"), "control character"),
        (with_player(saved(), turns="0"), "turns must be a whole number"),
        (with_player(saved(), turns=0.0), "turns must be a whole number"),
        (with_player(saved(), turns=-1), "turns must be 0 to"),
        (with_player(saved(), sheet={"ones": "3"}, turns=1), "must be a whole number"),
        (with_player(saved(), sheet={"ones": True}, turns=1), "must be a whole number"),
        (with_player(saved(), sheet={"ones": 999}, turns=1), "ones=999 is impossible"),
        (with_player(saved(), sheet={"ones": 3, "penta": 50, "penta_bonus": -7}, turns=2), "penta_bonus=-7"),
        (with_player(saved(), sheet=FULL_SHEET | {"ones": 999}, turns=13), "ones=999 is impossible"),
        (with_player(saved(), sheet=[["ones", 3]], turns=1), "the sheet must be an object"),
        (with_player(saved(), sheet={"ones": 3}, turns=5), "1 boxes filled after 5 turns"),
        (with_player(saved(), extra=1), "unknown field 'extra'"),
        (with_player(saved(), sheet=FULL_SHEET, turns=13), "full sheet"),  # the current player, dice showing
        (
            with_player(with_player(saved(), sheet=FULL_SHEET, turns=13), 1, sheet=FULL_SHEET, turns=13),
            "every sheet is full, yet dice are showing",
        ),
        (with_player(saved(), 1, sheet={"ones": 3}, turns=1), "not the order of play"),
        (saved(current=True), "no such current player"),
        (saved(current="0"), "no such current player"),
        (saved(current=0.0), "no such current player"),
        (saved(rolls_made="1"), "impossible number of rolls"),
        (saved(dice=["1", 2, 3, 4, 5]), "a die must be a whole number"),
        (saved(dice=[1, 2, 3, 4, 7]), "a die must be 1 to 6"),
        (saved(dice=[1, 2, 3, 4, True]), "a die must be a whole number"),
        (saved(dice=[1, 2, 3, 4, 5, 6]), "impossible dice"),
        (saved(dice="12345"), "impossible dice"),
        (saved(auto_commit_seconds=1e300), "auto-commit time is 0 to 86400"),
        (saved(auto_commit_seconds=-1), "auto-commit time is 0 to 86400"),
        (saved(auto_commit_seconds="3"), "auto-commit time is a number"),
        (saved(auto_commit_seconds=10**400), "the number 1000.* is too long"),
        (saved(hints="yes"), "hints must be true or false"),
        (saved(save_path=""), "save_path must be a file name"),
        (saved(rules=["penta"]), "unknown rule set"),
        (saved(players=[]), "a list of 1 to 6 players"),
        (saved(players={"name": "a"}), "a list of 1 to 6 players"),
        (saved(rng=[]), "rng must be an object"),
        (saved(rng={"bit_generator": "MT19937"}), "the generator is PCG64"),
        (saved(extra=1), "unknown field 'extra'"),
    ],
)
def test_saved_games_are_checked_strictly(data, message):
    with pytest.raises(GameError, match=message):
        Game.from_json(json.dumps(data))


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ({"state": -1}, "rng state must be 0 to"),
        ({"state": 2**128}, "rng state must be 0 to"),
        ({"state": "12"}, "rng state must be a whole number"),
        ({"inc": 2}, "rng inc must be odd"),
        ({"inc": -3}, "rng inc must be 0 to"),
        ({"inc": None}, "rng inc must be a whole number"),
    ],
)
def test_a_damaged_generator_state_is_refused(state, message):
    data = saved()
    data["rng"] = {**data["rng"], "state": {**data["rng"]["state"], **state}}
    with pytest.raises(GameError, match=message):
        Game.from_json(json.dumps(data))
    for key, value, msg in [("has_uint32", 2, "has_uint32"), ("uinteger", -1, "uinteger"), ("state", 5, "object")]:
        bad = {**saved(), "rng": {**saved()["rng"], key: value}}
        with pytest.raises(GameError, match=msg):
            Game.from_json(json.dumps(bad))
    with pytest.raises(GameError, match="rng has no 'uinteger'"):
        Game.from_json(json.dumps({**saved(), "rng": {k: v for k, v in saved()["rng"].items() if k != "uinteger"}}))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "pentadice-game", "auto_commit_seconds": Infinity}', "Infinity is not a number"),
        ('{"format": "pentadice-game", "auto_commit_seconds": NaN}', "NaN is not a number"),
        ('{"format": "pentadice-game", "format": "pentadice-game"}', "key 'format' is given twice"),
        ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested more than 64 levels deep"),
        ("9" * 5000, "is too long"),  # an integer too long for Python to read
        (" " * (2 << 20), "larger than 1 MB"),
        (b'{"format": "pentadice-game\xff"}', "not UTF-8 text"),
        ("[1, 2]", "not a saved pentadice game"),
        ("", "not valid JSON"),
    ],
)
def test_files_that_are_not_saved_games_are_refused(text, message):
    with pytest.raises(GameError, match=message):
        Game.from_json(text)


def test_the_front_end_settings_are_saved_and_old_saves_still_load():
    g = Game(PENTA, [Player("Ana"), Player("cpu 1", computer=True)], seed=4, auto_commit_seconds=1.5)
    g.hints, g.save_path = True, "/tmp/game.json"
    g.roll()
    copy = Game.from_json(g.to_json())
    assert (copy.hints, copy.save_path, copy.auto_commit_seconds) == (True, "/tmp/game.json", 1.5)
    assert copy.to_json() == g.to_json()
    old = {k: v for k, v in json.loads(g.to_json()).items() if k not in ("hints", "save_path")}
    assert Game.from_json(json.dumps(old)).hints is False


@pytest.mark.parametrize("name", ["penta", "kiriki", "yahtzee"])
def test_every_moment_of_real_games_loads_back(name):
    import numpy as np

    rs = rules.get_rules(name)
    rng = np.random.default_rng(len(name))
    for players in (1, 3):
        g = Game(rs, [Player(f"p{i}") for i in range(players)], seed=players)
        while not g.over:
            assert Game.from_json(g.to_json()).to_json() == g.to_json()
            if g.dice is None or (g.rolls_left and rng.random() < 0.5):
                g.roll()
                continue
            legal, _ = g.legal_boxes()
            g.score(str(rng.choice(sorted(legal))))
        assert Game.from_json(g.to_json()).over


def test_kiriki_extra_turns_load_back():
    kiriki = rules.get_rules("kiriki")
    g = Game(kiriki, [Player("a"), Player("b")], seed=1)
    for box in ["penta", "chance", "penta", "sixes", "penta", "ones"]:  # a: Kiriki three times
        g.dice, g.rolls_made = (6,) * 5, 1
        g.score(box)
        assert Game.from_json(g.to_json()).to_json() == g.to_json()
    assert (g.players[0].boxes["penta"], g.players[0].turns, len(g.players[0].boxes)) == (150, 3, 1)
    data = json.loads(g.to_json())
    data["players"][0]["turns"] = 1  # Kiriki 150 is three turns, not one
    with pytest.raises(GameError, match="1 boxes filled after 1 turns"):
        Game.from_json(json.dumps(data))
