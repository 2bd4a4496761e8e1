"""The driver of an out-of-core build: each layer's tasks on Dask (or in this process), then the layer merged.

``build(rs, directory)`` builds the win tables of ``rs`` beside its value table in ``directory``:

1. the plan (chunks sized by the memory budget) and the store: a build of the same values resumes from the chunks
   and layers already written; the disk it needs is checked first;
2. layer after layer: the tasks of every chunk not yet written, on a Dask cluster (a ``LocalCluster`` of this
   machine's cores by default, or the scheduler at ``scheduler``), whose workers read and write the store in
   ``directory`` (a path every worker sees); the layer merged when all its chunks are in;
3. the finished table checked and recorded (:func:`pentadice.tables.win_store.finish`).

A finished store of the same values is checked and left alone; a damaged one is repaired from its first damaged
layer. ``build_targets`` and ``build_chances`` do the same for the target and chances tables, whose rows vary in
length (:mod:`pentadice.tables.layer_store`): one driver, ``_build_rows``, their files those of ``solve``.

Dask runs a task again when its worker dies (``distributed.scheduler.allowed-failures``); a task is a pure function
of the layers below, so the table is the same bits.
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
from pentadice.cluster.address import AddressError, ClusterError, normal, probe
from pentadice.game import rules
from pentadice.support.exits import TableError
from pentadice.tables import chances_store, chunks, table, targets_store
from pentadice.tables import win_plan as plans
from pentadice.tables import win_store as stores

SCHEDULER_ENV = "PENTADICE_SCHEDULER"
__all__ = ["AddressError", "ClusterError", "Progress", "build", "build_chances", "build_targets", "check_scheduler"]


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
        self.client = None
        self.scheduler = scheduler
        try:
            if scheduler:
                self._quiet_logs()
                self.client = Client(check_scheduler(scheduler), timeout=connect_timeout())
            else:
                self.cluster = LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    memory_limit=0,
                    dashboard_address="127.0.0.1:0",
                    silence_logs=50,
                    preload=["pentadice.cluster.quiet_worker"],  # Ctrl-C at a terminal: the driver's alone
                )
                _no_gc_diagnosis()
                self.client = Client(self.cluster)
        except ClusterError:
            raise
        except Exception as e:  # Dask's own failures, of many kinds: one line, no traceback
            self.close()
            reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
            where = f"reach the Dask scheduler {scheduler}" if scheduler else "start a local Dask cluster"
            raise ClusterError(f"cannot {where}: {reason}") from None
        self.dashboard = self.client.dashboard_link

    def run(self, compute: Callable, rs: rules.RuleSet, directory: str, todo: list) -> Iterator[dict]:
        from dask.distributed import as_completed

        futures = [
            self.client.submit(compute, rs, directory, task, key=f"pentadice-{rs.name}-{task.key}", pure=False)
            for task in todo
        ]
        try:
            for future in as_completed(futures):
                try:
                    result = future.result()
                except (TableError, KeyboardInterrupt):  # a task's own refusal (a full disk), or Ctrl-C
                    raise
                except Exception as e:
                    if not _from_dask(e):
                        raise
                    where = f"the Dask scheduler {self.scheduler}" if self.scheduler else "the local Dask cluster"
                    reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
                    if self.client.status != "running" or "connection-lost" in reason or _connection_lost(e):
                        reason = "the connection to it was lost"
                    raise ClusterError(f"the build lost {where}: {reason}") from None
                yield result
        finally:
            for future in futures:
                future.cancel()

    def _quiet_logs(self) -> None:
        """Dask's client logs (a connection lost: an error, tracebacks of its cancelled coroutines) silenced, as the
        local cluster's are: the build says what happened in one line. Restored by :meth:`close`."""
        import logging

        from distributed.utils import silence_logging_cmgr

        self._quiet = contextlib.ExitStack()
        self._quiet.enter_context(silence_logging_cmgr(logging.CRITICAL))  # Dask's handlers, as silence_logs does

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()
        if getattr(self, "_quiet", None) is not None:
            self._quiet.close()
            self._quiet = None


def _from_dask(error: BaseException) -> bool:
    """Whether a task's failure is Dask's (the scheduler's connection lost, its futures cancelled, a task whose
    workers kept dying), not the task's own."""
    import concurrent.futures

    kinds = (concurrent.futures.CancelledError, TimeoutError, ConnectionError, EOFError)
    return isinstance(error, kinds) or type(error).__module__.split(".")[0] == "distributed"


