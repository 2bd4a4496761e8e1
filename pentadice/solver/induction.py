"""Backward induction over the states between turns, layer by layer of open boxes."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pentadice import rules, states
from pentadice.turn_inputs import turn_inputs

ProgressFn = Callable[[int, int], None]


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
    k = _kernels()
    start = time.perf_counter()
    V = np.zeros((2, 1 << rules.N_BOXES, k.LANES))
    empty = np.zeros(0, dtype=np.int64)
    rs = rules.PENTA_RULES.reduced(dice=n_dice)
    k.solve_layer(V, *turn_inputs(rs).layer(), empty, empty)
    return time.perf_counter() - start


def stages(rs: rules.RuleSet) -> int:
    """How many groups of states a solve goes through: the length of its progress."""
    return len(states.layers(rs))


def solve_values(rs: rules.RuleSet, progress: ProgressFn | None = None) -> np.ndarray:
    """Values of every state of rule set ``rs`` (all 64 lanes, before unreachable states are blanked)."""
    k = _kernels()
    inputs = turn_inputs(rs).layer()
    V = np.full((2, 1 << rules.N_BOXES, k.LANES), np.nan)
    V[:, 0, :] = 0.0  # game over: nothing more to score
    layers = states.layers(rs)
    for i, (masks, penta_scored_flags) in enumerate(layers):
        k.solve_layer(V, *inputs, masks, penta_scored_flags)
        if progress is not None:
            progress(i + 1, len(layers))
    return V


def solve(rs: rules.RuleSet, threads: int | None = None, progress: ProgressFn | None = None) -> Solution:
    """Solve rule set ``rs`` exactly: the expected final score of every reachable state under optimal play.

    ``threads`` caps Numba's worker threads (default: all cores); the result is the same bits whatever it is.
    """
    import numba

    if threads is not None and not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
        raise ValueError(f"--threads must be between 1 and {numba.config.NUMBA_NUM_THREADS}, not {threads}")
    before = numba.get_num_threads()
    numba.set_num_threads(threads or before)
    try:
        compile_seconds = compile_kernels(rs.dice)
        start = time.perf_counter()
        V = solve_values(rs, progress)
        solve_seconds = time.perf_counter() - start
        used = numba.get_num_threads()
    finally:
        numba.set_num_threads(before)  # the cap holds for this solve only
    V = np.where(states.reachable(rs), V[:, :, : rs.upper_threshold + 1], np.nan)
    return Solution(rs, V, compile_seconds, solve_seconds, used)
