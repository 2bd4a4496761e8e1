"""The game engine: every rule through play, computer players, the auto-commit, saving and loading."""

import json
from collections import Counter

import pytest

from pentadice import rules
from pentadice.advisor import NO_SCORE_MESSAGE
from pentadice.game.engine import Game, GameError, Player, computer_move, parse_players

PENTA = rules.get_rules("penta")


def game_at(boxes=None, dice=None, rolls_made=3, players=1, penta_bonus=0, seed=1):
    g = Game(PENTA, [Player(f"p{i}") for i in range(players)], seed=seed)
    g.players[0].boxes.update(boxes or {})
    g.players[0].penta_bonus = penta_bonus
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
        {
            "ones": 2,
            "threes": 6,
            "fours": 8,
            "sixes": 12,
            "chance": 20,
            "three_of_a_kind": 0,
            "four_of_a_kind": 0,
            "small_straight": 0,
        },
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
    sheet = {b: 0 for b in rules.BOX_IDS} | {"chance": 22}
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
    from conftest import random_sheet

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
    assert copy.dice == g.dice and copy.rolls_made == 2 and [p.name for p in copy.players] == ["Ana", "cpu 1"]
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
        (lambda d: json.dumps({k: v for k, v in d.items() if k != "rng"}), "damaged"),
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
    assert [(p.name, p.computer) for p in players] == [("Ana", False), ("cpu 1", True), ("Deep Blue", True)]
