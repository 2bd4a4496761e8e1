"""Many situations at once: the advisor's option values computed in parallel by compiled code."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pentadice.game.rules import P_N_ROWS
from pentadice.solver.compiled import jit, prange
from pentadice.solver.kernels import drop_stale_cache, narrow

situation_values = narrow.situation_values


@jit(parallel=True)
def evaluate_arrays(
    V,
    p,
    n_dice,
    counts,
    scores,
    add,
    subs,
    subkeeps,
    hands,
    open_masks,
    penta_scored_flags,
    subtotals,
    rerolls,
    keep_out,
    box_out,
    points_out,
    bonus_out,
):
    """Fill, for each situation ``i``, ``keep_out[i, j]`` (the value still to come of keep ``subkeeps[hand, j]``),
    ``box_out[i]`` and ``points_out[i]`` (see ``turn.score_values``) and ``bonus_out[i]``."""
    n_hands = subkeeps.shape[0]
    n_keeps = counts.shape[0]
    fixed = (V, p, n_dice, n_hands, counts, scores, add, subs)  # the same for every situation
    for i in prange(hands.shape[0]):
        K = np.empty((n_keeps, 1))
        B = np.empty((n_keeps, 1))
        rows = np.empty((p[P_N_ROWS], 1))  # the rule set's successor rows
        h = hands[i]
        bonus_out[i] = situation_values(
            *fixed,
            h,
            open_masks[i],
            penta_scored_flags[i],
            subtotals[i],
            rerolls[i],
            K,
            B,
            rows,
            points_out[i],
            box_out[i],
        )
        for j in range(subkeeps.shape[1]):
            k = subkeeps[h, j]
            keep_out[i, j] = K[k, 0] if k >= 0 and rerolls[i] > 0 else np.nan


drop_stale_cache([evaluate_arrays])


def evaluate(advisor, situations: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Raw option values of many situations: ``(keep_values, box_values, points, bonus)``, one row each."""
    n = len(situations)
    states = np.array([advisor.state_of(s) for s in situations], dtype=np.int64).reshape(n, 4)
    rerolls = np.array([s.rolls_left for s in situations], dtype=np.int64)
    return evaluate_states(
        advisor,
        np.ascontiguousarray(states[:, 3]),
        np.ascontiguousarray(states[:, 0]),
        np.ascontiguousarray(states[:, 2]),
        np.ascontiguousarray(states[:, 1]),
        rerolls,
    )


def evaluate_states(advisor, hands, open_masks, penta_scored, subtotals, rerolls):
    """:func:`evaluate` of situations given by their state: int64 arrays of hands, open masks, Penta flags,
    upper subtotals and rerolls left."""
    n = len(hands)
    inputs = advisor.inputs
    t = inputs.tables
    keep_out = np.empty((n, t.subkeeps.shape[1]))
    n_boxes = advisor.rules.n_boxes
    box_out = np.empty((n, n_boxes))
    points_out = np.empty((n, n_boxes), dtype=np.int64)
    bonus_out = np.empty(n, dtype=np.int64)
    tables = (t.counts, inputs.scores, t.add, t.subs, t.subkeeps)
    states = (hands, open_masks, penta_scored, subtotals, rerolls)
    evaluate_arrays(advisor.values, inputs.p, inputs.n_dice, *tables, *states, keep_out, box_out, points_out, bonus_out)
    return keep_out, box_out, points_out, bonus_out
