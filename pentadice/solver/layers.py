"""The driver of the backward passes: the states of a layer, cut into parts that threads share.

A layer's states depend only on earlier layers, so its parts run at once: each part is one call of a compiled
kernel ``kernel(*args, lo, hi)`` over states ``lo <= i < hi``, which releases the GIL. Every state is computed by
the same code whatever the threads, so a table is the same bits with one thread or many. The value, second-moment
and utility passes and the end-game tables run their layers here (the target table cuts its layers by each
state's lanes: ``solver.targets.part_cuts``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

PARTS_PER_THREAD = 4  # a layer is cut in this many parts per thread, so that a slow part holds nobody up long


class Workers:
    """Threads that share each layer's states (none with one thread: each layer is then one call); used as a
    context manager, shut down on the way out with the parts not started cancelled (an interrupted pass stops
    at once)."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.pool = ThreadPoolExecutor(threads) if threads > 1 else None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def run(self, kernel: Callable, args: tuple, n: int) -> list:
        """``kernel(*args, lo, hi)`` over the ``n`` states of a layer: one call with one thread, else parts of
        about equal size (:data:`PARTS_PER_THREAD` per thread) shared by the threads. The parts' results, in
        order."""
        if self.pool is None:
            return [kernel(*args, 0, n)]
        cuts = np.linspace(0, n, self.threads * PARTS_PER_THREAD + 1).astype(int)
        parts = [self.pool.submit(kernel, *args, lo, hi) for lo, hi in itertools.pairwise(cuts) if hi > lo]
        return [part.result() for part in parts]
