"""The driver of an out-of-core build: each layer's tasks on Dask (or in this process), then the layer merged.

``build(rs, directory)`` builds the win tables of ``rs`` beside its value table in ``directory``:

1. the plan (chunks sized by the memory budget) and the store: a build of the same values resumes from the chunks
   and layers already written; the disk it needs is checked first;
2. layer after layer: the tasks of every chunk not yet written, on a Dask cluster (a ``LocalCluster`` of this
   machine's cores by default, or the scheduler at ``scheduler``), whose workers read and write the store in
   ``directory`` (a path every worker sees); the layer merged when all its chunks are in;
3. the finished table checked and recorded (:func:`pentadice.tables.win_store.finish`).

A finished store of the same values is checked and left alone; a damaged one is repaired from its first damaged
layer. Dask runs a task again when its worker dies (``distributed.scheduler.allowed-failures``); a task is a pure
function of the layers below, so the table is the same bits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from pentadice.cluster import tasks
from pentadice.game import rules
from pentadice.support.exits import TableError
from pentadice.tables import chunks, table, targets_store
from pentadice.tables import win_plan as plans
from pentadice.tables import win_store as stores

SCHEDULER_ENV = "PENTADICE_SCHEDULER"


class ClusterError(TableError):
    """Dask is missing, or its scheduler cannot be reached."""


@dataclasses.dataclass
class Progress:
    """What a build reports as it goes: ``say(text)`` for lines (the dashboard's link, a layer resumed),
    ``advance(n)`` after ``n`` more tasks of ``total`` are done (the chunks already written count at once)."""

    say: Callable[[str], None] = lambda text: None
    advance: Callable[[int], None] = lambda n: None
    total: Callable[[int], None] = lambda n: None


class InProcess:
    """Tasks run one after another in this process (``--workers 0``: no Dask)."""

    dashboard = None

    def run(self, compute: Callable, rs: rules.RuleSet, directory: str, todo: list) -> Iterator[dict]:
        for task in todo:
            yield compute(rs, directory, task)

    def close(self) -> None:
        pass


class OnDask:
    """Tasks on a Dask cluster: the one at ``scheduler``, or a new ``LocalCluster`` of ``workers`` processes
    (one thread each: the kernels are single-threaded). ``memory`` bounds a task through the plan's chunk size,
    not through Dask's memory monitor: that one counts the table's mapped pages (clean page cache the kernel
    reclaims) and a worker's compiler as its own, and a worker it pauses at 80 % of a small limit never runs
    its task again (a build that waits forever), so the local workers get no Dask memory limit."""

    def __init__(self, scheduler: str | None, workers: int) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ClusterError(
                "building out of core needs Dask: pip install 'pentadice[cluster]' (or `make install`)"
            ) from None
        self.cluster = None
        try:
            if scheduler:
                import dask

                # Dask's own setting (DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT), 30 s unless set.
                self.client = Client(scheduler, timeout=dask.config.get("distributed.comm.timeouts.connect"))
            else:
                self.cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    memory_limit=0,
                    dashboard_address="127.0.0.1:0",
                    silence_logs=50,
                )
                self.client = Client(self.cluster)
        except (OSError, TimeoutError) as e:
            self.close()
            raise ClusterError(f"cannot reach the Dask scheduler {scheduler or '(local)'}: {e}") from None
        self.dashboard = self.client.dashboard_link

    def run(self, compute: Callable, rs: rules.RuleSet, directory: str, todo: list) -> Iterator[dict]:
        from dask.distributed import as_completed

        futures = [
            self.client.submit(compute, rs, directory, task, key=f"pentadice-{rs.name}-{task.key}", pure=False)
            for task in todo
        ]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def build(
    rs: rules.RuleSet,
    directory: Path | str,
    values: np.ndarray,
    scheduler: str | None = None,
    workers: int | None = None,
    memory: int = plans.DEFAULT_MEMORY,
    progress: Progress | None = None,
    chunk: int | None = None,
) -> dict:
    """Build (or resume, or repair) the win tables of ``rs`` beside its value table ``values`` in ``directory``,
    out of core; the summary: seconds, tasks run and resumed, states, bytes, the dashboard's link.

    ``workers``: 0 runs the tasks in this process (no Dask), else the processes of the ``LocalCluster`` (default:
    this machine's cores); ``scheduler``: a running cluster's address instead (its workers must see
    ``directory`` at the same path); ``chunk``: box masks a task (default: from ``memory``; a build resumed
    keeps the chunks it started with). StoreError for a disk too small or full, damaged chunks; ClusterError when
    Dask cannot run; KeyboardInterrupt leaves every chunk written so far for the next run."""
    from pentadice.players import win

    progress = progress or Progress()
    directory = Path(directory).resolve()
    workers = default_workers() if workers is None else workers
    store = stores.Store(directory, rs.name)
    values = win.padded(rs, values)
    checksum = stores.values_checksum(rs, values)
    start = time.perf_counter()
    with table.writer_lock(store.lock_files):
        plan = stores.start(
            store, plans.make(rs, win.stored_thetas(rs), memory, max(workers, 1), chunk), values, checksum
        )
        repaired = _check_finished(store, plan, values, checksum, progress)
        if repaired is None:
            return {"rules": rs.name, "built": False, "files": str(store.root), "bytes": plan.bytes}
        stores.check_disk(store, stores.needed_bytes(store, plan))  # the rest of a build resumed
        progress.total(plan.n_tasks)
        runner = _runner(scheduler, workers, progress)
        try:
            ran, resumed = _layers(
                runner, tasks.compute, rs, directory, len(plan.cuts), plan.tasks,
                merged=lambda layer: stores.layer_merged(store, layer),
                done=lambda task: stores.chunk_done(store, task),
                merge=lambda layer: stores.merge(store, plan, layer),
                progress=progress,
            )  # fmt: skip
        finally:
            runner.close()
        seconds = time.perf_counter() - start
        info = {
            "build_seconds": seconds,
            "workers": "scheduler " + scheduler if scheduler else workers,
            "tasks": plan.n_tasks,
            "chunk_masks": plan.chunk,
        }
        stores.finish(store, plan, checksum, info)
    return {
        "rules": rs.name,
        "built": True,
        "seconds": seconds,
        "tasks_run": ran,
        "tasks_resumed": resumed,
        "tasks": plan.n_tasks,
        "bytes": plan.bytes,
        "files": str(store.root),
        "dashboard": runner.dashboard,
    }


def _runner(scheduler: str | None, workers: int, progress: Progress) -> InProcess | OnDask:
    runner = InProcess() if workers == 0 and not scheduler else OnDask(scheduler, max(workers, 1))
    if runner.dashboard:
        progress.say(f"Dask dashboard: {runner.dashboard}")
    return runner


def _layers(
    runner: InProcess | OnDask,
    compute: Callable,
    rs: rules.RuleSet,
    directory: Path,
    n_layers: int,
    tasks_of: Callable[[int], list],
    merged: Callable[[int], bool],
    done: Callable[[object], bool],
    merge: Callable[[int], None],
    progress: Progress,
) -> tuple[int, int]:
    """Every layer in turn: skipped when merged; else the tasks of its chunks not yet written, then merged. The
    tasks run and resumed."""
    ran = resumed = 0
    for layer in range(n_layers):
        layer_tasks = tasks_of(layer)
        if merged(layer):
            progress.advance(len(layer_tasks))
            resumed += len(layer_tasks)
            continue
        todo = [t for t in layer_tasks if not done(t)]
        progress.advance(len(layer_tasks) - len(todo))
        resumed += len(layer_tasks) - len(todo)
        for _ in runner.run(compute, rs, str(directory), todo):
            ran += 1
            progress.advance(1)
        merge(layer)
    return ran, resumed


def build_targets(
    rs: rules.RuleSet,
    directory: Path | str,
    scheduler: str | None = None,
    workers: int | None = None,
    memory: int = targets_store.DEFAULT_MEMORY,
    progress: Progress | None = None,
    chunk: int | None = None,
) -> dict:
    """Build (or resume) the target table of ``rs`` in ``directory`` out of core, as :func:`build` does the win
    tables (``chunk``: lanes of rows a task): the same files as ``pentadice solve --targets``, byte for byte. A
    finished table is checked whole and left alone; a damaged one is built again. StoreError for a disk too
    small or full; ClusterError when Dask cannot run; KeyboardInterrupt leaves every chunk written so far."""
    from pentadice.tables import targets

    progress = progress or Progress()
    directory = Path(directory).resolve()
    workers = default_workers() if workers is None else workers
    store = targets_store.Store(directory, rs.name)
    start = time.perf_counter()
    table.prepare_directory(directory)
    with table.writer_lock(store.lock_files):
        files = targets.TargetFiles(directory, rs.name)
        if files.meta.exists() and not store.root.exists():
            try:
                targets.load(rs, directory, verify=True)
                return {"rules": rs.name, "built": False, "files": str(files.data), "bytes": files.data.stat().st_size}
            except TableError as e:
                progress.say(f"{e}: building it again")
        plan = targets_store.start(store, targets_store.make(rs, memory, max(workers, 1), chunk))
        first_todo = targets_store.resume_from(store, plan)
        progress.total(plan.n_tasks)
        runner = _runner(scheduler, workers, progress)
        try:
            ran, resumed = _layers(
                runner, tasks.compute_targets, rs, directory, len(plan.cuts), plan.tasks,
                merged=lambda layer: layer < first_todo,
                done=lambda task: targets_store.chunk_done(store, task),
                merge=lambda layer: targets_store.merge(store, plan, layer),
                progress=progress,
            )  # fmt: skip
        finally:
            runner.close()
        seconds = time.perf_counter() - start
        info = {"seconds": seconds, "workers": workers, "peak_bytes": 2 * 16 * plan.chunk_lanes}
        data = targets_store.finish(store, plan, info)
    return {
        "rules": rs.name,
        "built": True,
        "seconds": seconds,
        "tasks_run": ran,
        "tasks_resumed": resumed,
        "tasks": plan.n_tasks,
        "bytes": data.stat().st_size,
        "files": str(data),
        "dashboard": runner.dashboard,
    }


def _check_finished(
    store: stores.Store, plan: plans.Plan, values: np.ndarray, checksum: str, progress: Progress
) -> bool | None:
    """None when a finished store of these values is whole (nothing to do); else whether it was repaired: a
    damaged one has its value slot and fixed rows written again and its layers from the first damaged one
    forgotten (built again)."""
    meta = stores.finished_meta(plan.rules, store.directory)
    if meta is None or meta.get("values_checksum") != checksum:
        return False
    try:
        stores.verify(plan.rules, store.directory, values)
        return None
    except stores.StoreError as e:
        progress.say(f"{e}: repairing it")
    array = chunks.mapped(store.array, "r+")
    stores.write_fixed(array, plan, values)
    bad = stores.check_layers(store, plan, array)
    del array
    stores.unmerge_from(store, plan, len(plan.cuts) if bad is None else bad)  # none: the record written again
    return True
