"""Where pentadice keeps its tables and how a command is told: a source checkout uses its own data folder with
nothing exported, elsewhere the user data directory serves unless the environment variable or ``--data`` names
another; ``pentadice where`` says which directory is in use, who chose it and which tables it holds; ``make
table`` does nothing when nothing has changed; ``--data`` and ``--out`` are one option; and ``python -m
pentadice`` runs the same command."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from commands import run

from pentadice.support import paths

ROOT = Path(__file__).resolve().parent.parent


def test_a_checkout_uses_its_data_folder_without_anything_exported(monkeypatch):
    monkeypatch.delenv(paths.ENV_VAR, raising=False)
    if paths.checkout_data() is None:
        pytest.skip("not run from a source checkout with data/")
    assert paths.locate() == (ROOT / "data", "checkout")
    monkeypatch.setenv(paths.ENV_VAR, "/somewhere")
    assert paths.locate() == (Path("/somewhere"), f"${paths.ENV_VAR}")
    assert paths.locate("/given") == (Path("/given"), "--data")


def test_outside_a_checkout_the_user_data_directory(monkeypatch, tmp_path):
    monkeypatch.delenv(paths.ENV_VAR, raising=False)
    monkeypatch.setattr(paths, "CHECKOUT", tmp_path)  # no pyproject.toml of pentadice there
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert paths.locate() == (tmp_path / "xdg" / "pentadice", "user")


def test_where_says_which_directory_and_which_tables(penta_table_dir):
    result = run("where", "--data", str(penta_table_dir))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"Table directory: {penta_table_dir} (given by --data)"
    assert "penta                 solved: expected score 254.4848458817" in result.output
    assert "kiriki                not solved yet" in result.output
    data = json.loads(run("where", "--data", str(penta_table_dir), "--json").output)
    assert data["source"] == "--data" and data["tables"]["penta"].startswith("solved")


def test_make_table_does_nothing_when_nothing_changed(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make")
    installed = ROOT / ".venv" / ".installed"
    if not installed.exists():
        pytest.skip("make install has not run")
    data = tmp_path / "data"
    data.mkdir()
    plan = subprocess.run(["make", "-n", "table", f"DATA={data}"], cwd=ROOT, capture_output=True, text=True)
    assert f"pentadice solve --rules penta --data {data}" in plan.stdout  # missing: solved
    (data / "penta.win-end-4.json").write_text("{}")  # written last: it stands for the whole set
    up_to_date = subprocess.run(["make", "-q", f"{data}/penta.win-end-4.json", f"DATA={data}"], cwd=ROOT)
    assert up_to_date.returncode == 0  # newer than its sources and the install: nothing to solve
    again = subprocess.run(["make", "-n", "table", f"DATA={data}"], cwd=ROOT, capture_output=True, text=True)
    assert "pentadice solve" not in again.stdout and "Next:" in again.stdout  # it only says what to do next


def test_solve_takes_data_and_out_as_one_option(tmp_path):
    for option in ("--data", "--out"):
        result = run("solve", "--skip", "chances,win,win-end", option, str(tmp_path / option.strip("-")), "--json")
        assert result.exit_code == 0, result.output
        assert (tmp_path / option.strip("-") / "penta.npy").exists()


def test_python_m_pentadice_works():
    proc = subprocess.run([sys.executable, "-m", "pentadice", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "Usage: pentadice" in proc.stdout and "where" in proc.stdout
