"""Exponential-utility tables: for a risk parameter theta, ``sign(theta) * E[exp(theta * R)]`` of every state,
``R`` the points still to come, under the policy that maximises it (theta > 0 seeks risk, theta < 0 avoids it;
theta = 0 is the value table, solved elsewhere).

Solved backward by the values' own turn (``pentadice.solver.turn``), with four operations of its own in place of the
value pass's (:data:`OPS`, rebound by :func:`pentadice.solver.kernels.compile_pass`): a box is worth its
successor's utility times ``exp(theta * points)`` (box points, Penta bonus and upper bonus) instead of successor
plus points: ``exp(theta * (points + R'))`` factorises, and the sign keeps "larger is better" for theta < 0 too.
Keeps are still averages over the dice and choices still maxima, so every other step is the value pass's.

Kiriki's self-returning states are solved with the solver's secant steps (one turn is again increasing,
convex and piecewise linear in the value of coming back, with slope ``P(come back) * exp(50 * theta)``, below 1
for the thetas used: see :data:`MAX_KIRIKI_THETA`).

Overflow: the largest score still to come in Penta is below 2,000 points (Yatzy's below 400), and |theta| is at
most :data:`MAX_THETA`, so ``exp(theta * R)`` stays within ``exp(+-400)``, far inside float64's range
(:func:`check_theta` checks the bound of each rule set).

Every size comes from the rule set's parameter vector ``p`` (boxes, successor rows, the Penta box if any) and
the arrays' shapes; the lanes (subtotals) are ``RuleSet.lanes``, each lane count with its own compiled build
(:func:`wide_for`).
"""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable

import numpy as np

from pentadice.game import rules, states
from pentadice.game.rules import P_N_BOXES, P_ROLLS, P_UPPER_THRESHOLD
from pentadice.solver import kernels, layers
from pentadice.solver.compiled import jit
from pentadice.solver.turn import MAX_FIXED_POINT_STEPS
from pentadice.solver.turn_inputs import turn_inputs

LANES = kernels.LANES  # Penta's lanes (threshold 63); a rule set's own: RuleSet.lanes
MAX_THETA = 0.2
MAX_KIRIKI_THETA = 0.05  # P(five of a kind in a turn) <= 0.046: slope 0.046 * exp(50 * 0.05) = 0.56 < 1
MAX_EXPONENT = 600.0  # |theta| times the most points still to come stays below this (exp(709) overflows)
W = LANES  # rebound by the compiler


# The utility pass's arithmetic: the turn of pentadice.solver.turn with these in place of the value pass's (the same
# names; kernels.compile_pass rebinds them). ``T`` is theta.


def successor_value(x, bonus, T):
    """The next state's utility times ``exp(theta * upper bonus)``."""
    return x * math.exp(T * bonus) if bonus > 0 else x


def option_gain(points, T):
    """``exp(theta * points)``: a box's factor (its points and Penta bonus)."""
    return math.exp(T * points)


def chosen(row, gain):
    """A box's utility: ``exp(theta * (points + R'))`` factorises."""
    return row * gain


def distance(new, old):
    """Kiriki's secant steps stop on a relative change (utilities reach ``exp(+-400)``)."""
    return abs(new - old) / max(1.0, abs(new))


def theta_turn_values(V, theta, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, L, rows, K, B):
    """One state's turn values for every lane under a table (``theta == 0``: ``V`` holds expected points and
    the value pass runs; else ``V`` is the utility table of ``theta``): ``pentadice.solver.turn.turn_levels``."""
    if theta == 0.0:
        value_levels(V, 0.0, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, L, rows, K, B)  # noqa: F821
    else:
        utility_levels(V, theta, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, L, rows, K, B)  # noqa: F821


def target_hand_values(p, hand_counts, scores, Wt, rowix, open_mask, flag, sub, out, points):
    """End-game tables (``W`` = :data:`TARGET_LANES` lanes, lane ``d`` = the points to beat): ``out[h, d]``,
    the best legal box's win credit, the next state's row read ``gain`` lanes lower (1 below lane 0)."""
    cap = p[P_UPPER_THRESHOLD]
    opt_box, _, opt_gain, n_opt, bonus = hand_options(p, hand_counts, scores, open_mask, flag)  # noqa: F821
    for h in range(hand_counts.shape[0]):
        for d in range(W):
            out[h, d] = -1.0
        for i in range(n_opt[h]):
            b = opt_box[h, i]
            pts = int(opt_gain[h, i]) - bonus[h]
            nmask, nflag, added = box_successor(p, b, pts, open_mask, flag)  # noqa: F821
            gain = int(opt_gain[h, i]) + upper_bonus(p, sub, added)  # noqa: F821
            row = Wt[rowix[nmask], nflag, min(sub + added, cap)]
            for d in range(W):
                e = d - gain
                x = 1.0 if e < 0 else row[e]
                if x > out[h, d]:
                    out[h, d] = x


