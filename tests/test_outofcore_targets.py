"""The target table built out of core (``pentadice build --table targets``, :mod:`pentadice.tables.
targets_store`) on reduced games: on a 2-worker Dask cluster and in process it writes the files ``solve
--targets`` writes, byte for byte; an interrupted build resumes to the same bytes (a damaged chunk or layer
computed again); a worker killed mid-task is retried; a damaged finished table is refused by `verify` and
`advise --target`, and built again; the disk is checked first, a full disk mid-chunk is said and resumed from."""

from __future__ import annotations

import errno
import json
import os
import shutil

import numpy as np
import outofcore_games
import pytest
import reduced_games
from click.testing import CliRunner
from outofcore_games import flip, stop_after

from pentadice.cluster import engine, tasks
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.solver import targets as kernel
from pentadice.tables import chunks, targets, targets_store
from pentadice.tables.win_store import StoreError

GAMES = {
    **outofcore_games.GAMES,
    # Kiriki: a state comes back to itself (its row reads its own lanes).
    "kiriki": reduced_games.GAMES["kiriki, 2 dice, 3 boxes"],
}
CHUNK = 3000  # lanes a task: the wider layers of these games in several chunks


_references: dict[str, dict[str, bytes]] = {}


def reference(name: str, tmp_path_factory) -> dict[str, bytes]:
    """The files `solve --targets` writes (built in memory), as bytes: built once a game."""
    if name not in _references:
        rs = GAMES[name]
        directory = tmp_path_factory.mktemp(f"reference-{name}")
        targets.solve_and_save(rs, directory)
        _references[name] = table_bytes(rs, directory)
    return _references[name]


def table_bytes(rs: rules.RuleSet, directory) -> dict[str, bytes]:
    files = targets.TargetFiles(directory, rs.name)
    return {"data": files.data.read_bytes(), "index": files.index.read_bytes()}


def build(name: str, directory, **options) -> dict:
    return engine.build_targets(GAMES[name], directory, **{"workers": 0, "chunk": CHUNK, **options})


@pytest.mark.parametrize("name", GAMES)
def test_the_bounds_are_the_kernels(name):
    rs = GAMES[name]
    for layer in targets_store.layers(rs):
        loop = [kernel.bound(rs, f, m, s) + 1 for f, m, s in zip(layer.flags, layer.masks, layer.subs, strict=True)]
        np.testing.assert_array_equal(layer.alloc, loop)


def test_chunks_follow_the_memory_budget():
    rs = GAMES["yatzy"]
    assert targets_store.make(rs, 1 << 20, 2).chunk_lanes == targets_store.MIN_CHUNK_LANES
    assert targets_store.make(rs, 1 << 28, 2).chunk_lanes == (1 << 28) // 2 // 2 // 16
    assert targets_store.make(rs, 1 << 40, 2).chunk_lanes == targets_store.MAX_CHUNK_LANES
    plan = targets_store.make(rs, chunk=CHUNK)
    for cuts, layer in zip(plan.cuts, targets_store.layers(rs), strict=True):
        ends = np.cumsum(layer.alloc)[np.array(cuts[1:]) - 1]
        starts = np.concatenate(([0], ends[:-1]))
        sizes = ends - starts
        # Every chunk within the budget, but for a chunk of one state whose row alone is larger.
        assert all(s <= CHUNK or b - a == 1 for s, a, b in zip(sizes, cuts, cuts[1:], strict=False))
    assert any(len(c) > 2 for c in plan.cuts)  # a layer of several chunks


@pytest.mark.parametrize("name", GAMES)
def test_a_build_on_a_two_worker_cluster_writes_the_files_solve_writes(tmp_path, tmp_path_factory, name, scheduler):
    rs = GAMES[name]
    summary = build(name, tmp_path, scheduler=scheduler)
    assert summary["built"] and summary["tasks_run"] == summary["tasks"] > len(targets_store.layers(rs))
    assert table_bytes(rs, tmp_path) == reference(name, tmp_path_factory)  # byte for byte
    assert targets.load(rs, tmp_path, verify=True).meta["rules"] == rs.name
    assert not targets_store.store_of(tmp_path, rs.name).root.exists()  # the work folder removed
    assert build(name, tmp_path, scheduler=scheduler)["built"] is False  # whole: checked and left alone


def test_a_build_in_this_process_is_the_same_bytes(tmp_path, tmp_path_factory):
    summary = build("maxi-yatzy", tmp_path)
    assert summary["built"] and summary["dashboard"] is None
    assert table_bytes(GAMES["maxi-yatzy"], tmp_path) == reference("maxi-yatzy", tmp_path_factory)


