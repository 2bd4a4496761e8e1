"""Kiriki: the accumulating Kiriki box and its extra turns, through the rules, solver, advisor, game and
simulator."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from solutions import solved

from pentadice.advisor import Advisor, SituationError
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.rules import legal_scores
from pentadice.game.sheet import Sheet
from pentadice.players.engine import Game, GameError, Player
from pentadice.simulator import simulate as sim
from pentadice.tables import table

KIRIKI = rules.get_rules("kiriki")
ALL = list(KIRIKI.box_ids)


def test_kiriki_is_the_same_boxes_with_other_switches():
    assert KIRIKI.boxes == KIRIKI.box_ids and KIRIKI.sheet == rules.PENTA_SHEET and KIRIKI.box_name("penta") == "Kiriki"
    assert KIRIKI.penta_bonus == 0 and KIRIKI.joker == "none" and KIRIKI.penta_repeat
    assert (KIRIKI.upper_threshold, KIRIKI.upper_bonus) == (63, 35)  # "more than 62"


def test_only_kiriki_has_no_bound_and_everything_that_needs_one_says_why():
    """The rule set says why a game has no bound (its turns repeat); the chances table, the win player's end
    game and the score distribution refuse with those words, and offer themselves everywhere else."""
    from pentadice.advisor.distribution import DistributionError, check_rules
    from pentadice.players.prepared import applicable
    from pentadice.solver.remaining import refusal
    from pentadice.tables import chances_store

    assert [name for name, rs in rules.REGISTRY.items() if rs.unbounded] == ["kiriki"]
    why = KIRIKI.unbounded
    assert "Kiriki box repeats the turn" in why
    assert refusal(KIRIKI) == chances_store.refusal(KIRIKI) == f"Kiriki has no chances table: {why}"
    assert applicable(KIRIKI)["win-end"] == f"Kiriki has no end game: {why}"
    with pytest.raises(DistributionError, match="repeats the turn"):
        check_rules(KIRIKI)
    penta = rules.get_rules("penta")
    assert refusal(penta) is None and chances_store.refusal(penta) is None and applicable(penta)["win-end"] is None
    check_rules(penta)
    assert not KIRIKI.reduced(penta_repeat=False).unbounded


def test_first_kiriki_scores_50_and_is_neither_full_house_nor_straight():
    legal, bonus = legal_scores(KIRIKI, (5,) * 5, ALL, False)
    assert legal["penta"] == 50 and legal["full_house"] == 0 and legal["large_straight"] == 0 and bonus == 0
    assert legal_scores(KIRIKI, (2, 2, 2, 3, 3), ALL, False)[0]["full_house"] == 25


def test_a_positive_kiriki_box_takes_further_kirikis_or_any_open_box():
    open_boxes = [b for b in ALL if b not in ("penta", "fives")]
    legal, bonus = legal_scores(KIRIKI, (5,) * 5, open_boxes, True)
    assert legal["penta"] == 50 and bonus == 0  # added: no +100
    assert set(legal) == set(open_boxes) | {"penta"}  # no joker: free placement, normal scores
    assert legal["full_house"] == 0 and legal["chance"] == 25


def test_a_kiriki_box_at_zero_takes_nothing():
    legal, _ = legal_scores(KIRIKI, (5,) * 5, ["ones", "chance"], False)
    assert legal == {"ones": 0, "chance": 25}


def test_not_five_of_a_kind_cannot_be_added():
    legal, _ = legal_scores(KIRIKI, (5, 5, 5, 5, 4), ["ones", "chance"], True)
    assert "penta" not in legal


def test_the_last_open_box_or_the_kiriki_box():
    legal, _ = legal_scores(KIRIKI, (3,) * 5, ["sixes"], True)
    assert legal == {"sixes": 0, "penta": 50}


@pytest.fixture(scope="module")
def kiriki_advisor(tmp_path_factory):
    solution = solved("kiriki")
    directory = tmp_path_factory.mktemp("kiriki")
    table.save(solution.rules, solution.values, directory)
    return Advisor.load("kiriki", str(directory), solve_missing=False)


def test_solved_values_are_fixed_points(kiriki_advisor):
    """V(S) = T(V(S)): the value equals the expected best option over the first roll, where adding a Kiriki
    comes back to the same state."""
    from sheets import random_sheet

    from pentadice.game import dice

    t = dice.tables(5)
    hands = [t.keep_faces[h] for h in range(t.n_hands)]
    rng = np.random.default_rng(3)
    for filled in (2, 5, 8, 11):
        s = random_sheet(KIRIKI, rng, filled - 1)
        s = Sheet({**s.boxes, "penta": 100})
        if len(s.boxes) >= 13:
            continue
        advice = kiriki_advisor.advise_many([kiriki_advisor.situation(h, 2, s) for h in hands])
        expected = (t.weight / 6**5) @ np.array([a.best.value for a in advice])
        value = s.score(KIRIKI) + kiriki_advisor.table.value(s.open_mask(KIRIKI), s.upper_subtotal(KIRIKI), True)
        assert expected == pytest.approx(value, abs=1e-9)


def test_advisor_offers_the_add_as_a_50_point_score_on_the_penta_box(kiriki_advisor):
    situation = kiriki_advisor.situation((6,) * 5, 0, Sheet({"penta": 50, "sixes": 24}))
    advice = kiriki_advisor.advise(situation)
    add = advice.option_for(box="penta")
    assert add.points == 50 and add.penta_bonus == 0
    after = kiriki_advisor.table.value(situation.sheet.open_mask(KIRIKI), 24, True)
    assert add.value == pytest.approx(74 + 50 + after, abs=1e-9)  # so far, the add, then this state again
    assert advice.as_dict(KIRIKI)["options"][0]["box"] in KIRIKI.box_ids


def test_kiriki_box_holds_multiples_of_50(kiriki_advisor):
    assert kiriki_advisor.situation((1, 2, 3, 4, 5), 0, Sheet({"penta": 150, "ones": 2}))
    with pytest.raises(SituationError, match="penta=120 is impossible"):
        kiriki_advisor.situation((1, 2, 3, 4, 5), 0, Sheet({"penta": 120}))
    with pytest.raises(SituationError, match="Kiriki pays no bonus for further Kirikis"):
        kiriki_advisor.situation((1, 2, 3, 4, 5), 0, Sheet({"penta": 50, "ones": 1}, penta_bonus=100))


def test_game_adds_to_the_box_and_gives_an_extra_turn():
    g = Game(KIRIKI, [Player("a")], seed=1)
    g.players[0].boxes.update({b: 0 for b in ALL if b not in ("chance", "penta")} | {"penta": 50})
    g.players[0].turns = 12
    g.dice, g.rolls_made = (4,) * 5, 3
    s = g.score("penta")
    assert (s.points, s.penta_bonus) == (50, 0)
    assert g.players[0].boxes["penta"] == 100 and not g.over and g.turn_number == 14
    g.dice, g.rolls_made = (4,) * 5, 3
    g.score("chance")
    assert g.over and g.totals(g.players[0])["total"] == 120
    with pytest.raises(GameError, match="the game is over"):
        g.roll()


def test_a_kiriki_box_at_zero_refuses_the_add():
    g = Game(KIRIKI, [Player("a")], seed=1)
    g.players[0].boxes["penta"] = 0
    g.dice, g.rolls_made = (4,) * 5, 3
    with pytest.raises(GameError, match="Kiriki is already filled"):
        g.score("penta")


@pytest.mark.slow
def test_simulated_mean_agrees_with_the_solved_expectation(kiriki_advisor):
    result = sim.simulate(kiriki_advisor.table, 150_000, seed=77)
    st = result.stats
    assert abs(st["mean"] - kiriki_advisor.table.expected_score) < 3 * st["stderr"]
    assert sum(st["extra_turns_distribution"].values()) == 150_000
    assert "1" in st["extra_turns_distribution"]  # some games do add a second Kiriki
    assert (result.scores[:, KIRIKI.penta_box] % 50 == 0).all()


def test_commands_accept_kiriki(kiriki_advisor, tmp_path):
    data = str(kiriki_advisor.table.files.directory)
    runner = CliRunner()
    args = ["advise", *"66666", "--rolls-left", "0", "--sheet", "penta=50", "--rules", "kiriki", "--data", data]
    advise = runner.invoke(main, [*args, "--json"])
    assert advise.exit_code == 0, advise.output
    options = json.loads(advise.output)["options"]
    add = next(o for o in options if o["box"] == "penta")
    assert {"action": "score", "box": "penta", "points": 50}.items() <= add.items()
    human = runner.invoke(main, args)
    assert "Kiriki" in human.output and "Penta" not in human.output
    simulate = runner.invoke(main, ["simulate", "-n", "300", "--rules", "kiriki", "--seed", "1", "--data", data])
    assert simulate.exit_code == 0 and "Extra turns:" in simulate.output and "Kiriki rate:" in simulate.output
    play = runner.invoke(main, ["play", "--players", "cpu,cpu", "--rules", "kiriki", "--seed", "4", "--data", data])
    assert play.exit_code == 0 and "Kiriki" in play.output and "TOTAL" in play.output
    solve = runner.invoke(
        main, ["solve", "--skip", "chances,win,win-end", "--rules", "kiriki", "--out", str(tmp_path), "--json"]
    )
    assert solve.exit_code == 0
    assert json.loads(solve.output)["expected_score"] == kiriki_advisor.table.expected_score
