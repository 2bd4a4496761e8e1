"""``pentadice build`` as a user meets it: its refusals (no value table, a bad size, a scheduler that is not there)
in one line and no traceback, and Ctrl-C mid-build, which keeps the chunks written for the next run."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from signals import interrupt
from solutions import solved

from pentadice.tables import table


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pentadice", "build", *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_without_a_value_table_it_says_to_solve_first(tmp_path):
    done = run("--rules", "yatzy", "--data", str(tmp_path))
    assert done.returncode == 1
    assert "pentadice solve --rules yatzy" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("option", "value", "says"), [
    ("--memory", "12", "too small"),
    ("--memory", "lots", "is not a size"),
    ("--chunk", "0", "0 is not in the range"),
    ("--workers", "-1", "-1 is not in the range"),
])  # fmt: skip
def test_bad_options_are_usage_errors(tmp_path, option, value, says):
    done = run("--rules", "yatzy", "--data", str(tmp_path), option, value)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def yatzy_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("yatzy")
    solution = solved("yatzy")
    table.save(solution.rules, solution.values, directory)
    return directory


def test_a_scheduler_that_is_not_there_is_one_line(yatzy_dir):
    env = {**os.environ, "PENTADICE_SCHEDULER": "tcp://127.0.0.1:9"}  # the discard port: nothing listens
    env["DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT"] = "2s"  # Dask's own setting: the wait before giving up
    done = run("--rules", "yatzy", "--data", str(yatzy_dir), env=env)
    assert done.returncode == 1
    assert "cannot reach the Dask scheduler tcp://127.0.0.1:9" in done.stderr and "Traceback" not in done.stderr


def test_ctrl_c_keeps_the_chunks_written_and_says_how_to_go_on(yatzy_dir):
    store = yatzy_dir / "yatzy.win.store"
    cmd = [sys.executable, "-m", "pentadice", "build", "--rules", "yatzy", "--data", str(yatzy_dir), "--workers", "0",
           "--chunk", "64"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (store / "L03.merged.json").exists():  # a few layers merged, chunks of the next being written
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        interrupt(proc)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert f"Interrupted: the chunks written so far are kept in {store}" in err and "Traceback" not in err
    assert (store / "L03.merged.json").exists() and not (store / "table.json").exists()
    assert "Yatzy (Scandinavian)'s win tables fit in memory: `win` plays from those `pentadice solve` builds" in err
    assert not list(store.glob("**/.*.tmp*"))  # nothing half-written left behind
