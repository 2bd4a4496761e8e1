"""One chunk of an out-of-core build, computed by a worker (a Dask task, or a call in the driver's process).

The worker maps the build's files copy-on-write: the layers below are read from disk (the page cache), and what
the kernel writes stays in the worker's memory, never reaching the file; the chunk's rows are then saved to files
of their own (:func:`pentadice.tables.win_store.write_chunk`, :func:`pentadice.tables.targets_store.
write_chunk`). Every row is computed by the kernel of the tables built in memory, with the same inputs: the same
bits (the win tables: :func:`pentadice.solver.utility.solve_theta`; the target table: :func:`pentadice.solver.
targets.target_states`).
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import numpy as np

from pentadice.game import rules, states
from pentadice.tables import chances_store, chunks, targets_store, win_plan
from pentadice.tables import win_store as stores

CHAOS = "PENTADICE_CHAOS_KILL"  # tests: "KEY:MARKER": the worker running task KEY dies once (os._exit), see _chaos


@functools.cache
def _layers(rs: rules.RuleSet) -> list[tuple[np.ndarray, np.ndarray]]:
    return states.layers(rs)


def _chaos(task: win_plan.Task | targets_store.Task) -> None:
    """A worker killed mid-task, for the tests of Dask's retries: with ``PENTADICE_CHAOS_KILL=KEY:MARKER`` set,
    the first worker to run task ``KEY`` creates the file ``MARKER`` and dies at once."""
    spec = os.environ.get(CHAOS)
    if not spec:
        return
    key, _, marker = spec.partition(":")
    if key != task.key or not marker:
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # died once already: this time the task runs
    os.close(fd)
    os._exit(1)


def compute(rs: rules.RuleSet, directory: str, task: win_plan.Task) -> dict:
    """Compute a task's chunk and write it to the store in ``directory``; what it did (seconds, fixed-point
    steps of Kiriki's states). ValueError when a theta has no fixed point; StoreError when it cannot write."""
    from pentadice.solver import utility
    from pentadice.solver.turn import MAX_FIXED_POINT_STEPS
    from pentadice.solver.turn_inputs import turn_inputs

    _chaos(task)
    start = time.perf_counter()
    store = stores.Store(Path(directory), rs.name)
    mapped = chunks.mapped(store.array, "c")  # copy-on-write: the kernel's writes stay in this process
    U = np.asarray(mapped[task.slot])
    masks, flags = _layers(rs)[task.layer]
    kernel = utility.wide_for(rs.lanes).solve_theta_states
    steps = int(kernel(U, task.theta, *turn_inputs(rs).layer(), masks, flags, task.lo, task.hi))
    if steps > MAX_FIXED_POINT_STEPS:
        raise ValueError(f"no fixed point for theta {task.theta} under {rs.title}")
    rows = np.ascontiguousarray(U[flags[task.lo : task.hi], masks[task.lo : task.hi]])
    seconds = time.perf_counter() - start
    del U, mapped
    stores.write_chunk(store, task, rows, {"seconds": seconds, "pid": os.getpid()})
    return {"key": task.key, "seconds": seconds, "states": task.hi - task.lo}


def compute_targets(rs: rules.RuleSet, directory: str, task: targets_store.Task) -> dict:
    """Compute a chunk of the target table and write it to the build's folder in ``directory``: its rows in
    float64 (what the next layer reads) and as stored; what it did. StoreError when it cannot write."""
    from pentadice.solver import targets as kernel
    from pentadice.solver.turn_inputs import turn_inputs

    _chaos(task)
    start = time.perf_counter()
    store = targets_store.store_of(Path(directory), rs.name)
    layer = targets_store.layers(rs)[task.layer]
    a, b = task.lo, task.hi
    at = (layer.flags[a:b], layer.masks[a:b], layer.subs[a:b])
    work = chunks.mapped(store.work, "c")  # copy-on-write: this chunk's offsets stay in this process
    off, ln = np.asarray(work[0]), np.asarray(work[1])
    starts = np.cumsum(layer.alloc[a:b]) - layer.alloc[a:b]
    off[at] = starts  # where each state's row lies in this chunk's rows
    cur = np.empty(int(layer.alloc[a:b].sum()))
    prev = np.ones(1) if task.layer == 0 else np.asarray(chunks.mapped(store.rows(task.layer - 1), "c"))
    args = (*turn_inputs(rs).layer(), layer.flags, layer.masks, layer.subs, kernel.max_gain(rs))
    kernel.compiled().target_states(prev, cur, off, ln, layer.alloc, *args, a, b)
    lengths = np.array(ln[at])
    first, count, stored = kernel.quantize(cur, starts, lengths)
    keep = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
    rows = cur[keep]  # the rows trimmed to their lengths, one after another
    seconds = time.perf_counter() - start
    del work, off, ln, prev
    index = np.stack([lengths, first, count]).astype(np.int64)
    targets_store.write_chunk(store, task, rows, stored, index, {"seconds": seconds, "pid": os.getpid()})
    return {"key": task.key, "seconds": seconds, "states": b - a, "lanes": len(cur)}


@functools.cache
def _policy(rs: rules.RuleSet, directory: str, checksum: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The value table a chances build follows, read (checked) from ``directory`` once a process, padded, with
    the lanes a game reaches; StoreError when it is not the one the build's plan was made of."""
    from pentadice.solver import remaining
    from pentadice.tables import table

    try:
        values = table.load(rs, Path(directory)).values
    except table.TableError as e:
        raise stores.StoreError(str(e)) from None
    if stores.values_checksum(rs, values) != checksum:
        raise stores.StoreError(f"the {rs.name} value table in {directory} changed during the chances table's build")
    V = remaining.padded_values(rs, values)
    return (V, *remaining.reach_bounds(V))


def compute_chances(rs: rules.RuleSet, directory: str, task: targets_store.Task) -> dict:
    """Compute a chunk of the chances table and write it to the build's folder in ``directory``: its rows in
    float64 and its states' index entries (starts from the chunk's first entry); what it did."""
    from pentadice.solver import remaining

    _chaos(task)
    start = time.perf_counter()
    store = chances_store.store_of(Path(directory), rs.name)
    plan = stores.read_json(store.plan_file, "the build's plan") or {}
    V, rlo, rhi = _policy(rs, directory, str(plan.get("values_checksum")))
    work = chunks.mapped(store.work, "c")  # copy-on-write: this chunk's entries stay in this process
    off, lo, width = (np.asarray(work[i]) for i in range(3))
    base, _, widest = chances_store.before(store, task.layer, rs)
    prev = np.ones(rs.n_flags) if task.layer == 0 else np.asarray(chunks.mapped(store.rows(task.layer - 1), "c"))
    sids = chances_store.sids(rs)[task.layer][task.lo : task.hi]
    groups, done = remaining.rows_of(rs, V, sids, off, lo, width, rlo, rhi, prev, base, widest)
    at = 0
    for rows, s in zip(groups, done, strict=True):  # each group's starts from the chunk's first entry
        off[s] += at
        at += len(rows)
    index = np.stack([off[sids], lo[sids], width[sids]])
    rows = np.concatenate(groups) if groups else np.zeros(0)
    seconds = time.perf_counter() - start
    del work, off, lo, width, prev
    chances_store.write_chunk(store, task, rows, index, {"seconds": seconds, "pid": os.getpid()})
    return {"key": task.key, "seconds": seconds, "states": len(sids)}
