"""Table files: contents, metadata, memory-mapped loading, refusal of wrong or damaged tables, atomicity, a full
disk said."""

import errno
import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from pentadice.game import rules
from pentadice.game.rules import get_rules
from pentadice.tables import table


def test_saved_files_round_trip(penta_table_dir, penta_solution):
    t = table.load(rules.get_rules("penta"), penta_table_dir)
    assert not isinstance(t.values, np.memmap)  # read into memory, checked: out of reach of the file from now on
    assert t.values.tobytes() == penta_solution.values.tobytes()
    assert t.expected_score == penta_solution.expected_score
    assert t.meta["rules"] == "penta" and t.meta["solver_version"].startswith("pentadice ")
    assert t.meta["states"] == penta_solution.states_solved
    everything = penta_solution.rules.box_mask
    assert t.value(everything, 0, False) == penta_solution.expected_score
    assert np.isnan(t.value(everything, 0, True))


def test_parquet_has_one_named_row_per_solved_state(penta_table_dir, penta_solution):
    pf = pq.read_table(penta_table_dir / "penta.parquet")
    assert pf.column_names == ["open_mask", "open_boxes", "open_count", "upper_subtotal", "penta_50", "value"]
    assert pf.num_rows == penta_solution.states_solved
    meta = json.loads(pf.schema.metadata[b"pentadice"])
    on_disk = json.loads((penta_table_dir / "penta.json").read_text())
    assert on_disk.pop("parquet_checksum").startswith("sha256:")  # of the file itself: not inside it
    assert on_disk.pop("array")["kind"] == "values"  # the .npy file's chunk record, written after the Parquet
    assert meta == on_disk
    rows = pf.to_pylist()
    rs = penta_solution.rules
    start = [r for r in rows if r["open_mask"] == rs.box_mask]
    assert len(start) == 1 and start[0]["value"] == penta_solution.expected_score
    assert start[0]["open_boxes"] == " ".join(rs.box_ids) and start[0]["open_count"] == 13
    v = penta_solution.values
    for r in rows[::9973]:
        assert v[int(r["penta_50"]), r["open_mask"], r["upper_subtotal"]] == r["value"]
        assert r["open_boxes"].split() == rs.boxes_of(r["open_mask"])


def test_missing_table_is_named(tmp_path):
    with pytest.raises(table.TableError, match=r"no penta table in .* run `pentadice solve --rules penta"):
        table.load(rules.get_rules("penta"), tmp_path)


def test_table_of_another_rule_set_is_refused(tmp_path, penta_table_dir):
    for suffix in (".npy", ".json"):
        shutil.copy(penta_table_dir / f"penta{suffix}", tmp_path / f"yahtzee{suffix}")
    with pytest.raises(table.TableError, match="holds the 'penta' rule set, not 'yahtzee'"):
        table.load(rules.get_rules("yahtzee"), tmp_path)


def test_corrupt_table_is_refused(tmp_path, penta_table_dir):
    for name in ("penta.npy", "penta.json"):
        shutil.copy(penta_table_dir / name, tmp_path / name)
    with open(tmp_path / "penta.npy", "r+b") as fh:
        fh.seek(4_000_000)
        byte = fh.read(1)
        fh.seek(4_000_000)
        fh.write(bytes([byte[0] ^ 1]))
    with pytest.raises(table.TableError, match="does not match its checksum"):
        table.load(rules.get_rules("penta"), tmp_path)


def test_truncated_table_is_refused(tmp_path, penta_table_dir):
    shutil.copy(penta_table_dir / "penta.json", tmp_path / "penta.json")
    (tmp_path / "penta.npy").write_bytes((penta_table_dir / "penta.npy").read_bytes()[:1000])
    with pytest.raises(table.TableError, match="1,000 bytes, not the 8,388,736 its metadata says: the file is damaged"):
        table.load(rules.get_rules("penta"), tmp_path)


def test_garbage_metadata_is_refused(tmp_path, penta_table_dir):
    shutil.copy(penta_table_dir / "penta.npy", tmp_path / "penta.npy")
    (tmp_path / "penta.json").write_text("{not json")
    with pytest.raises(table.TableError, match="cannot be read"):
        table.load(rules.get_rules("penta"), tmp_path)


def test_write_failure_leaves_nothing_behind(tmp_path, penta_solution, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("pentadice.tables.table.write_parquet", full_disk)
    with pytest.raises(table.TableError, match="the disk is full"):
        table.save(penta_solution.rules, penta_solution.values, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".penta.lock"]


def test_interrupt_while_writing_leaves_nothing_behind(tmp_path, penta_solution, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("pentadice.tables.table.write_parquet", interrupted)
    with pytest.raises(KeyboardInterrupt):
        table.save(penta_solution.rules, penta_solution.values, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".penta.lock"]


def test_a_failed_rewrite_keeps_the_old_table_whole(tmp_path, penta_solution, monkeypatch):
    table.save(penta_solution.rules, penta_solution.values, tmp_path)

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("pentadice.tables.table.write_parquet", full_disk)
    with pytest.raises(table.TableError):
        table.save(penta_solution.rules, np.zeros_like(penta_solution.values), tmp_path)
    assert table.load(penta_solution.rules, tmp_path).expected_score == penta_solution.expected_score


def test_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path, penta_solution):
    files = table.TableFiles(tmp_path, "penta")
    with table.writer_lock(files), pytest.raises(table.TableError, match="another pentadice process is writing"):
        table.save(penta_solution.rules, penta_solution.values, tmp_path)
    assert not files.values.exists()


def test_unwritable_directory_is_named(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(table.TableError, match="cannot write tables to"):
        table.prepare_directory(blocker / "tables")


def test_numpy_short_write_is_reported_as_a_full_disk(tmp_path, monkeypatch, penta_solution):
    import numpy as np

    def short(fh, values, **kwargs):
        raise OSError("1048576 requested and 654832 written")

    monkeypatch.setattr(np.lib.format, "write_array", short)
    with pytest.raises(table.TableError, match="the disk is full"):
        table.save(get_rules("penta"), penta_solution.values, tmp_path)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
