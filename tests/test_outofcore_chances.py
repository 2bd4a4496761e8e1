"""The chances table built out of core (``pentadice build --table chances``, :mod:`pentadice.tables.
chances_store`) on reduced games: on a 2-worker Dask cluster and in process it writes the files ``solve`` writes,
byte for byte; an interrupted build resumes to the same bytes (a damaged chunk, damaged rows of a layer computed
again); a damaged finished table is refused by `verify` and built again; a table of other values is not taken;
the disk is checked first; Kiriki is refused. (A worker killed mid-task: the same runner as the target table's and
the win tables', tests/test_outofcore_targets.py.)"""

from __future__ import annotations

import functools
import json

import numpy as np
import outofcore_games
import pytest
from click.testing import CliRunner
from outofcore_games import flip, stop_after

from pentadice.cluster import engine
from pentadice.faces.cli import main
from pentadice.game import rules
from pentadice.players import prepared
from pentadice.solver import induction, remaining
from pentadice.tables import chance_tables, chances_store, table
from pentadice.tables.win_store import StoreError

GAMES = outofcore_games.GAMES
CHUNK = 8  # states a task: several chunks a layer


@functools.cache
def solved(name: str) -> np.ndarray:
    return induction.solve(GAMES[name]).values


@functools.cache
def reference(name: str) -> dict[str, bytes]:
    """The files of the chances table as `solve` writes them (the pass in memory), as bytes."""
    import tempfile

    rs = GAMES[name]
    with tempfile.TemporaryDirectory() as d:
        table.save(rs, solved(name), d)
        chance_tables.save(rs, d, remaining.solve(rs, solved(name)), solved(name))
        return table_bytes(rs, d)


def table_bytes(rs: rules.RuleSet, directory) -> dict[str, bytes]:
    data, index, _ = chance_tables.saved_paths(rs, directory)
    return {"data": data.read_bytes(), "index": index.read_bytes()}


def table_dir(tmp_path, name: str):
    directory = tmp_path / name
    directory.mkdir()
    table.save(GAMES[name], solved(name), directory)
    return directory


def build(name: str, directory, **options) -> dict:
    return engine.build_chances(GAMES[name], directory, solved(name), **{"workers": 0, "chunk": CHUNK, **options})


@pytest.mark.parametrize("name", GAMES)
def test_a_build_on_a_two_worker_cluster_writes_the_files_solve_writes(tmp_path, name, scheduler):
    rs = GAMES[name]
    directory = table_dir(tmp_path, name)
    summary = build(name, directory, scheduler=scheduler)
    assert summary["built"] and summary["tasks_run"] == summary["tasks"] > rs.n_boxes
    assert table_bytes(rs, directory) == reference(name)  # byte for byte
    assert chance_tables.verify(rs, directory, solved(name)) is not None
    assert not chances_store.store_of(directory, rs.name).root.exists()
    assert build(name, directory, scheduler=scheduler)["built"] is False


def test_a_build_in_this_process_is_the_same_bytes(tmp_path):
    directory = table_dir(tmp_path, "maxi-yatzy")
    assert build("maxi-yatzy", directory)["dashboard"] is None
    assert table_bytes(GAMES["maxi-yatzy"], directory) == reference("maxi-yatzy")


