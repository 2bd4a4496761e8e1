"""The simulator in bounded memory: a summary from counts equal to the one from every game kept, Parquet
written chunk by chunk, and Ctrl-C printing the summary of the games played so far (or saying that none was)."""

import json
import subprocess

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from commands import SMALL_CLI, run
from signals import interrupt, wait_for_work

from pentadice.faces.cli import main
from pentadice.simulator import simulate as sim


def test_the_tally_gives_the_same_summary_as_every_game_kept(penta_advisor, monkeypatch):
    monkeypatch.setattr(sim, "CHUNK", 700)  # several chunks
    kept = sim.simulate(penta_advisor.table, 2_500, seed=9)
    totals = kept.totals
    tally = sim.Tally(penta_advisor.rules)
    for scores, bonus in sim.play_chunks(penta_advisor.table, 2_500, 9):
        tally.add(scores, bonus)
    st = tally.stats(1.0)
    assert st["games"] == 2_500 and tally.games == 2_500
    assert st["mean"] == totals.mean() and st["std"] == pytest.approx(totals.std(ddof=1), rel=1e-12)
    for q, p in st["percentiles"].items():
        assert p == int(np.percentile(totals, int(q), method="inverted_cdf"))
    assert (st["min"], st["max"]) == (totals.min(), totals.max())
    assert st["upper_bonus_rate"] == (kept.upper_bonus > 0).mean()
    assert sum(c for _, _, c in tally.histogram()) == 2_500


def test_parquet_is_written_in_row_groups_with_every_game(penta_table_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(sim, "CHUNK", 400)
    out = tmp_path / "games.parquet"
    data = ["--data", str(penta_table_dir)]
    result = CliRunner().invoke(main, ["simulate", "-n", "1000", "--seed", "2", "--out", str(out), "--json", *data])
    assert result.exit_code == 0, result.output
    meta = pq.ParquetFile(out).metadata
    assert meta.num_rows == 1000 and meta.num_row_groups == 3
    games = pq.read_table(out)
    assert games.column("game").to_pylist() == list(range(1000))
    assert json.loads(result.output)["mean"] == pytest.approx(float(np.mean(games.column("total").to_numpy())))


def test_ctrl_c_prints_the_summary_of_the_games_played(small_game_tables):
    """A real Ctrl-C to a real process, on the small game standing for Penta (a chunk of 400,000 games takes
    well under a second of it)."""
    proc = subprocess.Popen(
        [*SMALL_CLI, "simulate", "-n", "1000000000", "--data", str(small_game_tables), "--seed", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Past start-up and the table (about 1 s of processor time) and a first chunk of 400,000 games.
    wait_for_work(proc, 4)
    interrupt(proc)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Mean score:" in out and "games (seed 1)" in out
    assert "games played of 1,000,000,000" in err and "Traceback" not in err


def test_a_simulation_stopped_before_any_game_says_so(penta_table_dir, monkeypatch):
    """No summary is printed when no game was played, so the message does not point at one."""
    from pentadice.simulator import simulate as sim

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sim, "run", stopped)
    result = run("simulate", "-n", "5000", "--data", str(penta_table_dir))
    assert result.exit_code == 130
    assert "stopped before any of the 5,000 games was played" in result.stderr
    assert "summary above" not in result.output
