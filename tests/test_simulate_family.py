"""The simulator on the Yatzy family's sheets (15 boxes without a Penta box; 6 dice and 80 lanes): its games
make the advisor's moves, its means reproduce the tables', its statistics and files follow the sheet."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from family_server import six_dice_game
from solutions import solved

from pentadice.advisor import Advisor
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.sheet import Sheet
from pentadice.simulator import simulate as sim
from pentadice.solver import induction
from pentadice.tables import table

YATZY = rules.get_rules("yatzy")
PUBLISHED_YATZY = 248.4399894
# A 6-dice game of Maxi Yatzy's boxes, small enough to solve in a test: the six upper boxes (threshold 75, 80
# lanes), three pairs, a tower and Maxi Yatzy (512 masks instead of 2**20).
SIX = six_dice_game()


def advisor_of(rs: rules.RuleSet, values: np.ndarray) -> Advisor:
    return Advisor(table.Table(rs, values, {}, None))


@pytest.fixture(scope="module")
def yatzy_advisor() -> Advisor:
    return advisor_of(YATZY, solved("yatzy").values)


@pytest.fixture(scope="module")
def six_advisor() -> Advisor:
    assert SIX.dice == 6 and SIX.lanes == 80 and SIX.penta_box == -1
    return advisor_of(SIX, induction.solve(SIX).values)


def replay(advisor, seed, game):
    from test_simulate import replay as penta_replay

    return penta_replay(advisor, seed, game)


@pytest.mark.parametrize("which", ["yatzy", "six"])
def test_simulated_games_make_the_advisors_moves(yatzy_advisor, six_advisor, which):
    advisor = yatzy_advisor if which == "yatzy" else six_advisor
    rs = advisor.rules
    (scores, bonus), *more = sim.play_chunks(advisor.table, 40, seed=7)
    assert not more and scores.shape == (40, rs.n_boxes) and not bonus.any()
    for g in range(40):
        player = replay(advisor, 7, g)
        assert {b: int(scores[g, rs.box_index[b]]) for b in rs.box_ids} == player.boxes


@pytest.mark.parametrize("which", ["yatzy", "six"])
def test_one_lane_or_every_lane_gives_the_same_games(yatzy_advisor, six_advisor, which):
    """80 lanes (six) and 64 (Yatzy): a group's turn for its games' subtotals only, or for every lane, gives the
    same games bit for bit (see tests/test_simulate.py for Penta)."""
    tbl = (yatzy_advisor if which == "yatzy" else six_advisor).table
    runs = [next(sim.play_chunks(tbl, 300, seed=4, wide_from=w)) for w in (1, 10**9, 6)]
    for scores, bonus in runs[1:]:
        assert np.array_equal(scores, runs[0][0]) and np.array_equal(bonus, runs[0][1])


@pytest.mark.slow
def test_yatzy_mean_agrees_with_the_published_expectation(yatzy_advisor):
    st = sim.simulate(yatzy_advisor.table, 200_000, seed=2026).stats
    assert st["stderr"] < 0.15
    assert abs(st["mean"] - PUBLISHED_YATZY) < 3 * st["stderr"]


def test_yatzy_mean_within_a_few_standard_errors(yatzy_advisor):
    st = sim.simulate(yatzy_advisor.table, 20_000, seed=11).stats
    assert abs(st["mean"] - PUBLISHED_YATZY) < 4 * st["stderr"]
    greedy = sim.simulate(yatzy_advisor.table, 20_000, seed=11, strategy="greedy").stats
    assert greedy["mean"] < st["mean"] - 10


def test_a_six_dice_games_mean_matches_its_table(six_advisor):
    st = sim.simulate(six_advisor.table, 20_000, seed=3).stats
    expected = six_advisor.table.expected_score
    assert abs(st["mean"] - expected) < 4 * st["stderr"]
    assert 0 < st["upper_bonus_rate"] < 1  # 75 is reached in some games, not all


@pytest.mark.parametrize("which", ["yatzy", "six"])
def test_statistics_follow_the_sheet(yatzy_advisor, six_advisor, which):
    advisor = yatzy_advisor if which == "yatzy" else six_advisor
    rs = advisor.rules
    r = sim.simulate(advisor.table, 1500, seed=8)
    st = r.stats
    assert (r.scores >= 0).all() and not r.penta_bonus.any()
    upper = r.scores[:, [rs.box_index[b] for b in rules.UPPER_IDS]].sum(axis=1)
    assert (r.upper_bonus == np.where(upper >= rs.upper_threshold, 50, 0)).all()
    assert (r.totals == r.scores.sum(axis=1) + r.upper_bonus).all()
    for g in range(0, 1500, 50):  # the sheet's own sums agree
        sheet = Sheet({b: int(r.scores[g, rs.box_index[b]]) for b in rs.boxes})
        assert sheet.totals(rs)["total"] == r.totals[g]
    alike = rs.all_alike_box
    assert st["all_alike_box"] == alike and st["all_alike_rate"] == (r.scores[:, rs.box_index[alike]] > 0).mean()
    assert "penta_rate" not in st and "penta_bonus_distribution" not in st  # no Penta box, no such bonus


@pytest.fixture(scope="module")
def yatzy_table_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("yatzy-table")
    table.save(YATZY, solved("yatzy").values, directory)
    return directory


def test_simulate_command_under_yatzy(yatzy_table_dir, tmp_path):
    out = tmp_path / "games.parquet"
    args = ["simulate", "-n", "400", "--seed", "3", "--rules", "yatzy", "--data", str(yatzy_table_dir)]
    result = CliRunner().invoke(main, [*args, "--json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["rules"] == "yatzy" and data["games"] == 400 and data["all_alike_box"] == "yatzy"
    games = pq.read_table(out)
    assert games.column_names == ["game", "total", *YATZY.boxes, "upper_bonus"]  # no Penta bonus column
    assert games.column("total").to_numpy().mean() == pytest.approx(data["mean"])
    human = CliRunner().invoke(main, args)
    assert human.exit_code == 0, human.output
    assert "Yatzy (Scandinavian), optimal strategy, 400 games" in human.output
    assert "Yatzy rate:" in human.output and "bonuses:" not in human.output and "Penta" not in human.output
    assert f"Solved mean:       {PUBLISHED_YATZY:.3f}" in human.output
