"""Backward induction over the states between turns, layer by layer of open boxes."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from pentadice import rules, states
from pentadice.turn_inputs import turn_inputs

ProgressFn = Callable[[int, int], None]
COMPILING_MESSAGE = "Compiling the solver (first run only; the summary says how long it took)..."


@dataclass
class Solution:
    """A solved rule set: ``values[penta_scored, open_mask, subtotal]``, NaN where a state cannot occur."""

    rules: rules.RuleSet
    values: np.ndarray
    compile_seconds: float
    solve_seconds: float
    threads: int

    @property
    def expected_score(self) -> float:
        """Expected final score at the start of a game under optimal play."""
        return float(self.values[0, self.rules.box_mask, 0])

    @property
    def states_solved(self) -> int:
        """Number of reachable states whose value the table holds."""
        return int(np.count_nonzero(~np.isnan(self.values)))


def _kernels():
    # Imported late: Numba's import costs a few hundred milliseconds that quick commands should not pay.
    from pentadice.solver import kernels

    return kernels


def compile_kernels(n_dice: int = 5) -> float:
    """Compile (or load from Numba's cache) the solver kernels; returns the seconds it took."""
    return compile_kernels_for(rules.PENTA_RULES.reduced(dice=n_dice))


def compile_kernels_for(rs: rules.RuleSet) -> float:
    """Compile (or load from Numba's cache) the solver kernel for ``rs``'s lanes; returns the seconds it took."""
    k = _kernels()
    start = time.perf_counter()
    V = np.zeros((rs.n_flags, 1 << rs.n_boxes, rs.lanes))
    empty = np.zeros(0, dtype=np.int64)
    k.wide_for(rs.lanes).solve_states(V, *turn_inputs(rs).layer(), empty, empty, 0, 0)
    return time.perf_counter() - start


def needs_compiling(rs: rules.RuleSet = rules.PENTA_RULES) -> bool:
    """Whether the solver's kernel for ``rs``'s lanes is not in Numba's cache yet (a first run): compiling
    takes seconds."""
    from pentadice.compiled import cached

    return not cached(_kernels().wide_for(rs.lanes).solve_states)


def stages(rs: rules.RuleSet) -> int:
    """How many groups of states a solve goes through: the length of its progress."""
    return len(states.layers(rs))


PARTS_PER_THREAD = 4  # a layer is cut in this many parts per thread, so that a slow part holds nobody up long


def solve_values(rs: rules.RuleSet, progress: ProgressFn | None = None, threads: int = 1) -> np.ndarray:
    """Values of every state of rule set ``rs`` (all ``rs.lanes`` lanes, before unreachable states are blanked),
    the states of each layer shared out among ``threads`` threads (the compiled kernel releases the GIL). Every
    state is computed by the same code whatever the threads: the values are the same bits."""
    k = _kernels().wide_for(rs.lanes)
    inputs = turn_inputs(rs).layer()
    V = np.full((rs.n_flags, 1 << rs.n_boxes, rs.lanes), np.nan)
    V[:, 0, :] = 0.0  # game over: nothing more to score
    layers = states.layers(rs)
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    try:
        for i, (masks, penta_scored_flags) in enumerate(layers):
            if pool is None:
                k.solve_states(V, *inputs, masks, penta_scored_flags, 0, len(masks))
            else:
                cuts = np.linspace(0, len(masks), threads * PARTS_PER_THREAD + 1).astype(int)
                parts = [
                    pool.submit(k.solve_states, V, *inputs, masks, penta_scored_flags, lo, hi)
                    for lo, hi in itertools.pairwise(cuts)
                    if hi > lo
                ]
                for part in parts:
                    part.result()
            if progress is not None:
                progress(i + 1, len(layers))
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return V


def solve(rs: rules.RuleSet, threads: int | None = None, progress: ProgressFn | None = None) -> Solution:
    """Solve rule set ``rs`` exactly: the expected final score of every reachable state under optimal play.

    ``threads`` caps the worker threads (default: Numba's thread count, all cores); the result is the same bits
    whatever it is.
    """
    import numba

    if threads is not None and not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
        raise ValueError(f"--threads must be between 1 and {numba.config.NUMBA_NUM_THREADS}, not {threads}")
    used = threads or numba.get_num_threads()
    compile_seconds = compile_kernels_for(rs)
    start = time.perf_counter()
    V = solve_values(rs, progress, used)
    solve_seconds = time.perf_counter() - start
    V = V[:, :, : rs.upper_threshold + 1]
    V[~states.reachable(rs)] = np.nan
    V = np.ascontiguousarray(V)
    return Solution(rs, V, compile_seconds, solve_seconds, used)
