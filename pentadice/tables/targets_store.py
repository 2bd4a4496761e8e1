"""The target table built out of core (:mod:`pentadice.cluster`): its plan and its work folder
``NAME.targets.build/`` beside the table directory's other files, until the finished table is written as the
same three files ``pentadice solve --targets`` writes (:mod:`pentadice.tables.targets`), byte for byte.

A target row's length varies from state to state (the points a state can still score), so the rows of a layer
cannot sit at fixed places in one array as the win tables' do; a layer's rows are a file of their own instead:

- ``plan.json``: the rule set, its definition and the chunks of each layer (``cuts``: states of
  :func:`pentadice.solver.targets.layers`, cut where a chunk's rows would pass ``chunk_lanes`` lanes), written
  first: a build resumed later uses the same chunks;
- ``work.npy``: int64 ``(2, *table_shape)``, per state of a merged layer where its float64 row starts in that
  layer's rows file and its length (``off``, ``ln``: what a task of the next layer reads, memory-mapped);
- ``index.npy``: int64 ``(3, *table_shape)``, the finished table's index (``first``, ``count``; the ``offset``
  is filled last, from the counts, in the order of the layers);
- ``L03/c00012.rows.npy``, ``.q.npy``, ``.json``: a chunk computed by a task: its rows in float64 (trimmed to
  their lengths, one after another), the same rows stored as the table stores them (uint16, :func:`pentadice.
  solver.targets.quantize`), and its record (the chunk's lengths, ``first`` and ``count`` with their CRC-32, and
  the two files' records of 64 KiB CRCs), each written under a temporary name and renamed, the record last;
- ``L03.rows.npy``, ``L03.q.npy``, ``L03.merged.json``: layer 3 merged (its files flushed, the work and index
  entries of its states written and flushed, then its record); its chunk files are removed then, and the rows
  file of the layer below (no task reads it any more).

``finish`` writes the table (``NAME.targets.npy``, ``-index.npy``, ``.json``) through :func:`pentadice.tables.
targets.write`, reads it back whole, and removes the work folder. The finished files are read and verified as
every target table is; a damaged one is built again.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.solver import targets as kernel
from pentadice.support.exits import TableError
from pentadice.tables import chunks, layer_store, table
from pentadice.tables.layer_store import ROWS_KIND, Task, crc
from pentadice.tables.win_store import StoreError, disk_error, read_json, write_json

FORMAT = "pentadice-targets-build"
KIND = "targets"
DEFAULT_MEMORY = 4 << 30
MIN_CHUNK_LANES = 1 << 16
MAX_CHUNK_LANES = 1 << 22  # 32 MB of float64 rows: a task of a few seconds (about 3 us a lane)


@dataclasses.dataclass(frozen=True)
class Plan:
    """An out-of-core build of the target table: its chunks (``cuts[layer]``, increasing from 0 to the layer's
    number of states) of at most ``chunk_lanes`` lanes of rows each (a state's row is never cut)."""

    rules: rules.RuleSet
    cuts: tuple[tuple[int, ...], ...]
    chunk_lanes: int
    lanes: tuple[int, ...]  # the lanes the rows of each layer are given room for (their bound: kernel.bound)

    def tasks(self, layer: int) -> list[Task]:
        return [Task(layer, c, lo, hi, KIND) for c, (lo, hi) in enumerate(itertools.pairwise(self.cuts[layer]))]

    @property
    def n_tasks(self) -> int:
        return sum(len(c) - 1 for c in self.cuts)

    @property
    def index_bytes(self) -> int:
        return 5 * 8 * int(np.prod(self.rules.table_shape))

    def needed_bytes(self) -> int:
        """The disk a build needs at most (a bound: a row's length is known once it is computed): the work and
        index files, two layers' float64 rows and a layer's chunk files at once, and the stored rows three times at
        the end (every layer's, gathered into one array, written as the finished table), with its index."""
        widest = max(self.lanes, default=0)
        pairs = max((a + b for a, b in itertools.pairwise(self.lanes)), default=widest)
        return (
            self.index_bytes
            + 8 * (pairs + widest)
            + 3 * 2 * sum(self.lanes)
            + 3 * 8 * int(np.prod(self.rules.table_shape))
        )

    def as_json(self) -> dict:
        return {"chunk_lanes": self.chunk_lanes, "cuts": [list(c) for c in self.cuts]}


@dataclasses.dataclass(frozen=True)
class Layer:
    """The states of one layer and the lanes their rows are given (``alloc``)."""

    flags: np.ndarray
    masks: np.ndarray
    subs: np.ndarray
    alloc: np.ndarray


@functools.cache
def layers(rs: rules.RuleSet) -> list[Layer]:
    """Every layer's states, in the order of :func:`pentadice.solver.targets.layers` (1 box open first)."""
    return [Layer(flags, masks, subs, bounds(rs, masks, subs) + 1) for flags, masks, subs in kernel.layers(rs)]


def bounds(rs: rules.RuleSet, masks: np.ndarray, subs: np.ndarray) -> np.ndarray:
    """:func:`pentadice.solver.targets.bound` of many states at once (Maxi Yatzy's 55 million: seconds, not the
    minutes of a call each)."""
    n = rs.n_boxes
    every = np.arange(1 << n, dtype=np.int64)
    bits = ((every[:, None] >> np.arange(n)) & 1).astype(np.int64)
    per_mask = bits @ np.array(kernel.box_max(rs), dtype=np.int64) + kernel.penta_bonus(rs) * bits.sum(axis=1)
    out = per_mask[masks] + np.where(((masks & rs.upper_mask) != 0) & (subs < rs.upper_threshold), rs.upper_bonus, 0)
    if rs.penta_repeat and rs.penta_box >= 0:
        out += kernel.repeats(rs) * rs.penta_points
    return out.astype(np.int64)


def chunk_lanes(memory: int, workers: int) -> int:
    """Lanes of rows a task computes: it holds them twice in float64 (its rows and their trimmed copy), within
    half of its worker's share of ``memory``."""
    return int(min(MAX_CHUNK_LANES, max(MIN_CHUNK_LANES, memory // max(workers, 1) // 2 // 16)))


def make(rs: rules.RuleSet, memory: int = DEFAULT_MEMORY, workers: int = 2, chunk: int | None = None) -> Plan:
    """The plan of ``rs``'s target table, chunks of at most ``chunk`` lanes (default: from ``memory`` shared by
    ``workers``)."""
    if chunk is not None and chunk < 1:
        raise ValueError(f"a chunk holds at least 1 lane, not {chunk}")
    chunk = chunk or chunk_lanes(memory, workers)
    cuts, lanes = [], []
    for layer in layers(rs):
        ends = np.cumsum(layer.alloc)
        cut = [0]
        while cut[-1] < len(ends):  # as many states as fit in the chunk, at least one
            base = int(ends[cut[-1] - 1]) if cut[-1] else 0
            cut.append(max(int(np.searchsorted(ends, base + chunk, side="right")), cut[-1] + 1))
        cuts.append(tuple(cut))
        lanes.append(int(ends[-1]))
    return Plan(rs, tuple(cuts), chunk, tuple(lanes))


def store_of(directory: Path, rules_name: str) -> layer_store.Store:
    """The work folder of a rule set's target table built out of core."""
    return layer_store.Store(Path(directory), rules_name, KIND, KIND)


def _from_json(rs: rules.RuleSet, data: dict, plan: Plan) -> Plan | None:
    try:
        cuts = tuple(tuple(int(x) for x in c) for c in data["cuts"])
        chunk = int(data["chunk_lanes"])
    except (KeyError, TypeError, ValueError):
        return None
    if len(cuts) != len(plan.cuts) or chunk < 1:
        return None
    for c, full in zip(cuts, plan.cuts, strict=True):
        if not c or c[0] != 0 or c[-1] != full[-1] or any(b <= a for a, b in itertools.pairwise(c)):
            return None
    return Plan(rs, cuts, chunk, plan.lanes)


def start(store: layer_store.Store, plan: Plan) -> Plan:
    """The plan to build: the one saved in the work folder when it is of the same rules (a build resumed), else
    ``plan`` with a new work folder (any old one removed): its plan file, then the work and index files with
    the game's end written, their disk reserved. The disk the whole build needs is checked first."""
    rs = plan.rules
    saved = read_json(store.plan_file, "the build's plan")
    definition = table.rules_definition(rs)
    if saved is not None and saved.get("rules_definition") == definition and store.work.is_file():
        resumed = _from_json(rs, saved, plan)
        if resumed is not None and store.index.is_file():
            return resumed
    layer_store.fresh_folder(store, saved, FORMAT, "target table", plan.needed_bytes())
    write_json(store.plan_file, {"format": FORMAT, "rules": rs.name, "rules_definition": definition, **plan.as_json()})
    shape = rs.table_shape
    try:
        for path, fields in ((store.work, 2), (store.index, 3)):
            tmp = path.with_name(f".{path.name}.new")
            array = chunks.create_mapped(tmp, (fields, *shape), "int64")
            if fields == 2:  # off, ln: the game's end is one lane, P = 1 (read from the first layer's "rows": [1.0])
                array[1, :, 0, :] = 1
            else:  # first, count: -1 where no state is; the game's end: first 1, nothing stored
                array[0] = -1
                array[0, :, 0, :] = 1
            array.flush()
            del array
            os.replace(tmp, path)
    except OSError as e:
        raise disk_error(e, store.root) from None
    return plan


def write_chunk(
    store: layer_store.Store, task: Task, rows: np.ndarray, stored: np.ndarray, index: np.ndarray, info: dict
) -> None:
    """A chunk's files (``index``: int64 ``(3, states)``, each state's length, ``first`` and ``count``), the
    record last, each under a temporary name and renamed (a worker's last step)."""
    meta = {"index": index.tolist(), "index_crc32": crc(index), **info}
    layer_store.write_chunk(store, task, ".q.npy", {"rows": rows, "stored": stored}, meta)


def read_chunk(store: layer_store.Store, task: Task) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A chunk's ``(rows, stored rows, index)``, checked whole against its record: StoreError when it is
    missing, damaged or not the task's."""
    rows_path, stored_path, record = store.chunk(task, ".q.npy")
    meta = read_json(record, "a chunk's record")
    if meta is None or (meta.get("lo"), meta.get("hi")) != (task.lo, task.hi):
        raise StoreError(f"{record} is missing or not this chunk's: it is computed again")
    try:
        index = np.array(meta.get("index"), dtype=np.int64)
        if index.shape != (3, task.hi - task.lo) or crc(index) != meta.get("index_crc32"):
            raise ValueError
        rows = chunks.open_array(rows_path, meta.get("rows"), ROWS_KIND, private=True).array
        stored = chunks.open_array(stored_path, meta.get("stored"), KIND, private=True).array
    except (TableError, OSError, ValueError, TypeError) as e:
        raise StoreError(f"the chunk {record} is damaged ({e or 'its record'}): it is computed again") from None
    if rows.ndim != 1 or len(rows) != index[0].sum() or stored.ndim != 1 or len(stored) != index[2].sum():
        raise StoreError(f"the chunk {record} is not the size its record says: it is computed again")
    return rows, stored, index


def merge(store: layer_store.Store, plan: Plan, layer: int) -> None:
    """Merge a finished layer: its chunks (each checked) into the layer's rows and stored rows files, flushed;
    the work and index entries of its states, flushed; then its record. Its chunk files and the rows of the layer
    below are removed after (a merge cut short is done again from the chunks: it is idempotent)."""
    states = layers(plan.rules)[layer]
    parts = [read_chunk(store, task) for task in plan.tasks(layer)]
    lengths = np.concatenate([index[0] for _, _, index in parts])
    first = np.concatenate([index[1] for _, _, index in parts])
    count = np.concatenate([index[2] for _, _, index in parts])
    at = (states.flags, states.masks, states.subs)
    try:
        records = layer_store.write_layer(store, layer, [p[0] for p in parts], [p[1] for p in parts], KIND)
        work = chunks.mapped(store.work, "r+")
        work[0][at] = np.cumsum(lengths) - lengths
        work[1][at] = lengths
        work.flush()
        index = chunks.mapped(store.index, "r+")
        index[0][at] = first
        index[1][at] = count
        index.flush()
        del work, index
        meta = {"layer": layer, "index_crc32": crc(lengths, first, count), "lanes": int(lengths.sum())}
        meta["longest"] = int(lengths.max(initial=0))
        write_json(store.merged(layer), {**meta, "rows": records[ROWS_KIND], "stored": records[KIND]})
    except OSError as e:
        raise disk_error(e, store.root) from None
    layer_store.done_with(store, layer)


def layer_merged(store: layer_store.Store, plan: Plan, layer: int) -> bool:
    """Whether a layer is merged and whole: its record there, its stored rows and its entries of the work and
    index files matching it."""
    meta = read_json(store.merged(layer), "a layer's record")
    if meta is None:
        return False
    states = layers(plan.rules)[layer]
    at = (states.flags, states.masks, states.subs)
    work, index = chunks.mapped(store.work), chunks.mapped(store.index)
    if crc(work[1][at], index[0][at], index[1][at]) != meta.get("index_crc32"):
        return False
    return layer_store.whole(store.stored(layer), meta.get("stored"), KIND)


def check_layer(store: layer_store.Store, plan: Plan, layer: int) -> None:
    """Nothing: the disk the whole build needs was checked when it started (its rows' lengths are bounded)."""


def resume_from(store: layer_store.Store, plan: Plan) -> int:
    """The first layer a build (resumed) computes (:func:`pentadice.tables.layer_store.resume_from`)."""
    return layer_store.resume_from(store, len(plan.cuts), lambda layer: layer_merged(store, plan, layer))


def finish(store: layer_store.Store, plan: Plan, info: dict) -> Path:
    """Write the finished table from the merged layers (through :func:`pentadice.tables.targets.write`: the
    files ``solve --targets`` writes), read it back whole, and remove the work folder; the data file."""
    from pentadice.tables import targets

    rs = plan.rules
    index = chunks.mapped(store.index)
    first, count = np.array(index[0]), np.array(index[1])
    del index
    offset = np.zeros(rs.table_shape, dtype=np.int64)
    seq = np.concatenate([np.ravel_multi_index((s.flags, s.masks, s.subs), rs.table_shape) for s in layers(rs)])
    counts = count.ravel()[seq]
    offset.ravel()[seq] = np.cumsum(counts) - counts  # rows layer by layer, as the build in memory lays them
    metas = [read_json(store.merged(i), "a layer's record") or {} for i in range(len(plan.cuts))]
    try:
        data = layer_store.gather(store, len(plan.cuts), KIND)
        built = kernel.Built(
            first, count, offset, data, info["seconds"], 0.0, info["workers"],
            sum(int(m.get("lanes", 0)) for m in metas), max(int(m.get("longest", 0)) for m in metas),
            info["peak_bytes"],
        )  # fmt: skip
        files = targets.TargetFiles(store.directory, rs.name)
        targets.write(rs, built, files)
        del data, built
        targets.load(rs, store.directory, verify=True)
    except TableError as e:
        raise StoreError(f"{e}; run the same command again (the build goes on from its layers)") from None
    except OSError as e:
        raise disk_error(e, store.root) from None
    layer_store.done(store)
    return files.data
