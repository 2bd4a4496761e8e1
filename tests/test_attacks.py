"""What an attacker's review found after the first round of hardening, each kept as a test."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner
from signals import interrupt

from pentadice.faces.cli import main
from pentadice.game.rules import get_rules
from pentadice.tables import table

CLI = [sys.executable, "-m", "pentadice"]
PLAY = ["play", "--players", "Ana", "--seed", "1", "--pause", "0", "--auto-commit", "0"]


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


@pytest.fixture
def copy(tmp_path, penta_table_dir):
    directory = tmp_path / "tables"
    directory.mkdir()
    for p in penta_table_dir.iterdir():
        if not p.name.startswith("."):
            shutil.copy(p, directory / p.name)
    return directory


def test_home_of_a_user_that_does_not_exist(penta_table_dir, tmp_path):
    for args in (
        ["advise", "1", "1", "3", "4", "6", "--data", "~nosuchuser/x"],
        ["where", "--data", "~nosuchuser"],
        [*PLAY, "--data", str(penta_table_dir), "--save", "~nosuchuser/g.json"],
    ):
        result = run(*args, input="quit\n")
        assert result.exit_code in (1, 2) and "nosuchuser" in result.output, result.output
        assert not isinstance(result.exception, RuntimeError)
    save = tmp_path / "g.json"
    result = run(*PLAY, "--data", str(penta_table_dir), "--save", str(save), input="save ~nosuchuser/g.json\nquit\n")
    assert result.exit_code == 0, result.output
    assert "Not allowed: cannot expand '~nosuchuser'" in result.output and save.exists()


def test_closed_standard_error_or_input_are_read_as_nothing(penta_table_dir):
    data = ["--data", str(penta_table_dir)]
    sim = subprocess.run(
        ["bash", "-c", 'exec "$@" 2>&-', "_", *CLI, "simulate", "-n", "20", *data], capture_output=True
    )
    assert sim.returncode == 0 and b"Mean score" in sim.stdout
    batch = subprocess.run(
        ["bash", "-c", 'exec "$@" <&-', "_", *CLI, "advise", "--batch", "-", *data], capture_output=True
    )
    assert batch.returncode == 0 and batch.stdout == b"" and b"Traceback" not in batch.stderr


def test_a_save_file_in_an_unwritable_directory_is_refused_before_the_game(penta_table_dir, tmp_path, monkeypatch):
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real_access(p, mode))
    result = run(*PLAY, "--data", str(penta_table_dir), "--save", str(tmp_path / "g.json"), input="best\n")
    assert result.exit_code == 2 and "is not writable" in result.output
    assert "== Ana, turn 1" not in result.output


def test_saving_never_replaces_a_file_that_is_not_a_saved_game(penta_table_dir, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    result = run(*PLAY, "--data", str(penta_table_dir), "--save", str(notes), input="quit\n")
    assert result.exit_code == 2 and "is left alone" in result.output
    save = tmp_path / "g.json"
    result = run(*PLAY, "--data", str(penta_table_dir), "--save", str(save), input=f"save {notes}\nquit\n")
    assert "Not allowed: cannot save the game" in result.output and notes.read_text() == "my notes"
    assert json.loads(save.read_text())["format"] == "pentadice-game"  # and a saved game may be replaced
    again = run(*PLAY, "--data", str(penta_table_dir), "--save", str(save), input="best\nquit\n")
    assert again.exit_code == 0, again.output


def test_verify_refuses_a_parquet_file_that_is_not_regular(copy):
    (copy / "penta.parquet").unlink()
    os.mkfifo(copy / "penta.parquet")
    result = run("verify", "--data", str(copy))
    assert result.exit_code == 1 and "not a regular file" in result.output


def test_an_interrupted_batch_says_how_many_lines_were_answered(penta_table_dir):
    import time

    proc = subprocess.Popen(
        [*CLI, "advise", "--batch", "-", "--data", str(penta_table_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdin.write(b'{"dice": [1, 1, 3, 4, 6]}\n' * 3)
    proc.stdin.flush()
    answers = [proc.stdout.readline() for _ in range(3)]  # answered before the input ends
    assert all(json.loads(a)["dice"] == [1, 1, 3, 4, 6] for a in answers)
    time.sleep(0.2)
    interrupt(proc)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Interrupted: 3 lines were answered (lines 1 to 3)" in err


def test_stale_temporary_cleanup_spares_names_we_did_not_give(penta_table_dir, tmp_path):
    planted = tmp_path / ".r.parquet.2023-backup.tmp"
    planted.write_text("someone's backup")
    ours = tmp_path / ".r.parquet.999999999-abcdefgh.tmp"  # our pattern, a writer that does not exist
    ours.write_text("half")
    result = run("simulate", "-n", "10", "--out", str(tmp_path / "r.parquet"), "--data", str(penta_table_dir))
    assert result.exit_code == 0, result.output
    assert planted.exists() and not ours.exists()


def test_play_whose_output_goes_away_still_saves(penta_table_dir, tmp_path):
    save = tmp_path / "g.json"
    cmd = [*CLI, *PLAY, "--data", str(penta_table_dir), "--save", str(save)]
    proc = subprocess.run(
        ["bash", "-c", '"$@" | head -c 100 > /dev/null; exit "${PIPESTATUS[0]}"', "_", *cmd],
        input=b"best\n" * 200,
        capture_output=True,
    )
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert json.loads(save.read_text())["format"] == "pentadice-game"


def test_a_values_file_with_a_strange_header_or_tail(copy):
    values = copy / "penta.npy"
    good = values.read_bytes()
    values.write_bytes(good + b"\0" * 600_000)
    result = run("verify", "--data", str(copy))
    assert result.exit_code == 1 and "its metadata says: the file is damaged" in result.output
    values.write_bytes(b"\x93NUMPY\x01\x00\xff\xff" + b"\0" * 70_000)
    result = run("advise", "1", "1", "3", "4", "6", "--data", str(copy))
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert "allow_pickle" not in result.output


def test_a_table_directory_that_is_a_file(tmp_path):
    file = tmp_path / "file"
    file.write_text("")
    result = run("advise", "1", "1", "3", "4", "6", "--data", str(file))
    assert result.exit_code in (1, 2) and ("is not a directory" in result.output or "is a file" in result.output)
    from pentadice.tables.table import inventory

    assert set(inventory(file).values()) == {f"unusable: {file} is not a directory"}


def test_invisible_names_are_refused(penta_table_dir):
    result = run(*PLAY[:1], "--players", "\u200b", "--data", str(penta_table_dir), input="quit\n")
    assert result.exit_code == 2 and "no visible character" in result.output


def test_bad_input_files_get_one_line_without_the_usage_banner(penta_table_dir, tmp_path):
    data = ["--data", str(penta_table_dir)]
    for args in (
        ["advise", "1", "1", "3", "4", "6", "--sheet-file", str(tmp_path)],
        ["advise", "--batch", str(tmp_path / "missing.jsonl")],
        ["advise", "--batch", str(tmp_path)],
        ["play", "--resume", str(tmp_path)],
    ):
        result = run(*args, *data, input="quit\n")
        assert result.exit_code == 2, result.output
        assert "Usage:" not in result.output and result.output.startswith("Error: "), result.output


def test_a_sheet_file_with_bad_content_is_named(penta_table_dir, tmp_path):
    path = tmp_path / "sheet.json"
    path.write_text("{nope")
    result = run("advise", "1", "1", "3", "4", "6", "--sheet-file", str(path), "--data", str(penta_table_dir))
    assert result.exit_code == 2 and str(path) in result.output


def test_solve_takes_the_lock_before_solving(tmp_path, monkeypatch):
    solved = []
    monkeypatch.setattr("pentadice.solver.solve", lambda *a, **k: solved.append(1))
    with table.writer_lock(table.TableFiles(tmp_path, "penta")):
        result = run("solve", "--skip", "chances,win,win-end", "--data", str(tmp_path))
    assert result.exit_code == 1 and "another pentadice process is writing" in result.output
    assert solved == []


def test_numpy_short_write_is_reported_as_a_full_disk(tmp_path, monkeypatch, penta_solution):
    import numpy as np

    def short(fh, values, **kwargs):
        raise OSError("1048576 requested and 654832 written")

    monkeypatch.setattr(np.lib.format, "write_array", short)
    with pytest.raises(table.TableError, match="the disk is full"):
        table.save(get_rules("penta"), penta_solution.values, tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
