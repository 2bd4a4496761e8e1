"""Numba for pentadice: where compiled code is cached, and the decorator every kernel is compiled with.

Numba caches compiled functions beside their sources (``__pycache__``), else in the user's cache directory
(``$XDG_CACHE_HOME/numba``, ``~/.cache/numba``), and fails at import when it can write to neither: a package
installed read-only and run by a user without a writable home. Here that case caches in a private directory
of the temporary directory instead, and where even that cannot be had, compiles without caching, saying so
once on standard error. ``NUMBA_CACHE_DIR``, when set, is the user's choice and is left alone.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

import numba

PACKAGE = Path(__file__).resolve().parent.parent
# The folders of the modules whose functions Numba compiles (the rules, the solver, the strategies, the simulator).
KERNEL_DIRS = (PACKAGE / "game", PACKAGE / "solver", PACKAGE / "players", PACKAGE / "simulator")


def _writable(directory: Path) -> bool:
    """Whether files can be created in ``directory`` (created if missing), as Numba's own check does."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
    except OSError:
        return False
    return True


def _private(directory: Path) -> bool:
    """Whether ``directory`` is ours alone (created 0700 if missing): a cache there cannot be planted by
    another user, which matters since Numba's cache files are loaded as code."""
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        st = os.lstat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022 and _writable(directory)


def _user_cache() -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "numba"
    try:
        return Path.home() / ".cache" / "numba"
    except (KeyError, RuntimeError):  # no home at all
        return None


def choose_cache() -> tuple[bool, str | None]:
    """``(cache, directory)``: whether to cache compiled code, and the directory to give Numba (None: its own
    choice works)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return True, None
    if all(_writable(d / "__pycache__") for d in KERNEL_DIRS):
        return True, None
    user = _user_cache()
    if user is not None and _writable(user):
        return True, None
    fallback = Path(tempfile.gettempdir()) / f"pentadice-numba-{os.getuid()}"
    if _private(fallback):
        return True, str(fallback)
    return False, None


CACHE, CACHE_DIR = choose_cache()
if CACHE_DIR is not None:
    # In the environment too: Numba reloads its configuration from the environment when that changes (as below),
    # which would otherwise drop the directory for kernels decorated later (no cache locator: an error).
    os.environ["NUMBA_CACHE_DIR"] = CACHE_DIR
    numba.config.CACHE_DIR = CACHE_DIR
if not CACHE:
    print(
        "pentadice: no writable directory for compiled code (the install, ~/.cache and the temporary directory "
        "are not writable): it is compiled again on each run; set NUMBA_CACHE_DIR to keep it",
        file=sys.stderr,
    )


# LLVM's SLP vectoriser (off in Numba by default) packs the turn code's blocks of 8 lanes with literal offsets
# into 512-bit instructions: the solver's turn takes less than half the time. It vectorises across lanes, never
# reassociates, so every value keeps its bits. The switch is process-wide and read when a function compiles, so
# it is set here, before any kernel compiles (every kernel is compiled through ``jit``), and in the environment
# too, since Numba reloads its configuration from the environment when that changes.
os.environ["NUMBA_SLP_VECTORIZE"] = "1"
numba.config.SLP_VECTORIZE = 1
# Numba's cache does not key on the switch: a function compiled without it would be reloaded as the slower code.
# Every kernel is therefore named after the switch as it stands when the kernel is decorated (``<name>_slp``),
# which names its cache files, so that an entry written with the switch off (by an earlier version) is never
# loaded in place of one written with it on, nor the other way round.
CACHE_TAG = "_slp"


def jit(fn=None, **options):
    """``numba.njit`` with caching wherever it can be had (see the module's docstring), under a name keyed on the
    SLP switch (see ``CACHE_TAG``)."""
    decorate = numba.njit(cache=CACHE, **options)

    def tagged(f):
        if numba.config.SLP_VECTORIZE and not f.__qualname__.endswith(CACHE_TAG):
            f.__qualname__ += CACHE_TAG
        return decorate(f)

    return tagged if fn is None else tagged(fn)


prange = numba.prange


def cached(dispatcher) -> bool:
    """Whether Numba's cache holds compiled code of ``dispatcher`` (its index lists an entry): False on a first
    run, when compiling takes seconds and a command should say so. True where this cannot be told (caching off,
    Numba's private cache layout changed): no message is better than a wrong one."""
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except AttributeError:
        return True
    except Exception:  # an unreadable index: Numba compiles again, and so it is not in the cache
        return False
