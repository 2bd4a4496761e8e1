"""One chunk of an out-of-core build, computed by a worker (a Dask task, or a call in the driver's process).

The worker maps the table file copy-on-write: the layers below are read from disk (the page cache), and the rows
the kernel writes stay in the worker's memory, never reaching the file; the chunk's rows are then saved to a file
of their own (:func:`pentadice.tables.win_store.write_chunk`). Every row is computed by the utility kernel of the
tables solved in memory (:func:`pentadice.solver.utility.solve_theta`), with the same inputs: the same bits.
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import numpy as np

from pentadice.game import rules, states
from pentadice.tables import chunks, win_plan
from pentadice.tables import win_store as stores

CHAOS = "PENTADICE_CHAOS_KILL"  # tests: "KEY:MARKER": the worker running task KEY dies once (os._exit), see _chaos


@functools.cache
def _layers(rs: rules.RuleSet) -> list[tuple[np.ndarray, np.ndarray]]:
    return states.layers(rs)


def _chaos(task: win_plan.Task) -> None:
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