def test_an_interrupted_build_resumes_from_its_chunks_to_the_same_bytes(tmp_path, tmp_path_factory):
    name, rs = "penta", GAMES["penta"]
    total = targets_store.make(rs, chunk=CHUNK).n_tasks
    with pytest.raises(KeyboardInterrupt):
        build(name, tmp_path, progress=stop_after(total // 2))
    s = targets_store.store_of(tmp_path, rs.name)
    assert not targets.TargetFiles(tmp_path, rs.name).meta.exists()  # nothing a reader would take for a table
    assert list(s.root.glob("L*.merged.json")) and list(s.root.glob("L*/*.npy"))
    damaged = sorted(s.root.glob("L*/*.rows.npy"))[0]  # a chunk damaged while the build was stopped
    flip(damaged, damaged.stat().st_size - 3)
    summary = build(name, tmp_path)
    assert 0 < summary["tasks_resumed"] < summary["tasks"]
    assert summary["tasks_run"] + summary["tasks_resumed"] == summary["tasks"]
    assert table_bytes(rs, tmp_path) == reference(name, tmp_path_factory)


def test_damaged_rows_of_the_last_layer_merged_are_built_again(tmp_path, tmp_path_factory):
    """The rows a layer reads are those of the layer below, merged: damaged, the build goes back to the first
    layer (the rows below them are removed as a build goes)."""
    name, rs = "yatzy", GAMES["yatzy"]
    total = targets_store.make(rs, chunk=CHUNK).n_tasks
    with pytest.raises(KeyboardInterrupt):
        build(name, tmp_path, progress=stop_after(total * 2 // 3))
    s = targets_store.store_of(tmp_path, rs.name)
    (rows,) = s.root.glob("L*.rows.npy")  # only the last layer merged keeps its float64 rows
    flip(rows, rows.stat().st_size // 2)
    summary = build(name, tmp_path)
    assert summary["tasks_run"] == summary["tasks"] - summary["tasks_resumed"] > total // 2
    assert table_bytes(rs, tmp_path) == reference(name, tmp_path_factory)


def test_a_worker_killed_mid_task_is_run_again_by_dask(tmp_path, tmp_path_factory, scheduler):
    from dask.distributed import Client

    name, rs = "yatzy", GAMES["yatzy"]
    plan = targets_store.make(rs, chunk=CHUNK)
    victim = plan.tasks(len(plan.cuts) // 2)[1]
    marker = tmp_path / "killed"
    with Client(scheduler) as client:  # the running workers are told to die in that task (the first to run it)
        spec = f"{victim.key}:{marker}"
        client.run(lambda: os.environ.__setitem__(tasks.CHAOS, spec))  # a lambda runs there, on their os.environ
        try:
            summary = build(name, tmp_path / "t", scheduler=scheduler)
        finally:
            client.run(lambda: os.environ.pop(tasks.CHAOS, None))
    assert marker.exists()  # a worker did die in that task
    assert summary["tasks_run"] == summary["tasks"]
    assert table_bytes(rs, tmp_path / "t") == reference(name, tmp_path_factory)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_a_damaged_table_is_refused_by_verify_and_advise_then_built_again(tmp_path, tmp_path_factory, monkeypatch):
    """Through the commands: `build --table targets`, then a flipped byte refused, then built again."""
    from pentadice.solver import induction
    from pentadice.tables import table

    name, rs = "penta", GAMES["penta"]
    monkeypatch.setitem(rules.REGISTRY, "penta", rs)
    table.save(rs, induction.solve(rs).values, tmp_path)
    command = ["build", "--table", "targets", "--workers", "0", "--chunk", CHUNK, "--data", tmp_path]
    done = run(*command, "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["built"] is True
    advise = ["advise", "1", "1", "3", "4", "6", "--target", "40", "--data", tmp_path]
    intact = run(*advise)
    assert intact.exit_code == 0, intact.output
    data = targets.TargetFiles(tmp_path, rs.name).data
    flip(data, data.stat().st_size - 5)
    for command_line in (["verify", "--data", tmp_path], advise):
        refused = run(*command_line)
        assert refused.exit_code == 1 and "damaged" in refused.stderr, (command_line, refused.output)
    again = run(*command)
    assert again.exit_code == 0 and "building it again" in again.stderr, again.output
    assert table_bytes(rs, tmp_path) == reference(name, tmp_path_factory)
    assert run(*advise).stdout == intact.stdout


def test_the_disk_is_checked_before_a_build(tmp_path, monkeypatch):
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9, 1000))
    with pytest.raises(StoreError, match=r"target table needs up to .* GB on the disk .* 0\.0 GB free"):
        build("yatzy", tmp_path)
    assert not targets_store.store_of(tmp_path, GAMES["yatzy"].name).root.exists()  # nothing written


def test_a_full_disk_mid_chunk_is_said_and_the_build_resumes(tmp_path, tmp_path_factory, monkeypatch):
    real = chunks.write_temp
    calls = [0]

    def full(final, array, kind_name):
        calls[0] += 1
        if calls[0] == 9:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(final, array, kind_name)

    monkeypatch.setattr(chunks, "write_temp", full)
    with pytest.raises(StoreError, match="is full: free some space, then run the same command again"):
        build("yatzy", tmp_path)
    monkeypatch.setattr(chunks, "write_temp", real)
    summary = build("yatzy", tmp_path)
    assert summary["tasks_resumed"] >= 4
    assert table_bytes(GAMES["yatzy"], tmp_path) == reference("yatzy", tmp_path_factory)


def test_a_folder_that_is_not_a_build_is_never_removed(tmp_path):
    root = targets_store.store_of(tmp_path, GAMES["yatzy"].name).root
    root.mkdir()
    (root / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="holds files that are not a target table's build"):
        build("yatzy", tmp_path)
    assert (root / "notes.txt").read_text() == "mine"
