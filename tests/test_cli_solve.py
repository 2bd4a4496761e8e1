"""`pentadice solve`: output, files, the table directory, and bad input."""

import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from signals import interrupt

from pentadice.faces.cli import main
from pentadice.game.rules import get_rules
from pentadice.tables import table


def run(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


def test_solve_json_summary_and_files(tmp_path, penta_solution):
    result = run("solve", "--skip", "chances,win,win-end", "--out", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["rules"] == "penta"
    assert summary["expected_score"] == penta_solution.expected_score
    assert summary["states"] == 536_448
    assert summary["seconds"] > 0 and summary["compile_seconds"] >= 0
    assert summary["files"]["npy"] == str(tmp_path / "penta.npy")
    loaded = table.load(get_rules("penta"), tmp_path)
    assert loaded.values.tobytes() == penta_solution.values.tobytes()


def test_solve_human_summary(tmp_path):
    result = run("solve", "--skip", "chances,win,win-end", "--out", str(tmp_path), "--threads", "1")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Rules:           penta (Penta)" in out
    assert "Expected score:  254.48484588" in out  # at least 9 decimals are printed
    assert "States solved:   536,448" in out
    assert "JIT compile:" in out and "on 1 thread, values and second moments in one pass\n" in out
    assert str(tmp_path / "penta.parquet") in out


def test_table_directory_from_the_environment(tmp_path):
    result = run("solve", "--skip", "chances,win,win-end", "--json", env={"PENTADICE_DATA": str(tmp_path / "env-dir")})
    assert result.exit_code == 0, result.output
    assert (tmp_path / "env-dir" / "penta.npy").exists()


def test_unknown_rule_set_is_a_usage_error(tmp_path):
    result = run("solve", "--skip", "chances,win,win-end", "--rules", "kniffel", "--out", str(tmp_path))
    assert result.exit_code == 2
    assert "Invalid value for '--rules': unknown rule set 'kniffel'; known: penta" in result.output
    assert not list(tmp_path.iterdir())


def test_bad_thread_count_is_a_usage_error(tmp_path):
    result = run("solve", "--skip", "chances,win,win-end", "--threads", "0", "--out", str(tmp_path))
    assert result.exit_code == 2 and "--threads" in result.output
    result = run("solve", "--skip", "chances,win,win-end", "--threads", "999", "--out", str(tmp_path))
    assert result.exit_code == 2 and "--threads must be between 1 and" in result.output
    assert not (tmp_path / "penta.npy").exists()


def test_unwritable_output_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run("solve", "--skip", "chances,win,win-end", "--out", str(blocker / "tables"))
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot write tables to")
    assert "Traceback" not in result.output


def test_second_solve_of_the_same_table_is_refused(tmp_path):
    with table.writer_lock(table.TableFiles(tmp_path, "penta")):
        result = run("solve", "--skip", "chances,win,win-end", "--out", str(tmp_path))
    assert result.exit_code == 1
    assert "another pentadice process is writing the penta table" in result.output
    assert not (tmp_path / "penta.npy").exists()


def test_ctrl_c_in_the_middle_exits_130_and_writes_nothing(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("pentadice.solver.solve", interrupted)
    result = run("solve", "--skip", "chances,win,win-end", "--out", str(tmp_path))
    assert result.exit_code == 130
    assert "Interrupted: no table was written" in result.output
    assert not (tmp_path / "penta.npy").exists()


@pytest.mark.parametrize(("delay", "cold"), [(0.3, False), (1.0, False), (1.5, True)])
def test_real_sigint_leaves_no_partial_table(tmp_path, delay, cold):
    """Ctrl-C at some moment of a solve (cold: while Numba compiles, with an empty cache)."""
    out = tmp_path / "tables"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba")) if cold else None
    cmd = [sys.executable, "-m", "pentadice", "solve", "--skip", "chances,win,win-end", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(delay)
    interrupt(proc)
    _out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err and "Exception ignored" not in err
    names = sorted(p.name for p in out.iterdir() if p.name != ".penta.lock") if out.exists() else []
    if proc.returncode == 0 or "written whole" in err:  # it had renamed the files first: then the table is whole
        assert table.load(get_rules("penta"), out).meta["states"] == 536_448
    else:
        assert proc.returncode == 130, err
        # Before the command's own module has loaded (a busy machine at 0.3 s), Ctrl-C is said generically.
        assert "Interrupted: no table was written" in err or err.strip() == "Interrupted: stopped", err
        assert names == []


def test_installed_command_runs(tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "pentadice")
    proc = subprocess.run(
        [exe, "solve", "--skip", "chances,win,win-end", "--out", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rules"] == "penta"


def test_solve_takes_the_lock_before_solving(tmp_path, monkeypatch):
    solved = []
    monkeypatch.setattr("pentadice.solver.solve", lambda *a, **k: solved.append(1))
    with table.writer_lock(table.TableFiles(tmp_path, "penta")):
        result = run("solve", "--skip", "chances,win,win-end", "--data", str(tmp_path))
    assert result.exit_code == 1 and "another pentadice process is writing" in result.output
    assert solved == []
