"""Backward induction over the states between turns, layer by layer of open boxes."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pentadice.game import rules, states
from pentadice.solver import layers
from pentadice.solver.turn_inputs import turn_inputs

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
    m2: np.ndarray | None = None  # the second moments, when solved in the same pass (``solve(moments=True)``)

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
    k.wide_for(rs.lanes).solve_states(V, 0.0, *turn_inputs(rs).layer(), empty, empty, 0, 0)
    return time.perf_counter() - start


def needs_compiling(rs: rules.RuleSet = rules.PENTA_RULES) -> bool:
    """Whether the solver's kernel for ``rs``'s lanes is not in Numba's cache yet (a first run): compiling
    takes seconds."""
    from pentadice.solver.compiled import cached

    return not cached(_kernels().wide_for(rs.lanes).solve_states)


def stages(rs: rules.RuleSet) -> int:
    """How many groups of states a solve goes through: the length of its progress."""
    return len(states.layers(rs))


def solve_values(rs: rules.RuleSet, progress: ProgressFn | None = None, threads: int = 1) -> np.ndarray:
    """Values of every state of rule set ``rs`` (all ``rs.lanes`` lanes, before unreachable states are blanked),
    the states of each layer shared out among ``threads`` threads (the compiled kernel releases the GIL). Every
    state is computed by the same code whatever the threads: the values are the same bits."""
    k = _kernels().wide_for(rs.lanes)
    inputs = turn_inputs(rs).layer()
    V = np.full((rs.n_flags, 1 << rs.n_boxes, rs.lanes), np.nan)
    V[:, 0, :] = 0.0  # game over: nothing more to score
    all_layers = states.layers(rs)
    with layers.Workers(threads) as workers:
        for i, (masks, penta_scored_flags) in enumerate(all_layers):
            workers.run(k.solve_states, (V, 0.0, *inputs, masks, penta_scored_flags), len(masks))
            if progress is not None:
                progress(i + 1, len(all_layers))
    return V


def solve(
    rs: rules.RuleSet, threads: int | None = None, progress: ProgressFn | None = None, moments: bool = False
) -> Solution:
    """Solve rule set ``rs`` exactly: the expected final score of every reachable state under optimal play.

    ``threads`` caps the worker threads (default: Numba's thread count, all cores); the result is the same bits
    whatever it is. ``moments``: the second moments too (``Solution.m2``), in the same pass
    (:func:`pentadice.solver.moments.solve_both`), the values still the same bits.
    """
    import numba

    from pentadice.solver import moments as moments_pass

    if threads is not None and not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
        raise ValueError(f"--threads must be between 1 and {numba.config.NUMBA_NUM_THREADS}, not {threads}")
    used = threads or numba.get_num_threads()
    m2 = None
    if moments:
        timings: dict = {}
        V, m2 = moments_pass.solve_both(rs, used, progress, timings)
        compile_seconds, solve_seconds = timings["compile_seconds"], timings["seconds"]
    else:
        compile_seconds = compile_kernels_for(rs)
        start = time.perf_counter()
        V = solve_values(rs, progress, used)
        solve_seconds = time.perf_counter() - start
    unreachable = ~states.reachable(rs)
    V = V[:, :, : rs.upper_threshold + 1]
    V[unreachable] = np.nan
    V = np.ascontiguousarray(V)
    if m2 is not None:
        m2 = m2[:, :, : rs.upper_threshold + 1]
        m2[unreachable] = np.nan
        m2 = np.ascontiguousarray(m2)
    return Solution(rs, V, compile_seconds, solve_seconds, used, m2)
