"""Ctrl-C and SIGTERM held back where raising them at once would do harm.

Two places: while files are renamed into place (a table's three files must all be renamed, or none), and while
Numba compiles or loads compiled code (an exception raised inside its compiler callbacks is printed as
"Exception ignored" with a traceback, and the work goes on). Python runs signal handlers in the main thread,
whichever thread the signal hit, so holding them here holds against signals sent to worker threads too.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import TracebackType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class CommittedInterrupt(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) arrived while files were renamed into place: the renames were finished first, so
    the new files are there, whole."""


class Held:
    """A block during which SIGINT and SIGTERM are only noted; :meth:`check` raises KeyboardInterrupt for one
    that arrived (call it at safe points), and leaving the block raises it too (``committed``:
    :class:`CommittedInterrupt`, saying the block's work was done)."""

    def __init__(self, committed: bool = False) -> None:
        self.committed = committed
        self.arrived: list[int] = []
        self.previous: dict = {}

    def __enter__(self) -> Held:
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.signal(s, self._note) for s in SIGNALS}
        return self

    def _note(self, signum: int, frame: object) -> None:
        self.arrived.append(signum)

    def check(self) -> None:
        """Raise KeyboardInterrupt if a signal arrived: a point where stopping is safe."""
        if self.arrived:
            raise KeyboardInterrupt

    def steps(self, progress: Callable[[int, int], None] | None) -> Callable[[int, int], None]:
        """The progress callback of a job in stages: each stage done is told to ``progress`` (if any), then a
        signal that arrived is raised (:meth:`check`), so the job stops between two stages."""

        def step(done: int, total: int) -> None:
            if progress is not None:
                progress(done, total)
            self.check()

        return step

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for s, handler in self.previous.items():
            signal.signal(s, handler)
        if self.arrived and kind is None:
            raise CommittedInterrupt if self.committed else KeyboardInterrupt
