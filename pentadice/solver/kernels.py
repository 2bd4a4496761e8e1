"""The turn functions of ``pentadice.solver.turn``, compiled by Numba, and the solver of a run of states.

``_compile`` compiles a plain function of ``turn`` or ``rules`` with its callees rebound to their compiled
versions, so that one source serves both the compiled solver and plain-Python callers. Functions compile on
their first call only: the solver and the simulator compile the 64-lane versions (``wide``), which they
share (same argument types, so one cache entry each), and batches of advice the one-lane ones (``narrow``).

No kernel here is ``parallel=True``: Numba's parallel compilation costs seconds on a first run. The solver's
threads are Python threads running ``solve_states`` on parts of a layer, with the GIL released (every
compiled function releases it).
"""

from __future__ import annotations

import hashlib
import sys
import types
import warnings
from pathlib import Path

from pentadice.game import rules
from pentadice.solver import turn
from pentadice.solver.compiled import jit


def _compile(fn, compiled: dict, lanes: int, tag: str = ""):
    """``fn`` compiled (:func:`compiled.jit`) for rows of ``lanes`` lanes, its compiled callees rebound;
    ``tag`` names the pass it is built for, when not the value pass."""
    scope = dict(fn.__globals__)
    scope.update(compiled)
    scope["W"] = lanes
    clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    # One cache entry per pass and lane count: Numba names cache files after the qualified name.
    clone.__qualname__ = f"{fn.__qualname__}{'_' + tag if tag else ''}_w{lanes}"
    clone.__module__ = fn.__module__
    clone.__doc__ = fn.__doc__
    return jit(clone, nogil=True)


def compile_order(functions) -> tuple:
    """``functions`` ordered so that each comes after the ones among them it calls (by name, as the compiler
    rebinds them): the order :func:`_compile_all` needs, derived rather than written by hand (the reverse gives
    a TypingError). ValueError on a cycle, which compiled code cannot have."""
    by_name = {fn.__name__: fn for fn in functions}
    calls = {name: {n for n in fn.__code__.co_names if n in by_name and n != name} for name, fn in by_name.items()}
    ordered: list = []
    done: set[str] = set()
    while len(done) < len(by_name):
        ready = sorted(n for n in by_name if n not in done and calls[n] <= done)
        if not ready:
            raise ValueError(f"these turn functions call each other in a cycle: {sorted(set(by_name) - done)}")
        for name in ready:
            ordered.append(by_name[name])
            done.add(name)
    return tuple(ordered)


def _module_functions(module) -> list:
    return [f for f in vars(module).values() if isinstance(f, types.FunctionType) and f.__module__ == module.__name__]


# Every function of ``turn`` and the rules' compilable ones, callees first.
TURN_FUNCTIONS = compile_order([*rules.COMPILED, *_module_functions(turn)])


def _compile_all(lanes: int) -> types.SimpleNamespace:
    """Every turn function compiled for ``lanes`` lanes."""
    compiled: dict = {}
    for fn in TURN_FUNCTIONS:
        compiled[fn.__name__] = _compile(fn, compiled, lanes)
    return types.SimpleNamespace(**compiled)


# The value pass's arithmetic in ``turn`` that another pass of the max-plus family replaces (see turn.py).
PASS_OPS = ("successor_value", "option_gain", "chosen", "distance")


def reaching(names) -> set[str]:
    """The turn functions that call any of ``names``, directly or through other turn functions."""
    found = set(names)
    grew = True
    while grew:
        grew = False
        for fn in TURN_FUNCTIONS:
            if fn.__name__ not in found and found & set(fn.__code__.co_names):
                found.add(fn.__name__)
                grew = True
    return found - set(names)


def compile_pass(tag: str, ops: dict, lanes: int) -> types.SimpleNamespace:
    """The turn functions of another pass of the max-plus family, for ``lanes`` lanes: ``ops`` (plain functions
    named as :data:`PASS_OPS`) replace the value pass's arithmetic; only the functions that reach them are
    compiled again (under ``tag``), the others are the value pass's own. Numba keys its cache on a function's
    own file: :func:`drop_stale_cache` with the ops' module as well keeps a changed op from running stale."""
    if set(ops) != set(PASS_OPS):
        raise ValueError(f"a pass supplies exactly {PASS_OPS}, not {sorted(ops)}")
    compiled = dict(vars(wide_for(lanes) if lanes > 1 else narrow))
    for name in PASS_OPS:
        compiled[name] = _compile(ops[name], compiled, lanes, tag)
    again = reaching(PASS_OPS)
    for fn in TURN_FUNCTIONS:
        if fn.__name__ in again:
            compiled[fn.__name__] = _compile(fn, compiled, lanes, tag)
    ns = types.SimpleNamespace(**compiled)
    modules = {sys.modules[f.__module__] for f in ops.values()}
    drop_stale_cache([compiled[n] for n in (*PASS_OPS, *sorted(again))], extra=modules)
    return ns


LANES = 64  # the lanes of Penta's tables (upper threshold 63); other rule sets: RuleSet.lanes
_wide = {LANES: _compile_all(LANES)}


def wide_for(lanes: int) -> types.SimpleNamespace:
    """The turn functions compiled for ``lanes`` lanes (``RuleSet.lanes``: 64 or 80), made on first use."""
    if lanes not in _wide:
        _wide[lanes] = _compile_all(lanes)
        drop_stale_cache(list(vars(_wide[lanes]).values()))
    return _wide[lanes]


wide = _wide[LANES]  # the solver: 64 subtotals at once
narrow = _compile_all(1)  # the advisor: one situation's subtotal
aligned_rows = wide.aligned_rows
solve_states = wide.solve_states  # the solver: a run of independent states (releases the GIL)


def drop_stale_cache(dispatchers, extra=()) -> None:
    """Empty Numba's cache of ``dispatchers`` when ``rules.py``, ``turn.py`` or a module of ``extra`` (the
    files the dispatchers are built from besides their own) changed since it was written.

    Numba keys a cached function on its own source file only, and these functions compile in the functions
    they call from other files: without this a changed rule would silently run the old compiled one.
    """
    modules = (rules, turn, *sorted(extra, key=lambda m: m.__name__))
    sources = b"".join(Path(m.__file__).read_bytes() for m in modules)
    stamp_text = hashlib.sha256(sources).hexdigest()
    try:
        cache = dispatchers[0]._cache
        if not hasattr(cache, "_cache_path"):  # caching is off (no writable place): nothing cached to drop
            return
        # One stamp per build (its qualified name carries the pass and the lanes: 64 and 80 apart).
        first = dispatchers[0]
        name = getattr(getattr(first, "py_func", None), "__qualname__", None) or first.__name__
        stamp = Path(cache._cache_path) / f"pentadice-{name}.sha256"
        if stamp.exists() and stamp.read_text() == stamp_text:
            return
        for d in dispatchers:
            d._cache.flush()
        stamp.write_text(stamp_text)
    except AttributeError as e:  # Numba's private cache layout changed: say so, never run stale rules silently
        warnings.warn(
            f"pentadice cannot check Numba's cache for stale compiled rules ({e}); after editing rules.py, "
            "turn.py or a pass's operations run `make clean`",
            RuntimeWarning,
            stacklevel=2,
        )
    except OSError:  # the cache directory cannot be written: Numba will not write stale entries there either
        pass


drop_stale_cache([*vars(wide).values(), *vars(narrow).values()])