def test_an_interrupted_build_resumes_to_the_same_bytes(tmp_path):
    name, rs = "penta", GAMES["penta"]
    directory = table_dir(tmp_path, name)
    total = chances_store.make(rs, chunk=CHUNK).n_tasks
    with pytest.raises(KeyboardInterrupt):
        build(name, directory, progress=stop_after(total // 2))
    s = chances_store.store_of(directory, rs.name)
    assert not chance_tables.is_saved(rs, directory, solved(name))
    damaged = sorted(s.root.glob("L*/*.rows.npy"))[0]
    flip(damaged, damaged.stat().st_size - 3)
    summary = build(name, directory)
    assert 0 < summary["tasks_resumed"] < summary["tasks"]
    assert summary["tasks_run"] + summary["tasks_resumed"] == summary["tasks"]
    assert table_bytes(rs, directory) == reference(name)
    # Stopped again later, the rows the next layer reads damaged: back to the first layer, the same bytes.
    for f in chance_tables.saved_paths(rs, directory):
        f.unlink()
    with pytest.raises(KeyboardInterrupt):
        build(name, directory, progress=stop_after(total * 2 // 3))
    (rows,) = s.root.glob("L*.rows.npy")
    flip(rows, rows.stat().st_size // 2)
    summary = build(name, directory)
    assert summary["tasks_run"] == summary["tasks"] - summary["tasks_resumed"] > total // 2
    assert table_bytes(rs, directory) == reference(name)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_a_damaged_table_is_refused_by_verify_then_built_again(tmp_path, monkeypatch):
    name, rs = "yatzy", GAMES["yatzy"]
    monkeypatch.setitem(rules.REGISTRY, "yatzy", rs)
    directory = table_dir(tmp_path, name)
    command = ["build", "--rules", "yatzy", "--table", "chances", "--workers", "0", "--chunk", CHUNK]
    done = run(*command, "--data", directory, "--json")
    assert done.exit_code == 0 and json.loads(done.stdout)["built"] is True, done.output
    data = chance_tables.saved_paths(rs, directory)[0]
    flip(data, data.stat().st_size - 5)
    refused = run("verify", "--rules", "yatzy", "--data", directory)
    assert refused.exit_code == 1 and "damaged" in refused.stderr, refused.output
    again = run(*command, "--data", directory)
    assert again.exit_code == 0 and "building it again" in again.stderr, again.output
    assert table_bytes(rs, directory) == reference(name)


def test_a_table_of_other_values_is_not_taken_and_the_workers_read_the_plans_values(tmp_path):
    rs = GAMES["penta"]
    directory = table_dir(tmp_path, "penta")
    build("penta", directory)
    other = solved("penta").copy()
    other[0, rs.box_mask, 0] += 1.0
    assert not chance_tables.is_saved(rs, directory, other)  # the table built is of the values saved
    with pytest.raises(StoreError, match="changed during"):  # values passed that are not the saved ones
        engine.build_chances(rs, tmp_path / "penta", other, workers=0, chunk=CHUNK)


def test_the_disk_is_checked_before_a_build_and_kiriki_is_refused(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    directory = table_dir(tmp_path, "yatzy")
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9, 1000))
    with pytest.raises(StoreError, match=r"chances table needs up to .* GB on the disk"):
        build("yatzy", directory)
    assert not chances_store.store_of(directory, GAMES["yatzy"].name).root.exists()
    kiriki = rules.get_rules("kiriki")
    with pytest.raises(ValueError, match="no chances table"):
        engine.build_chances(kiriki, tmp_path, np.zeros(kiriki.table_shape))


def test_maxi_yatzys_chances_apply_once_built_out_of_core(tmp_path):
    rs = rules.get_rules("maxi-yatzy")
    assert "`pentadice build --table chances`" in prepared.applicable(rs, directory=tmp_path)["chances"]
    chance_tables.saved_paths(rs, tmp_path)[2].write_text("{}")  # its metadata there: held, checked when read
    assert prepared.applicable(rs, directory=tmp_path)["chances"] is None


def test_a_layer_record_changed_on_disk_is_not_trusted(tmp_path):
    """Where a layer's rows lie in the table (its record's ``base``) is read by the next layer's tasks: changed,
    the layer is computed again rather than the table built on a wrong place."""
    name, rs = "yatzy", GAMES["yatzy"]
    directory = table_dir(tmp_path, name)
    plan = chances_store.make(rs, chunk=CHUNK)
    with pytest.raises(KeyboardInterrupt):
        build(name, directory, progress=stop_after(plan.n_tasks // 2))
    s = chances_store.store_of(directory, rs.name)
    record = sorted(s.root.glob("L*.merged.json"))[-1]
    meta = json.loads(record.read_text())
    assert chances_store.layer_merged(s, plan, meta["layer"])
    record.write_text(json.dumps({**meta, "base": meta["base"] + 1}))
    assert not chances_store.layer_merged(s, plan, meta["layer"])
    summary = build(name, directory)
    assert summary["tasks_resumed"] < plan.n_tasks // 2 + len(plan.tasks(meta["layer"]))
    assert table_bytes(rs, directory) == reference(name)