def target_turn_values(Wt, rowix, p, n_dice, counts, scores, add, subs, open_mask, flag, sub, L, K, B, points):
    """One end-game state's turn, every lane ``d``: ``L[0, h, d]`` the hand ``h`` after the last roll,
    ``L[r, k, d]`` keeping multiset ``k`` with ``r`` rerolls left."""
    n_hands = scores.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    target_hand_values(p, counts[:n_hands], scores, Wt, rowix, open_mask, flag, sub, K, points)
    for h in range(n_hands):
        for u in range(W):
            L[0, h, u] = K[h, u]
    for r in range(1, n_rolls):
        keep_values(add, n_hands, K)  # noqa: F821
        if r < n_rolls - 1:
            best_subkeeps(subs, n_hands, K, B)  # noqa: F821
        for j in range(n_hands, n_keeps):
            for u in range(W):
                L[r, j, u] = K[j, u]


def solve_target_states(Wt, rowix, p, n_dice, counts, scores, add, subs, weight, masks, lo, hi):
    """End-game rows ``Wt[rowix[mask], flag, sub, d]`` of ``masks[lo:hi]`` (every flag and subtotal): the
    highest expected win credit (1 a win, 1/2 a tie) against a final score ``d`` points ahead, under the
    policy that maximises it. Their successors' rows must be solved."""
    K = aligned_rows(counts.shape[0])  # noqa: F821
    B = aligned_rows(counts.shape[0])  # noqa: F821
    points = np.empty(p[P_N_BOXES], dtype=np.int64)
    n_hands = weight.shape[0]
    total = float(6**n_dice)
    cap = p[P_UPPER_THRESHOLD]
    for i in range(lo, hi):
        open_mask = masks[i]
        for flag in range(Wt.shape[1]):
            for sub in range(cap + 1):
                target_hand_values(p, counts[:n_hands], scores, Wt, rowix, open_mask, flag, sub, K, points)
                for _ in range(p[P_ROLLS] - 1):
                    keep_values(add, n_hands, K)  # noqa: F821
                    best_subkeeps(subs, n_hands, K, B)  # noqa: F821
                out = Wt[rowix[open_mask], flag, sub]
                for u in range(W):
                    out[u] = 0.0
                for h in range(n_hands):
                    w = float(weight[h])
                    for u in range(W):
                        out[u] += w * K[h, u]
                for u in range(W):
                    out[u] = out[u] / total


OPS = {"successor_value": successor_value, "option_gain": option_gain, "chosen": chosen, "distance": distance}
_TARGET = (target_hand_values, target_turn_values, solve_target_states)
TARGET_LANES = 512  # the end game's lanes: points to beat 0..511 (a few turns gain less)


def _compile_own(lanes: int) -> types.SimpleNamespace:
    """The utility pass for ``lanes`` lanes: the turn with :data:`OPS`, and :func:`theta_turn_values`."""
    own = kernels.compile_pass("theta", OPS, lanes)
    scope = {"value_levels": kernels.wide_for(lanes).turn_levels, "utility_levels": own.turn_levels}
    levels = kernels._compile(theta_turn_values, scope, lanes)
    kernels.drop_stale_cache([levels], extra=[sys.modules[__name__]])
    return types.SimpleNamespace(solve_theta_states=own.solve_states, theta_turn_values=levels)


_wide: dict[int, types.SimpleNamespace] = {}


def wide_for(lanes: int) -> types.SimpleNamespace:
    """The utility kernels compiled for ``lanes`` lanes (``RuleSet.lanes``), made on first use."""
    if lanes not in _wide:
        _wide[lanes] = _compile_own(lanes)
    return _wide[lanes]


wide = wide_for(LANES)  # 64 lanes: Penta, Yahtzee, Kiriki, Yatzy


def _compile_target() -> types.SimpleNamespace:
    compiled: dict = {}
    for fn in kernels.TURN_FUNCTIONS:
        if fn.__name__ in ("keep_values", "best_subkeeps", "aligned_rows"):
            compiled[fn.__name__] = kernels._compile(fn, compiled, TARGET_LANES)
    compiled.update({k: v for k, v in vars(kernels.wide).items() if k not in compiled})
    for fn in kernels.compile_order(_TARGET):
        compiled[fn.__name__] = kernels._compile(fn, compiled, TARGET_LANES)
    return types.SimpleNamespace(**{fn.__name__: compiled[fn.__name__] for fn in _TARGET})


