"""The simulator: statistics, reproducibility, its decisions against the advisor's, and `pentadice simulate`."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.game.moves import Score
from pentadice.players.engine import Game, Player
from pentadice.simulator import simulate as sim

PENTA = rules.PENTA_RULES


@pytest.mark.slow
def test_optimal_mean_and_how_sheets_end_agree_with_the_exact_ones(penta_advisor):
    # The mean against the table's expected score; the games ending with the upper bonus, and with the Penta box
    # at 50, against the exact chances of the forward pass (pentadice distribution), within 4 standard errors.
    from pentadice.advisor import distribution

    result = sim.simulate(penta_advisor.table, 200_000, seed=2026)
    st = result.stats
    assert st["stderr"] < 0.15  # sharp enough to catch a wrong move in a common situation
    assert abs(st["mean"] - penta_advisor.table.expected_score) < 3 * st["stderr"]
    exact = distribution.final_distribution(PENTA, penta_advisor.table.values)
    for rate, p in ((st["upper_bonus_rate"], exact.p_upper_bonus), (st["penta_rate"], exact.p_penta)):
        assert 0.2 < p < 0.8 and abs(rate - p) < 4 * np.sqrt(p * (1 - p) / st["games"]), (rate, p)


def test_same_seed_same_games_and_greedy_is_worse(penta_advisor):
    a = sim.simulate(penta_advisor.table, 3000, seed=5)
    b = sim.simulate(penta_advisor.table, 3000, seed=5)
    assert np.array_equal(a.scores, b.scores) and np.array_equal(a.penta_bonus, b.penta_bonus)
    greedy = sim.simulate(penta_advisor.table, 3000, seed=5, strategy="greedy")
    assert greedy.stats["mean"] < a.stats["mean"] - 20
    assert greedy.stats["upper_bonus_rate"] < a.stats["upper_bonus_rate"]


def test_statistics_are_those_of_the_games(penta_advisor):
    r = sim.simulate(penta_advisor.table, 2000, seed=8)
    st = r.stats
    totals = r.totals
    assert ((r.scores >= 0).all()) and (r.scores.sum(axis=1) + r.upper_bonus + r.penta_bonus == totals).all()
    assert st["games"] == 2000 and st["mean"] == totals.mean() and st["std"] == pytest.approx(totals.std(ddof=1))
    assert st["stderr"] == pytest.approx(st["std"] / np.sqrt(2000))
    assert st["percentiles"]["50"] == np.percentile(totals, 50)
    assert st["penta_rate"] == st["all_alike_rate"] == (r.scores[:, PENTA.penta_box] == 50).mean()
    assert sum(st["penta_bonus_distribution"].values()) == 2000
    assert st["upper_bonus_rate"] == (r.scores[:, :6].sum(axis=1) >= 63).mean()  # Penta's upper boxes: bits 0-5
    assert sum(c for _, _, c in sim.histogram(totals)) == 2000


def replay(advisor, seed, game):
    """Game ``game`` of the run of ``seed`` played by the engine and the advisor on the simulator's dice (roll r
    of turn t uses the first k dice of roll r for k rerolled dice)."""
    rs = advisor.rules
    turns = len(rs.boxes)  # no extra turns in these games (Kiriki's are left out)
    rolls = sim.game_dice(seed, game, turns, rs.rolls, rs.dice)
    g = Game(rs, [Player("solo")], coach=True)  # a coach game: the dice are given
    for t in range(turns):
        g.start_turn(rolled=[int(x) for x in rolls[t, 0]])
        while True:
            best = advisor.advise(g.situation()).best
            if isinstance(best.move, Score):
                g.play(best.move)
                break
            n = rs.dice - len(best.move.dice)
            g.play(best.move, rolled=[int(x) for x in rolls[t, g.rolls_made, :n]])
    return g.players[0]


@pytest.mark.parametrize("games", [3, 60])  # 60: the first turns are played in step, sharing states
def test_simulated_games_make_the_advisors_moves(penta_advisor, games):
    (scores, bonus), *more = sim.play_chunks(penta_advisor.table, games, seed=99)
    assert not more
    for g in range(games):
        player = replay(penta_advisor, 99, g)
        assert {b: int(scores[g, PENTA.box_index[b]]) for b in PENTA.box_ids} == player.boxes
        assert bonus[g] == player.penta_bonus


@pytest.mark.parametrize("strategy", ["optimal", "greedy"])
def test_a_groups_turn_one_lane_at_a_time_or_every_lane_gives_the_same_games(penta_advisor, strategy):
    """A small group of games computes its turn for its own subtotals only, a large one for every lane at once:
    the same bits, so the same games, whichever way each group goes (always wide, always narrow, the default),
    whatever the chunk."""
    tbl = penta_advisor.table

    def games(**kw) -> tuple:
        parts = list(sim.play_chunks(tbl, 600, seed=5, strategy=strategy, **kw))
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    wide = games(wide_from=1)
    for kw in ({}, {"wide_from": 10**9}, {"wide_from": 3, "chunk": 77}):
        scores, bonus = games(**kw)
        assert np.array_equal(scores, wide[0]) and np.array_equal(bonus, wide[1]), kw


def test_the_games_read_the_table_itself_not_a_copy(penta_advisor):
    tbl = penta_advisor.table
    assert np.shares_memory(sim.strategy_values("optimal", tbl), tbl.values)
    assert sim.strategy_values("greedy", tbl).shape == PENTA.table_shape


def test_simulate_command_json_and_parquet(penta_table_dir, tmp_path):
    out = tmp_path / "games.parquet"
    result = CliRunner().invoke(
        main, ["simulate", "-n", "500", "--seed", "3", "--json", "--out", str(out), "--data", str(penta_table_dir)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"games", "mean", "std", "games_per_second"} <= set(data) and data["games"] == 500
    table = pq.read_table(out)
    assert table.num_rows == 500
    assert {"total", "ones", "penta", "upper_bonus", "penta_bonus"} <= set(table.column_names)
    assert table.column("total").to_numpy().mean() == pytest.approx(data["mean"])


def test_simulate_command_human_summary(penta_table_dir):
    result = CliRunner().invoke(
        main, ["simulate", "-n", "300", "--seed", "3", "--strategy", "greedy", "--data", str(penta_table_dir)]
    )
    assert result.exit_code == 0, result.output
    for text in (
        "greedy strategy, 300 games",
        "Mean score:",
        "standard error",
        "Percentiles:",
        "Upper bonus rate:",
        "Penta rate:",
        "Penta bonuses:",
        "games/s",
        "Final scores:",
        "#",
    ):
        assert text in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-n", "0"], "'-n' / '--games'"),
        (["-n", "10", "--strategy", "lucky"], "'lucky' is not one of"),
        (["-n", "x"], "not a valid integer"),
        (["-n", "10", "--rules", "kniffel"], "unknown rule set 'kniffel'"),
    ],
)
def test_simulate_bad_input(penta_table_dir, args, message):
    result = CliRunner().invoke(main, ["simulate", *args, "--data", str(penta_table_dir)])
    assert result.exit_code == 2 and message in result.output
