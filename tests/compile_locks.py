"""One compile of each kernel for the whole test session, not one per pytest-xdist worker.

Numba compiles a kernel the first time a process calls it with new argument types, loading it from its disk
cache when it is there. Two workers that first need the same kernel at the same time both compile it (seconds
each, on a machine of two cores). Here each compile of a (function, signature) takes a file lock that every worker
sees: the first worker compiles and writes the cache, the others wait and then load it from there. Numba's own
compiler lock is taken first, so that a worker's threads keep the order every compile already has (no two locks
taken the other way round); a compile inside a compile (a kernel's callees) follows the call graph, which has no
cycle, so two workers never wait for each other.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path


def serialise_compiles(directory: Path) -> None:
    """Make every Numba compile in this process wait for the same one in another process (``directory``: the
    session's lock files, shared by the workers)."""
    from filelock import FileLock
    from numba.core import sigutils
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.dispatcher import Dispatcher

    directory.mkdir(parents=True, exist_ok=True)
    original = Dispatcher.compile
    locks: dict[str, FileLock] = {}
    held = threading.Lock()

    def lock_of(key: str) -> FileLock:
        with held:
            if key not in locks:
                locks[key] = FileLock(str(directory / f"{key}.lock"), thread_local=False)
            return locks[key]

    def compile(self, sig):
        args, _ = sigutils.normalize_signature(sig)
        func = getattr(self, "py_func", None)
        if func is None or tuple(args) in self.overloads:
            return original(self, sig)
        key = hashlib.sha256(f"{func.__module__}.{func.__qualname__}:{args}".encode()).hexdigest()[:32]
        with global_compiler_lock, lock_of(key):
            return original(self, sig)

    Dispatcher.compile = compile