target = _compile_target()
kernels.drop_stale_cache(list(vars(target).values()), extra=[sys.modules[__name__]])
_ = jit  # every kernel here is compiled through pentadice.solver.compiled.jit (by kernels._compile)


def most_points(rs: rules.RuleSet) -> int:
    """An upper bound on the points a whole game of ``rs`` can score (Kiriki: its repeats included)."""
    from pentadice.solver import targets

    return targets.bound(rs, 0, rs.box_mask, 0)


def check_theta(rs: rules.RuleSet, theta: float) -> None:
    """ValueError when ``theta`` is outside what the tables support for ``rs`` (overflow, Kiriki's fixed point)."""
    if not math.isfinite(theta) or abs(theta) > MAX_THETA:
        raise ValueError(f"theta must be between -{MAX_THETA} and {MAX_THETA}, not {theta}")
    if abs(theta) * most_points(rs) > MAX_EXPONENT:
        raise ValueError(
            f"under {rs.title} |theta| {abs(theta)} could overflow exp(theta R): at most "
            f"{MAX_EXPONENT / most_points(rs):.4f}"
        )
    if rs.penta_repeat and theta > MAX_KIRIKI_THETA:
        raise ValueError(
            f"under {rs.title} theta must be at most {MAX_KIRIKI_THETA}: above it a repeated five of a kind "
            "can make E[exp(theta R)] grow without bound"
        )


def solve_theta(rs: rules.RuleSet, theta: float, threads: int = 1) -> np.ndarray:
    """The utility table of ``theta != 0`` for ``rs``: ``U[penta_scored, open_mask, lane]`` (``rs.lanes`` lanes,
    NaN for masks outside the game), ``sign(theta) * E[exp(theta * R)]`` under the policy that maximises it."""
    check_theta(rs, theta)
    if theta == 0.0:
        raise ValueError("theta 0 is the value table")
    inputs = turn_inputs(rs).layer()
    wide = wide_for(rs.lanes)
    U = np.full((rs.n_flags, 1 << rs.n_boxes, rs.lanes), np.nan)
    U[:, 0, :] = math.copysign(1.0, theta)  # game over: exp(0)
    with layers.Workers(threads) as workers:
        for masks, flags in states.layers(rs):
            most = max(workers.run(wide.solve_theta_states, (U, theta, *inputs, masks, flags), len(masks)), default=0)
            if most > MAX_FIXED_POINT_STEPS:
                raise ValueError(
                    f"no fixed point for theta {theta} under {rs.title}: a state comes back to itself often "
                    "enough that E[exp(theta R)] is infinite"
                )
    return U


def solve_endgame(
    rs: rules.RuleSet, max_open: int, threads: int = 1, progress: Callable[[int, int], None] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(Wt, rowix)``: for every state with at most ``max_open`` boxes open, the highest expected win credit
    (1 a win, 1/2 a tie) against a finished opponent ``d`` points ahead, ``Wt[rowix[mask], flag, sub, d]``
    for ``0 <= d < TARGET_LANES`` (``d < 0``: 1), shaped ``(masks, n_flags, threshold + 1, TARGET_LANES)``.
    Exact: the player maximises it with every later choice. Not for Kiriki (a filled Kiriki box may take more
    points without filling a box)."""
    if rs.penta_repeat:
        raise ValueError(f"the end-game tables do not cover {rs.title}'s repeated Kiriki box")
    game = rs.box_mask
    all_masks = np.arange(1 << rs.n_boxes, dtype=np.int64)
    pop = np.bitwise_count(all_masks)
    small = all_masks[((all_masks & ~game) == 0) & (pop <= max_open)]
    rowix = np.full(1 << rs.n_boxes, -1, dtype=np.int64)
    rowix[small] = np.arange(len(small))
    Wt = np.zeros((len(small), rs.n_flags, rs.upper_threshold + 1, TARGET_LANES))
    Wt[rowix[0], :, :, 0] = 0.5  # game over, level with the opponent: a tie
    inputs = turn_inputs(rs).layer()
    with layers.Workers(threads) as workers:
        by_open = [small[pop[small] == k].astype(np.int64) for k in range(1, max_open + 1)]
        work = np.cumsum([len(masks) for masks in by_open])  # progress in masks: each costs about the same
        for k, masks in enumerate(by_open, 1):
            workers.run(target.solve_target_states, (Wt, rowix, *inputs, masks), len(masks))
            if progress is not None:
                progress(int(work[k - 1]), int(work[-1]))
    return Wt, rowix
