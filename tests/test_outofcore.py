"""Out-of-core builds (:mod:`pentadice.cluster`) on reduced games: on a 2-worker Dask ``LocalCluster`` and in
process, the win tables are the bits of the tables solved in memory; an interrupted build resumes to the same bits;
a worker killed mid-task is retried; a damaged chunk is found and refused, and the build repairs it; the disk is
checked before a build, and a full disk mid-chunk is said and resumed from."""

from __future__ import annotations

import errno
import functools
import os

import numpy as np
import outofcore_games
import pytest
from outofcore_games import flip, stop_after

from pentadice.cluster import engine, tasks
from pentadice.game import rules
from pentadice.players import win
from pentadice.solver import induction, utility
from pentadice.tables import chunks, table, win_plan
from pentadice.tables import win_store as store

GAMES = outofcore_games.GAMES
SMALL_MEMORY = 1 << 26  # 64 MiB for the workers
CHUNK = 8  # box masks a task: the wider layers of these games in several chunks


@functools.cache
def solved(name: str) -> np.ndarray:
    return induction.solve(GAMES[name]).values


@functools.cache
def in_memory(name: str) -> np.ndarray:
    """The slots as the win strategy solves them in memory: the values, then each theta's utility table."""
    rs = GAMES[name]
    thetas = win.stored_thetas(rs)
    return np.stack([win.padded(rs, solved(name)), *(utility.solve_theta(rs, t) for t in thetas[1:])])


def table_dir(tmp_path, name: str):
    directory = tmp_path / name
    directory.mkdir()
    table.save(GAMES[name], solved(name), directory)
    return directory


def build(name: str, directory, workers: int = 0, progress: engine.Progress | None = None, scheduler=None) -> dict:
    return engine.build(GAMES[name], directory, solved(name), scheduler, workers, SMALL_MEMORY, progress, chunk=CHUNK)


def opened(name: str, directory) -> store.Opened:
    found = store.open_win(GAMES[name], directory, solved(name))
    assert found is not None
    return found


def test_chunks_follow_the_memory_budget():
    rs = rules.get_rules("maxi-yatzy")
    assert win_plan.make(rs, win.stored_thetas(rs), 1 << 20, 2).chunk == win_plan.MIN_CHUNK
    assert win_plan.make(rs, win.stored_thetas(rs), 1 << 40, 2).chunk == win_plan.MAX_CHUNK
    assert win_plan.make(rs, win.stored_thetas(rs), 1 << 26, 2).chunk == (1 << 26) // 2 // 2 // (
        80 * 8 + win_plan.PAGE
    )  # 3,542
    plan = win_plan.make(GAMES["yatzy"], win.stored_thetas(GAMES["yatzy"]), chunk=CHUNK)
    assert any(len(c) > 2 for c in plan.cuts)  # a layer of several chunks: merged from several files
    assert plan.n_tasks == sum(len(c) - 1 for c in plan.cuts) * (len(plan.thetas) - 1)


@pytest.mark.parametrize("name", GAMES)
def test_a_build_on_a_two_worker_cluster_is_the_tables_solved_in_memory(tmp_path, name, scheduler):
    directory = table_dir(tmp_path, name)
    said = []
    summary = build(name, directory, progress=engine.Progress(say=said.append), scheduler=scheduler)
    assert summary["built"] and summary["tasks_run"] == summary["tasks"] > 0
    assert summary["dashboard"].startswith("http") and any(summary["dashboard"] in s for s in said)
    got = opened(name, directory)
    np.testing.assert_array_equal(got.array, in_memory(name))  # bit for bit (NaN where no state is)
    assert got.meta["values_checksum"] == store.values_checksum(GAMES[name], solved(name))
    # Asked again: checked whole and left alone.
    assert build(name, directory, scheduler=scheduler)["built"] is False


def test_a_build_in_this_process_is_the_same_bits(tmp_path):
    """Without Dask (`--workers 0`): the same tables, the same SHA-256 as on the cluster's."""
    name = "yatzy"
    directory = table_dir(tmp_path, name)
    summary = build(name, directory)
    assert summary["built"] and summary["dashboard"] is None
    np.testing.assert_array_equal(opened(name, directory).array, in_memory(name))


