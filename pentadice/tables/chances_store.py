"""The chances table built out of core (:mod:`pentadice.cluster`): its plan and its work folder
``NAME.chances.build/``, until the finished table is written as the three files ``pentadice solve`` writes
(:mod:`pentadice.tables.chance_tables`), byte for byte.

It follows the target table's build (:mod:`pentadice.tables.targets_store`), whose helpers it shares: a row's
span is known only once it is computed, so each layer's rows are a file of their own. The differences: the states
are ``(flag, open boxes)`` ids with a row per subtotal lane, a state's turn is run forward under the policy of the
value table (which every task reads from the table directory, checked against the plan's SHA-256), and the rows
of every layer are placed one after another in the table as they are merged (a layer's first entry is known once
the layer before is merged). The folder holds:

- ``plan.json``: the rule set, the value table's SHA-256, the chunks of each layer (``cuts``: state ids of
  :func:`pentadice.solver.remaining.sids_of_layer`);
- ``work.npy``: int64 ``(3, states, lanes)``: each row's start in the table, its first points and its width
  (the index the table will have), filled a layer at a time; the game's end written when the build starts;
- ``L03/c00012.rows.npy``, ``.index.npy``, ``.json``: a chunk (its rows in float64, one after another; its
  states' starts from the chunk's first entry, first points and widths; its record, written last);
- ``L03.rows.npy``, ``L03.q.npy``, ``L03.merged.json``: a merged layer's rows in float64 (what the next layer
  reads: the last layer's only) and as stored (float32), and its record (its first entry in the table, its
  entries, ``max(lo + width)`` so far, the CRC-32 of its index entries, both files' records).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import os
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.solver import remaining
from pentadice.solver import targets as target_kernel
from pentadice.support.exits import TableError
from pentadice.tables import chunks, layer_store
from pentadice.tables.layer_store import ROWS_KIND, Task, check_disk, crc
from pentadice.tables.win_store import StoreError, disk_error, read_json, write_json

FORMAT = "pentadice-chances-build"
KIND = "chances"
INDEX_KIND = "chances-index"
DEFAULT_MEMORY = 4 << 30
MIN_CHUNK = remaining.CHUNK  # state ids a task: a group of the pass at least
MAX_CHUNK = 64 * remaining.CHUNK


def refusal(rs: rules.RuleSet) -> str | None:
    """Why ``rs`` has no chances table even out of core (Kiriki's score has no bound), or None."""
    return f"{rs.title} has no chances table: {rs.unbounded}" if rs.unbounded else None


@functools.cache
def sids(rs: rules.RuleSet) -> tuple[np.ndarray, ...]:
    """Every layer's state ids, 1 box open first."""
    return tuple(remaining.sids_of_layer(rs, k) for k in range(1, rs.n_boxes + 1))


def reach(rs: rules.RuleSet) -> int:
    """The most points a game can still score (the start's bound): what a row spans at most."""
    return target_kernel.bound(rs, 0, rs.box_mask, 0) + 1


@dataclasses.dataclass(frozen=True)
class Plan:
    """An out-of-core build of the chances table: the chunks of each layer (``cuts[layer]``, increasing from 0 to
    the layer's number of states) of ``chunk`` state ids."""

    rules: rules.RuleSet
    cuts: tuple[tuple[int, ...], ...]
    chunk: int

    def tasks(self, layer: int) -> list[Task]:
        return [Task(layer, c, lo, hi, KIND) for c, (lo, hi) in enumerate(itertools.pairwise(self.cuts[layer]))]

    @property
    def n_tasks(self) -> int:
        return sum(len(c) - 1 for c in self.cuts)

    def layer_bytes(self, layer: int, widest: int) -> int:
        """The disk a layer needs at most once the layers below are merged (``widest``: their ``max(lo + width)``,
        which a row of this layer passes by one turn's points at most): its chunk files (rows in float64, an index
        entry per state and lane), its rows in float64 and as stored."""
        rs = self.rules
        span = widest + remaining.points_axis(rs) + rs.penta_bonus + rs.upper_bonus + 6 * rs.dice + 1
        return len(sids(rs)[layer]) * rs.lanes * (span * (8 + 8 + 4) + 3 * 8)

    def needed_bytes(self) -> int:
        """The disk a build needs before it starts: the work file and the first layer (each later layer is checked
        before it is computed, against the bound the layers below give it; the finished table before it is
        written)."""
        rs = self.rules
        return 3 * 8 * (rs.n_flags << rs.n_boxes) * rs.lanes + self.layer_bytes(0, 1)

    def as_json(self) -> dict:
        return {"chunk_sids": self.chunk, "cuts": [list(c) for c in self.cuts]}


def make(rs: rules.RuleSet, memory: int = DEFAULT_MEMORY, workers: int = 2, chunk: int | None = None) -> Plan:
    """The plan of ``rs``'s chances table, chunks of ``chunk`` state ids (default: from ``memory`` shared by
    ``workers``, each task's rows held twice at their widest)."""
    if chunk is not None and chunk < 1:
        raise ValueError(f"a chunk holds at least 1 state, not {chunk}")
    chunk = chunk or int(min(MAX_CHUNK, max(MIN_CHUNK, memory // max(workers, 1) // 2 // (16 * rs.lanes * reach(rs)))))
    cuts = tuple((*range(0, len(s), chunk), len(s)) for s in sids(rs))
    return Plan(rs, cuts, chunk)


def store_of(directory: Path, rules_name: str) -> layer_store.Store:
    """The work folder of a rule set's chances table built out of core."""
    return layer_store.Store(Path(directory), rules_name, KIND, INDEX_KIND)


def start(store: layer_store.Store, plan: Plan, checksum: str) -> Plan:
    """The plan to build: the one saved in the work folder when it is of the same values (a build resumed), else
    ``plan`` with a new work folder (any old one removed, the disk checked first): its plan file, then the work
    file with the game's end written (one entry per flag: 0 more points for sure)."""
    rs = plan.rules
    saved = read_json(store.plan_file, "the build's plan")
    if saved is not None and saved.get("values_checksum") == checksum and store.work.is_file():
        with contextlib.suppress(KeyError, TypeError, ValueError):
            cuts = tuple(tuple(int(x) for x in c) for c in saved["cuts"])
            if len(cuts) == len(plan.cuts) and all(
                c and c[0] == 0 and c[-1] == full[-1] and all(b > a for a, b in itertools.pairwise(c))
                for c, full in zip(cuts, plan.cuts, strict=True)
            ):
                return Plan(rs, cuts, int(saved["chunk_sids"]))
    layer_store.fresh_folder(store, saved, FORMAT, "chances table", plan.needed_bytes())
    write_json(store.plan_file, {"format": FORMAT, "rules": rs.name, "values_checksum": checksum, **plan.as_json()})
    n = rs.n_boxes
    try:
        tmp = store.root / ".work.npy.new"
        work = chunks.create_mapped(tmp, (3, rs.n_flags << n, rs.lanes), "int64")
        for ps in range(rs.n_flags):  # as the pass in memory starts: entry ps of the table, every subtotal
            work[0, ps << n] = ps
            work[2, ps << n, : rs.upper_threshold + 1] = 1
        work.flush()
        del work
        os.replace(tmp, store.work)
    except OSError as e:
        raise disk_error(e, store.root) from None
    return plan


def before(store: layer_store.Store, layer: int, rs: rules.RuleSet) -> tuple[int, int, int]:
    """``(first entry, entries, widest)`` of the layer before ``layer``: where its rows lie in the table, and
    ``max(lo + width)`` of every state merged before ``layer`` (what :func:`pentadice.solver.remaining.rows_of`
    needs). Before the first layer: the game's end, one entry per flag."""
    if layer == 0:
        return 0, rs.n_flags, 1
    meta = read_json(store.merged(layer - 1), "a layer's record") or {}
    return int(meta.get("base", -1)), int(meta.get("entries", -1)), int(meta.get("widest", -1))


def check_layer(store: layer_store.Store, plan: Plan, layer: int) -> None:
    """StoreError before a layer is computed when the disk cannot hold what it may write."""
    _, _, widest = before(store, layer, plan.rules)
    check_disk(store, plan.layer_bytes(layer, widest), "chances table")


def write_chunk(store: layer_store.Store, task: Task, rows: np.ndarray, index: np.ndarray, info: dict) -> None:
    """A chunk's rows and index (``(3, states, lanes)``: start from the chunk's first entry, first points,
    width), then its record, each under a temporary name and renamed (a worker's last step)."""
    layer_store.write_chunk(store, task, ".index.npy", {"rows": rows, "index": index}, info)


def read_chunk(store: layer_store.Store, task: Task) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's ``(rows, index)``, checked whole against its record: StoreError when it is missing, damaged or
    not the task's."""
    rows_path, index_path, record = store.chunk(task, ".index.npy")
    meta = read_json(record, "a chunk's record")
    if meta is None or (meta.get("lo"), meta.get("hi")) != (task.lo, task.hi):
        raise StoreError(f"{record} is missing or not this chunk's: it is computed again")
    try:
        rows = chunks.open_array(rows_path, meta.get("rows"), ROWS_KIND, private=True).array
        index = chunks.open_array(index_path, meta.get("index"), INDEX_KIND, private=True).array
    except (TableError, OSError) as e:
        raise StoreError(f"the chunk {record} is damaged ({e}): it is computed again") from None
    if rows.ndim != 1 or index.ndim != 3 or index.shape[:2] != (3, task.hi - task.lo):
        raise StoreError(f"the chunk {record} is not the shape its record says: it is computed again")
    ends = index[0] + index[2]
    if ends.max(initial=0) > len(rows) or index[0].min(initial=0) < 0:
        raise StoreError(f"the chunk {record} has an index past its rows: it is computed again")
    return rows, index


def merge(store: layer_store.Store, plan: Plan, layer: int) -> None:
    """Merge a finished layer: its chunks (each checked) into its rows files (float64 and stored), flushed; its
    states' index entries into the work file (their starts now in the table), flushed; then its record. Its
    chunk files and the rows of the layer below are removed after (a merge cut short is done again)."""
    rs = plan.rules
    base_before, entries_before, widest = before(store, layer, rs)
    base = base_before + entries_before
    parts = [read_chunk(store, task) for task in plan.tasks(layer)]
    layer_sids = sids(rs)[layer]
    try:
        work = chunks.mapped(store.work, "r+")
        at = base
        for task, (rows, index) in zip(plan.tasks(layer), parts, strict=True):
            s = layer_sids[task.lo : task.hi]
            work[0][s] = index[0] + at
            work[1][s] = index[1]
            work[2][s] = index[2]
            at += len(rows)
        work.flush()
        entries = at - base
        widest = max(widest, int((work[1][layer_sids] + work[2][layer_sids]).max(initial=0)))
        where = np.array([base, entries, widest])  # what the next layer's tasks read of this record: checked too
        index_crc = crc(work[0][layer_sids], work[1][layer_sids], work[2][layer_sids], where)
        del work
        rows = [r for r, _ in parts]
        records = layer_store.write_layer(store, layer, rows, rows, KIND)  # the stored rows: float32
        meta = {"layer": layer, "base": base, "entries": entries, "widest": widest, "index_crc32": index_crc}
        write_json(store.merged(layer), {**meta, "rows": records[ROWS_KIND], "stored": records[KIND]})
    except OSError as e:
        raise disk_error(e, store.root) from None
    layer_store.done_with(store, layer)


def layer_merged(store: layer_store.Store, plan: Plan, layer: int) -> bool:
    """Whether a layer is merged and whole: its record there, its stored rows and its work entries matching it."""
    meta = read_json(store.merged(layer), "a layer's record")
    if meta is None:
        return False
    s = sids(plan.rules)[layer]
    work = chunks.mapped(store.work)
    try:
        where = np.array([int(meta["base"]), int(meta["entries"]), int(meta["widest"])])
    except (KeyError, TypeError, ValueError):
        return False
    if crc(work[0][s], work[1][s], work[2][s], where) != meta.get("index_crc32"):
        return False
    return layer_store.whole(store.stored(layer), meta.get("stored"), KIND)


def resume_from(store: layer_store.Store, plan: Plan) -> int:
    """The first layer a build (resumed) computes (:func:`pentadice.tables.layer_store.resume_from`)."""
    return layer_store.resume_from(store, len(plan.cuts), lambda layer: layer_merged(store, plan, layer))


def finish(store: layer_store.Store, plan: Plan, values: np.ndarray, seconds: float) -> Path:
    """Write the finished table from the merged layers (through :func:`pentadice.tables.chance_tables.save`: the
    files ``solve`` writes), check it whole, and remove the work folder; the data file."""
    from pentadice.tables import chance_tables

    rs = plan.rules
    metas = [read_json(store.merged(i), "a layer's record") or {} for i in range(len(plan.cuts))]
    total = rs.n_flags + sum(int(m.get("entries", 0)) for m in metas)
    work = chunks.mapped(store.work)
    off, lo, width = (np.array(work[i]) for i in range(3))
    del work
    off[width == 0] = 0  # no row: as the pass in memory leaves it
    check_disk(store, 2 * 4 * total + 3 * off.nbytes + (1 << 20), "chances table")  # gathered, then written
    try:
        data = layer_store.gather(store, len(plan.cuts), KIND, head=np.ones(rs.n_flags))  # the game's end first
        path = chance_tables.save(rs, store.directory, remaining.Remaining(rs, off, lo, width, data, seconds), values)
        del data
        chance_tables.verify(rs, store.directory, values)
    except TableError as e:
        raise StoreError(f"{e}; run the same command again (the build goes on from its layers)") from None
    except OSError as e:
        raise disk_error(e, store.root) from None
    layer_store.done(store)
    return path
