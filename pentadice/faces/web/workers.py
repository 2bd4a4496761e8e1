"""Several server processes on one listening socket (``serve --workers N``): the socket is bound once, then
``N`` processes are forked, each loading its own tables and answering from them, the kernel handing each new
connection to one of them. What every process must see goes through the games database (games, moves) or the
shared block of :class:`~pentadice.faces.web.preparing.SharedStatus` (the tables' preparation).

This process only watches: a signal that stops it (Ctrl-C, SIGTERM) is passed on to the workers, which finish
the requests under way; a worker that dies is started again (at most :data:`RESTARTS` times in
:data:`RESTART_WINDOW` seconds: a worker that keeps failing, a damaged table say, stops the server)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import traceback
from collections.abc import Callable

import click

RESTARTS = 5  # worker restarts allowed in RESTART_WINDOW seconds; beyond, the server stops
RESTART_WINDOW = 600.0
log = logging.getLogger("pentadice.web")


def run_workers(count: int, work: Callable[[int, bool], None]) -> int:
    """Run ``work(index, again)`` in ``count`` forked processes until a signal stops them (``again``: a worker
    started again after it ended); the exit status (0: stopped by a signal, 1: workers kept dying)."""
    children: dict[int, int] = {}
    stopping: list[int] = []
    restarts: list[float] = []

    def spawn(index: int, again: bool = False) -> None:
        pid = os.fork()
        if pid == 0:  # the worker: its own signal handlers (uvicorn's), its own exit
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.default_int_handler)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                work(index, again)
            except KeyboardInterrupt:
                pass
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
            except click.ClickException as e:  # a failure in words (a table, the database): one line
                e.show()
                code = e.exit_code
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        children[pid] = index

    def stop(signum: int, _frame) -> None:
        stopping.append(signum)
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for index in range(count):
            spawn(index)
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            index = children.pop(pid, None)
            if index is None or stopping:
                continue
            now = time.monotonic()
            restarts[:] = [t for t in restarts if now - t < RESTART_WINDOW] + [now]
            log.warning("worker %d ended (status %d); starting it again", index, status)
            if len(restarts) > RESTARTS:
                log.error("workers keep ending: the server stops")
                stop(signal.SIGTERM, None)
                continue
            spawn(index, again=True)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    return 0 if stopping else 1