def _connection_lost(error: BaseException) -> bool:
    """Whether Dask's failure is its connection closed (the scheduler gone: ``Stream is closed`` in the gathering
    of a result, before the client has noticed)."""
    from distributed.comm.core import CommClosedError

    return isinstance(error, (CommClosedError, ConnectionError, EOFError))


def _no_gc_diagnosis() -> None:
    """The local cluster's scheduler, in this process, watches every garbage collection (a callback that logs
    long pauses, which the cluster's silenced logs never show). Ctrl-C arriving while that callback runs would be
    printed as "Exception ignored in ... _gc_callback" with a traceback and lost, the build going on: the callback
    is removed."""
    with contextlib.suppress(Exception):
        from distributed import gc as dask_gc

        dask_gc.disable_gc_diagnosis(force=True)


def connect_timeout() -> float:
    """Seconds to wait for a scheduler: Dask's own setting (DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT), 30 s
    unless set."""
    import dask
    from dask.utils import parse_timedelta

    return parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds")


def check_scheduler(scheduler: str) -> str:
    """The address of a running Dask scheduler, checked (:mod:`pentadice.cluster.address`) before Dask is given
    it: AddressError (a ValueError) for an address a build cannot use, ClusterError naming what answers there when
    it is not a scheduler. Returns it as Dask is given it (:func:`~pentadice.cluster.address.normal`)."""
    try:
        import dask.distributed  # noqa: F401  (its settings: the timeout, TLS)
    except ImportError:
        raise ClusterError(
            "building out of core needs Dask: pip install 'pentadice[cluster]' (or `make install`)"
        ) from None
    probe(scheduler.strip(), connect_timeout())
    return normal(scheduler)


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
    runners = Runners(scheduler, workers, progress)  # a scheduler reached before anything is written
    with runners, table.writer_lock(store.lock_files):
        plan = stores.start(
            store, plans.make(rs, win.stored_thetas(rs), memory, max(workers, 1), chunk), values, checksum
        )
        repaired = _check_finished(store, plan, values, checksum, progress)
        if repaired is None:
            return {"rules": rs.name, "built": False, "files": str(store.root), "bytes": plan.bytes}
        stores.check_disk(store, stores.needed_bytes(store, plan))  # the rest of a build resumed
        runner = runners.get()  # the dashboard's line before the progress bar
        progress.total(plan.n_tasks)
        ran, resumed = _layers(
            runner, tasks.compute, rs, directory, len(plan.cuts), plan.tasks,
            merged=lambda layer: stores.layer_merged(store, layer),
            done=lambda task: stores.chunk_done(store, task),
            merge=lambda layer: stores.merge(store, plan, layer),
            progress=progress,
        )  # fmt: skip
        runners.close()
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
        "dashboard": runners.dashboard,
    }


class Runners:
    """Where a build's tasks run, made when first needed (a local cluster is started only for a build with work to
    do), except a scheduler's connection, made at once: a scheduler that cannot be reached is said before anything
    is planned or written. A context: closed at its end."""

    def __init__(self, scheduler: str | None, workers: int, progress: Progress) -> None:
        self.scheduler, self.workers, self.progress = scheduler, workers, progress
        self.runner: InProcess | OnDask | None = None
        self.dashboard: str | None = None
        if scheduler:
            self.get()

    def get(self) -> InProcess | OnDask:
        if self.runner is None:
            s, w = self.scheduler, self.workers
            self.runner = InProcess() if w == 0 and not s else OnDask(s, max(w, 1))
            self.dashboard = self.runner.dashboard
            if self.dashboard:
                self.progress.say(f"Dask dashboard: {self.dashboard}")
        return self.runner

    def close(self) -> None:
        runner, self.runner = self.runner, None
        if runner is not None:
            runner.close()

    def __enter__(self) -> Runners:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
    before: Callable[[int], None] = lambda layer: None,
) -> tuple[int, int]:
    """Every layer in turn: skipped when merged; else ``before(layer)`` (a check of the disk), the tasks of its
    chunks not yet written, then merged. The tasks run and resumed."""
    ran = resumed = 0
    for layer in range(n_layers):
        layer_tasks = tasks_of(layer)
        if merged(layer):
            progress.advance(len(layer_tasks))
            resumed += len(layer_tasks)
            continue
        before(layer)
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

    def finished() -> Path | None:
        files = targets.TargetFiles(Path(directory), rs.name)
        return targets.load(rs, Path(directory), verify=True).files.data if files.meta.exists() else None

    def finish(store, plan, seconds: float, workers: int) -> Path:
        info = {"seconds": seconds, "workers": workers, "peak_bytes": 2 * 16 * plan.chunk_lanes}
        return targets_store.finish(store, plan, info)

    table.prepare_directory(Path(directory))
    return _build_rows(
        rs, directory, targets_store, tasks.compute_targets, scheduler, workers, progress, finished,
        lambda store, w: targets_store.start(store, targets_store.make(rs, memory, w, chunk)), finish,
    )  # fmt: skip