def test_an_interrupted_build_resumes_from_its_chunks_to_the_same_bits(tmp_path):
    name = "yatzy"
    directory = table_dir(tmp_path, name)
    total = win_plan.make(GAMES[name], win.stored_thetas(GAMES[name]), chunk=CHUNK).n_tasks
    with pytest.raises(KeyboardInterrupt):
        build(name, directory, progress=stop_after(total // 2))
    s = store.Store(directory, GAMES[name].name)
    assert not s.meta.exists()  # not finished: nothing reads it
    assert store.finished_meta(GAMES[name], directory) is None
    assert list(s.root.glob("L*.merged.json")) and list(s.root.glob("L*/*.npy"))
    # A chunk damaged while the build was stopped is computed again, not merged.
    damaged = sorted(s.root.glob("L*/*.npy"))[0]
    raw = bytearray(damaged.read_bytes())
    raw[-3] ^= 0xFF
    damaged.write_bytes(bytes(raw))
    summary = build(name, directory)
    assert 0 < summary["tasks_resumed"] < summary["tasks"]
    assert summary["tasks_run"] + summary["tasks_resumed"] == summary["tasks"]
    np.testing.assert_array_equal(opened(name, directory).array, in_memory(name))
    assert not list(s.root.glob("L*/"))  # every layer merged: no chunk file left


def test_a_worker_killed_mid_task_is_run_again_by_dask(tmp_path, monkeypatch):
    """On the cluster a build starts of its own (``LocalCluster``, as `pentadice build` does by default)."""
    name = "penta"
    directory = table_dir(tmp_path, name)
    plan = win_plan.make(GAMES[name], win.stored_thetas(GAMES[name]), chunk=CHUNK)
    victim = plan.tasks(len(plan.cuts) // 2)[3]
    marker = tmp_path / "killed"
    monkeypatch.setenv(tasks.CHAOS, f"{victim.key}:{marker}")  # the workers inherit it
    summary = build(name, directory, workers=2)
    assert marker.exists()  # a worker did die in that task
    assert summary["tasks_run"] == summary["tasks"]
    np.testing.assert_array_equal(opened(name, directory).array, in_memory(name))


@pytest.fixture(scope="module")
def built_penta(tmp_path_factory):
    directory = table_dir(tmp_path_factory.mktemp("store"), "penta")
    build("penta", directory)
    return directory


def test_a_damaged_chunk_is_found_by_verify_and_refused_then_repaired(tmp_path, built_penta):
    import shutil

    name, rs = "penta", GAMES["penta"]
    directory = tmp_path / "copy"
    shutil.copytree(built_penta, directory)
    s = store.Store(directory, rs.name)
    mapped = np.load(s.array, mmap_mode="r")
    start_row = np.ravel_multi_index((mapped.shape[0] - 1, 0, rs.box_mask, 3), mapped.shape)
    flip(s.array, mapped.offset + 8 * int(start_row) + 6)  # the start state of the last slot (-h): the top layer
    del mapped
    with pytest.raises(store.StoreError, match="does not match its checksum"):
        store.verify(rs, directory, solved(name))
    with pytest.raises(store.StoreError, match="pentadice build"):
        store.open_win(rs, directory, solved(name))
    with pytest.MonkeyPatch.context() as mp, pytest.raises(table.TableError):  # refused rather than played from
        mp.setattr(win, "MAX_TABLE_BYTES", 0)
        win.build(rs, solved(name), directory=directory)
    said = []
    summary = build(name, directory, progress=engine.Progress(say=said.append))
    assert summary["built"] and any("repairing" in s for s in said)
    assert 0 < summary["tasks_run"] < summary["tasks"]  # from the damaged layer up, not everything
    np.testing.assert_array_equal(opened(name, directory).array, in_memory(name))
    assert store.verify(rs, directory, solved(name))[2]


def test_the_win_player_reads_the_store(built_penta, monkeypatch):
    name, rs = "penta", GAMES["penta"]
    monkeypatch.setattr(win, "MAX_TABLE_BYTES", 0)  # too large to build in memory, as Maxi Yatzy's: the store
    win._cache.clear()
    tables = win.build(rs, solved(name), directory=built_penta)
    assert tables.origin == "store"
    assert win.refusal(rs, built_penta) is None and "pentadice build" in win.refusal(rs, built_penta / "none")
    np.testing.assert_array_equal(tables.tables, in_memory(name)[: len(win.grid_thetas(rs))])
    expected = win.cumulant_variance(rs)  # the same two tables of +-h, solved in memory
    np.testing.assert_array_equal(tables.variance, np.where(np.isnan(tables.values), np.nan, expected))
    win._cache.clear()


def test_a_store_of_other_values_is_not_read_and_is_built_afresh(tmp_path, built_penta):
    import shutil

    rs = GAMES["penta"]
    directory = tmp_path / "copy"
    shutil.copytree(built_penta, directory)
    other = solved("penta").copy()
    other[0, rs.box_mask, 0] += 1.0
    assert store.open_win(rs, directory, other) is None
    plan = win_plan.make(rs, win.stored_thetas(rs), chunk=CHUNK)
    assert store.start(store.Store(directory, rs.name), plan, win.padded(rs, other), "sha256:other") == plan
    assert not store.Store(directory, rs.name).meta.exists()


def test_the_disk_is_checked_before_a_build(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    directory = table_dir(tmp_path, "yatzy")
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9, 1000))
    with pytest.raises(store.StoreError, match=r"need .* GB more on the disk .* 0\.0 GB free"):
        build("yatzy", directory)
    assert not store.Store(directory, GAMES["yatzy"].name).root.exists()  # refused before anything was written


def test_a_full_disk_mid_chunk_is_said_and_the_build_resumes(tmp_path, monkeypatch):
    directory = table_dir(tmp_path, "yatzy")
    real = chunks.write_temp
    calls = [0]

    def full(final, array, kind_name):
        calls[0] += 1
        if calls[0] == 20:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(final, array, kind_name)

    monkeypatch.setattr(chunks, "write_temp", full)
    with pytest.raises(store.StoreError, match="is full: free some space, then run the same command again"):
        build("yatzy", directory)
    monkeypatch.setattr(chunks, "write_temp", real)
    summary = build("yatzy", directory)
    assert summary["tasks_resumed"] >= 19
    np.testing.assert_array_equal(opened("yatzy", directory).array, in_memory("yatzy"))


def test_a_store_folder_that_is_not_ours_is_never_removed(tmp_path):
    rs = GAMES["yatzy"]
    directory = table_dir(tmp_path, "yatzy")
    root = store.Store(directory, rs.name).root
    root.mkdir()
    (root / "notes.txt").write_text("mine")
    with pytest.raises(store.StoreError, match="holds files that are not win tables"):
        build("yatzy", directory)
    assert (root / "notes.txt").read_text() == "mine"
    (root / "notes.txt").unlink()
    root.rmdir()
    (tmp_path / "elsewhere").mkdir()
    root.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(store.StoreError, match="is not a folder of win tables"):
        build("yatzy", directory)


def test_hostile_metadata_of_a_finished_store_is_refused(tmp_path, built_penta):
    import json
    import shutil

    rs = GAMES["penta"]
    directory = tmp_path / "copy"
    shutil.copytree(built_penta, directory)
    meta_path = store.Store(directory, rs.name).meta
    meta = json.loads(meta_path.read_text())
    for thetas in (["x"], [[1, 2]], [0.0]):
        meta_path.write_text(json.dumps({**meta, "thetas": thetas}))
        with pytest.raises(store.StoreError, match="does not hold the tables its metadata describes"):
            store.open_win(rs, directory, solved("penta"))
    meta_path.write_text(json.dumps({**meta, "array": {"kind": "values"}}))
    with pytest.raises(store.StoreError, match="no record"):
        store.open_win(rs, directory, solved("penta"))
    meta_path.write_bytes(b"\xff\xfe not json")
    assert store.open_win(rs, directory, solved("penta")) is None  # no finished store: built again by `build`
