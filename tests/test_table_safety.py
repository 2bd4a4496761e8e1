"""Table files under attack: edited metadata, damaged Parquet, odd files, signals in threads, many processes."""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pyarrow.parquet as pq
import pytest
from commands import run

from pentadice.game.rules import get_rules
from pentadice.tables import atomic, table

PENTA = get_rules("penta")


@pytest.fixture
def copy(tmp_path, penta_table_dir):
    """A private copy of the saved Penta table."""
    for p in penta_table_dir.iterdir():
        if not p.name.startswith("."):
            shutil.copy(p, tmp_path / p.name)
    return tmp_path


def edit_meta(directory, **changes):
    path = directory / "penta.json"
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


def test_edited_expected_score_is_refused(copy, penta_solution):
    edit_meta(copy, expected_score=999.0)
    with pytest.raises(table.TableError, match="does not agree with the values"):
        table.load(PENTA, copy)


def test_expected_score_comes_from_the_values(copy, penta_solution):
    t = table.load(PENTA, copy, verify=False)
    t.meta["expected_score"] = 1.0  # whatever the metadata says
    assert t.expected_score == penta_solution.expected_score


def test_deeply_nested_or_huge_metadata_is_refused(copy):
    (copy / "penta.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(table.TableError, match="nested more than"):
        table.load(PENTA, copy)
    (copy / "penta.json").write_bytes(b" " * (table.META_LIMIT + 1))
    with pytest.raises(table.TableError, match="larger than"):
        table.load(PENTA, copy)
    (copy / "penta.json").write_bytes(b'{"format": "\xff"}')
    with pytest.raises(table.TableError, match="not UTF-8"):
        table.load(PENTA, copy)


def test_metadata_that_is_not_a_regular_file_is_refused_without_hanging(copy):
    (copy / "penta.json").unlink()
    os.mkfifo(copy / "penta.json")
    with pytest.raises(table.TableError, match="not a regular file"):
        table.load(PENTA, copy)


def test_parquet_export_is_verified(copy, penta_solution):
    values, meta = table.read_parquet(copy / "penta.parquet")
    assert np.array_equal(values, penta_solution.values, equal_nan=True) and meta["rules"] == "penta"
    assert table.verify(PENTA, copy).files.parquet == copy / "penta.parquet"
    assert pq.ParquetFile(copy / "penta.parquet").metadata.num_rows == penta_solution.states_solved


def test_flipped_bytes_in_the_parquet_file_are_caught(copy):
    data = bytearray((copy / "penta.parquet").read_bytes())
    data[len(data) // 3] ^= 0xFF
    (copy / "penta.parquet").write_bytes(bytes(data))
    with pytest.raises(table.TableError):
        table.read_parquet(copy / "penta.parquet")
    with pytest.raises(table.TableError):
        table.verify(PENTA, copy)


def test_parquet_rows_rewritten_consistently_still_fail_the_values_checksum(copy, tmp_path_factory):
    """A file rewritten with one value changed has valid page checksums; the SHA-256 of the values catches it."""
    arrow = pq.read_table(copy / "penta.parquet")
    values = arrow.column("value").to_numpy().copy()
    values[0] += 1e-9
    edited = arrow.set_column(arrow.schema.get_field_index("value"), "value", [values])
    path = tmp_path_factory.mktemp("edited") / "penta.parquet"
    pq.write_table(edited, path, write_page_checksum=True)
    with pytest.raises(table.TableError, match="does not match its checksum"):
        table.read_parquet(path)


def test_ctrl_c_in_a_worker_thread_during_the_renames_never_mixes_tables(tmp_path, penta_solution, monkeypatch):
    """SIGINT delivered to another thread (as Numba's workers may receive it) while the files are renamed: the
    renames all go through, and the interrupt comes after, saying so."""
    worker_ready = threading.Event()
    stop = threading.Event()
    worker = threading.Thread(target=lambda: (worker_ready.set(), stop.wait(30)))
    worker.start()
    worker_ready.wait()
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        if not calls:
            signal.pthread_kill(worker.ident, signal.SIGINT)
            time.sleep(0.05)
        calls.append(dst)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    try:
        with pytest.raises(atomic.CommittedInterrupt):
            table.save(PENTA, penta_solution.values, tmp_path)
    finally:
        stop.set()
        worker.join()
    assert len(calls) == 3
    monkeypatch.setattr(os, "replace", real_replace)
    assert table.load(PENTA, tmp_path).expected_score == penta_solution.expected_score


def test_processes_needing_a_missing_table_wait_for_the_one_solving_it(tmp_path):
    """Six `pentadice advise` at once on an empty table directory: one solves, the others wait; all answer."""
    cmd = [
        sys.executable,
        "-m",
        "pentadice",
        "advise",
        "1",
        "1",
        "3",
        "4",
        "6",
        "--json",
        "--data",
        str(tmp_path),
    ]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(6)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err
        assert json.loads(out)["best"]["action"] == "keep"
        assert "Traceback" not in err
    assert table.load(PENTA, tmp_path).meta["states"] == 536_448


def test_table_files_that_are_not_regular_files_are_refused_before_solving(tmp_path, penta_solution):
    os.mkfifo(tmp_path / "penta.parquet")
    with pytest.raises(table.TableError, match="not a regular file"):
        table.save(PENTA, penta_solution.values, tmp_path)
    assert (tmp_path / "penta.parquet").is_fifo() and not (tmp_path / "penta.npy").exists()
    with pytest.raises(table.TableError, match="not a regular file"):
        table.load_or_solve(PENTA, tmp_path, lambda: pytest.fail("solved before the check"))


def test_table_files_behind_symlinks_are_written_through_them(tmp_path, penta_solution):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "penta.npy").symlink_to(elsewhere / "penta.npy")
    table.save(PENTA, penta_solution.values, tables)
    assert (tables / "penta.npy").is_symlink() and (elsewhere / "penta.npy").is_file()
    assert table.load(PENTA, tables).expected_score == penta_solution.expected_score


def test_verify_command_checks_every_file(copy):
    from click.testing import CliRunner

    from pentadice.faces.cli import main

    ok = CliRunner().invoke(main, ["verify", "--data", str(copy)])
    assert ok.exit_code == 0, ok.output
    assert "is whole" in ok.output and "sha256:" in ok.output
    data = bytearray((copy / "penta.parquet").read_bytes())
    data[-100] ^= 0x01
    (copy / "penta.parquet").write_bytes(bytes(data))
    bad = CliRunner().invoke(main, ["verify", "--data", str(copy)])
    assert bad.exit_code == 1 and "Usage:" not in bad.output and "penta.parquet" in bad.output


def test_a_value_table_that_is_a_link_to_a_device_says_to_remove_it(tmp_path, penta_table_dir):
    data = tmp_path / "linked"
    shutil.copytree(penta_table_dir, data)
    (data / "penta.npy").unlink()
    (data / "penta.npy").symlink_to("/dev/zero")
    result = run("advise", "11346", "--data", str(data))
    assert result.exit_code == 1
    # What it is, and what to do in order: solving alone would be refused (nothing is written through a link).
    assert "is a symbolic link to /dev/zero (a device), not a regular file: remove it, then run `pentadice solve" in (
        result.stderr
    )


def test_verify_refuses_a_parquet_file_that_is_not_regular(copy):
    (copy / "penta.parquet").unlink()
    os.mkfifo(copy / "penta.parquet")
    result = run("verify", "--data", str(copy))
    assert result.exit_code == 1 and "not a regular file" in result.output


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
    from pentadice.tables.inventory import inventory

    assert set(inventory(file).values()) == {f"unusable: {file} is not a directory"}