def build_chances(
    rs: rules.RuleSet,
    directory: Path | str,
    values: np.ndarray,
    scheduler: str | None = None,
    workers: int | None = None,
    memory: int = chances_store.DEFAULT_MEMORY,
    progress: Progress | None = None,
    chunk: int | None = None,
) -> dict:
    """Build (or resume) the chances table of ``rs`` under the policy of its value table ``values`` (saved in
    ``directory``, which every worker reads) out of core, as :func:`build_targets` does the target table
    (``chunk``: state ids a task): the same files as ``pentadice solve`` writes, byte for byte. ValueError for
    Kiriki (no chances table)."""
    from pentadice.tables import chance_tables

    reason = chances_store.refusal(rs)
    if reason:
        raise ValueError(reason)
    checksum = stores.values_checksum(rs, values)

    def finished() -> Path | None:
        if not chance_tables.is_saved(rs, directory, values):
            return None
        return chance_tables.verify(rs, directory, values)[0]

    return _build_rows(
        rs, directory, chances_store, tasks.compute_chances, scheduler, workers, progress, finished,
        lambda store, w: chances_store.start(store, chances_store.make(rs, memory, w, chunk), checksum),
        lambda store, plan, seconds, _: chances_store.finish(store, plan, values, seconds),
    )  # fmt: skip


def _chunk_whole(module, store, task) -> bool:
    """Whether a task's chunk is written whole (``module.read_chunk`` checks it against its record)."""
    try:
        module.read_chunk(store, task)
    except stores.StoreError:
        return False
    return True


def _build_rows(
    rs: rules.RuleSet,
    directory: Path | str,
    module,
    compute: Callable,
    scheduler: str | None,
    workers: int | None,
    progress: Progress | None,
    finished: Callable[[], Path | None],
    start_plan: Callable,
    finish: Callable,
) -> dict:
    """The build of a table of rows of varying length (``module``: :mod:`pentadice.tables.targets_store` or
    :mod:`pentadice.tables.chances_store`): left alone when ``finished()`` finds it whole (TableError: damaged,
    built again), else planned or resumed (``start_plan(store, workers)``), its layers computed and merged, and
    ``finish(store, plan, seconds, workers)`` writing the table; the summary."""
    progress = progress or Progress()
    directory = Path(directory).resolve()
    workers = default_workers() if workers is None else workers
    store = module.store_of(directory, rs.name)
    start = time.perf_counter()
    runners = Runners(scheduler, workers, progress)  # a scheduler reached before anything is written
    with runners, table.writer_lock(store.lock_files):
        if not store.plan_file.exists():  # no build under way (its folder may hold only a file of the user's)
            try:
                path = finished()
                if path is not None:
                    return {"rules": rs.name, "built": False, "files": str(path), "bytes": path.stat().st_size}
            except TableError as e:
                progress.say(f"{e}: building it again")
        plan = start_plan(store, max(workers, 1))
        first_todo = module.resume_from(store, plan)
        runner = runners.get()  # the dashboard's line before the progress bar
        progress.total(plan.n_tasks)
        ran, resumed = _layers(
            runner, compute, rs, directory, len(plan.cuts), plan.tasks,
            merged=lambda layer: layer < first_todo,
            done=lambda task: _chunk_whole(module, store, task),
            merge=lambda layer: module.merge(store, plan, layer),
            progress=progress,
            before=lambda layer: module.check_layer(store, plan, layer),
        )  # fmt: skip
        runners.close()
        seconds = time.perf_counter() - start
        data = finish(store, plan, seconds, workers)
    return {
        "rules": rs.name,
        "built": True,
        "seconds": seconds,
        "tasks_run": ran,
        "tasks_resumed": resumed,
        "tasks": plan.n_tasks,
        "bytes": data.stat().st_size,
        "files": str(data),
        "dashboard": runners.dashboard,
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
