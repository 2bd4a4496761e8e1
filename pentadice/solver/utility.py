"""Exponential-utility tables: for a risk parameter theta, ``sign(theta) * E[exp(theta * R)]`` of every state,
``R`` the points still to come, under the policy that maximises it (theta > 0 seeks risk, theta < 0 avoids it;
theta = 0 is the value table, solved elsewhere).

Solved backward exactly like the values (``pentadice.turn``), except that a box is worth its successor's
utility times ``exp(theta * points)`` (box points, Penta bonus and upper bonus) instead of successor plus
points: ``exp(theta * (points + R'))`` factorises, and the sign keeps "larger is better" for theta < 0 too.
Keeps are still averages over the dice and choices still maxima, so the turn reuses the solver's compiled
``keep_values`` and ``best_subkeeps``; only the successor rows and the hands' values are new here.

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

import itertools
import math
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from pentadice import rules, states
from pentadice.compiled import jit
from pentadice.rules import (
    BOX_FIELDS,
    F_A,
    F_KIND,
    F_ROW,
    K_FACE,
    K_PENTA,
    P_BOX_DATA,
    P_N_BOXES,
    P_N_ROWS,
    P_PENTA_BOX,
    P_PENTA_REPEAT,
    P_ROLLS,
    P_UPPER_THRESHOLD,
)
from pentadice.solver import kernels
from pentadice.turn import FIXED_POINT_TOLERANCE, MAX_FIXED_POINT_STEPS
from pentadice.turn_inputs import turn_inputs

LANES = kernels.LANES  # Penta's lanes (threshold 63); a rule set's own: RuleSet.lanes
MAX_THETA = 0.2
MAX_KIRIKI_THETA = 0.05  # P(five of a kind in a turn) <= 0.046: slope 0.046 * exp(50 * 0.05) = 0.56 < 1
MAX_EXPONENT = 600.0  # |theta| times the most points still to come stays below this (exp(709) overflows)
W = LANES  # rebound by the compiler

# Names the compiled functions find in their scope (rebound to the solver's compiled versions).
_ = (P_PENTA_REPEAT, P_ROLLS, P_UPPER_THRESHOLD, P_N_BOXES, P_N_ROWS, P_PENTA_BOX, P_BOX_DATA, BOX_FIELDS)
_ = (F_A, F_KIND, F_ROW, K_FACE, K_PENTA, FIXED_POINT_TOLERANCE, MAX_FIXED_POINT_STEPS)


def theta_successor_rows(U, p, n_dice, open_mask, penta_scored, theta, rows):
    """As :func:`pentadice.turn.successor_rows` (lane ``u`` = subtotal ``u``) with each row the next state's
    utility times ``exp(theta * upper bonus)``."""
    cap = p[P_UPPER_THRESHOLD]
    if repeats(p, open_mask, penta_scored):  # noqa: F821 (the solver's compiled function)
        r = p[P_BOX_DATA + BOX_FIELDS * p[P_PENTA_BOX] + F_ROW] + 1
        for u in range(W):
            rows[r, u] = U[penta_scored, open_mask, u]
    for b in range(p[P_N_BOXES]):
        if (open_mask >> b) & 1 == 0:
            continue
        nxt = open_mask & ~(1 << b)
        o = P_BOX_DATA + BOX_FIELDS * b
        kind = p[o + F_KIND]
        row = p[o + F_ROW]
        if kind == K_FACE:
            face = p[o + F_A]
            for c in range(n_dice + 1):
                a = c * face
                r = row + c
                for u in range(W):
                    bonus = upper_bonus(p, u, a)  # noqa: F821
                    f = math.exp(theta * bonus) if bonus > 0 else 1.0
                    rows[r, u] = U[penta_scored, nxt, min(u + a, cap)] * f
        elif kind != K_PENTA:
            for u in range(W):
                rows[row, u] = U[penta_scored, nxt, u]
        else:
            for f in range(2):
                for u in range(W):
                    rows[row + f, u] = U[f, nxt, u]


def theta_hand_values(p, hand_counts, scores, open_mask, penta_scored, theta, rows, out, points):
    """``out[h, u]``: hand ``h``'s utility after the last roll: the best legal box, its successor row times
    ``exp(theta * (points + Penta bonus))``."""
    n_boxes = p[P_N_BOXES]
    box_rows = np.empty(n_boxes, dtype=np.int64)
    box_factor = np.empty(n_boxes)
    for h in range(hand_counts.shape[0]):
        if scores[h, n_boxes] == 1:
            bonus = 0
            for b in range(n_boxes):
                points[b] = scores[h, b] if (open_mask >> b) & 1 == 1 else -1
        else:
            bonus = score_options(p, hand_counts[h], open_mask, penta_scored, points)  # noqa: F821
        n_options = 0
        for b in range(n_boxes):
            pts = points[b]
            if pts < 0:
                continue
            box_rows[n_options] = successor_row(p, b, pts)  # noqa: F821 (the compiled turn function, rebound)
            box_factor[n_options] = math.exp(theta * float(pts + bonus))
            n_options += 1
        for u in range(W):
            out[h, u] = -np.inf
        for i in range(n_options):
            r = box_rows[i]
            f = box_factor[i]
            for u in range(W):
                x = rows[r, u] * f
                if x > out[h, u]:
                    out[h, u] = x


def solve_theta_states(U, theta, p, n_dice, counts, scores, add, subs, weight, masks, penta_scored_flags, lo, hi):
    """The utility at the start of a turn of states ``lo <= i < hi`` of a layer, every lane, written into
    ``U`` (as :func:`pentadice.turn.solve_states`, Kiriki's secant steps included). Returns the most secant
    steps any state needed (more than MAX_FIXED_POINT_STEPS: no fixed point found)."""
    K = aligned_rows(counts.shape[0])  # noqa: F821
    B = aligned_rows(counts.shape[0])  # noqa: F821
    rows = aligned_rows(p[P_N_ROWS])  # noqa: F821
    points = np.empty(p[P_N_BOXES], dtype=np.int64)
    xa = np.empty(W)
    ya = np.empty(W)
    xb = np.empty(W)
    n_hands = weight.shape[0]
    total = float(6**n_dice)
    most = 0
    for i in range(lo, hi):
        open_mask = masks[i]
        penta_scored = penta_scored_flags[i]
        out = U[penta_scored, open_mask]
        repeating = repeats(p, open_mask, penta_scored)  # noqa: F821
        if repeating:
            for u in range(W):
                xa[u] = U[0, open_mask, u]
                out[u] = xa[u]
        step = 0
        while True:
            theta_successor_rows(U, p, n_dice, open_mask, penta_scored, theta, rows)
            theta_hand_values(p, counts[:n_hands], scores, open_mask, penta_scored, theta, rows, K, points)
            for _ in range(p[P_ROLLS] - 1):
                keep_values(add, n_hands, K)  # noqa: F821
                best_subkeeps(subs, n_hands, K, B)  # noqa: F821
            for u in range(W):
                B[0, u] = 0.0
            for h in range(n_hands):
                w = float(weight[h])
                for u in range(W):
                    B[0, u] += w * K[h, u]
            for u in range(W):
                out[u] = B[0, u] / total
            if not repeating:
                break
            if step == 0:
                for u in range(W):
                    ya[u] = out[u]
                    xb[u] = out[u]
            else:
                change = 0.0
                for u in range(W):
                    change = max(change, abs(out[u] - xb[u]) / max(1.0, abs(out[u])))
                if change <= FIXED_POINT_TOLERANCE:
                    break
                for u in range(W):
                    fa = ya[u] - xa[u]
                    fb = out[u] - xb[u]
                    nxt = out[u] if fb == fa else xb[u] - fb * (xb[u] - xa[u]) / (fb - fa)
                    xa[u] = xb[u]
                    ya[u] = out[u]
                    xb[u] = nxt
                    out[u] = nxt
            step += 1
            if step > MAX_FIXED_POINT_STEPS:
                break
        most = max(most, step)
    return most


def theta_turn_values(V, theta, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, L, rows, K, B, points):
    """One state's turn values for every lane under a table (``theta == 0``: ``V`` holds expected points and
    the solver's additive functions run; else ``V`` is the utility table of ``theta``): ``L[0, h, u]`` the
    hand ``h`` after the last roll, ``L[r, k, u]`` keeping multiset ``k`` with ``r`` rerolls left; ``rows``
    the successor rows (the box choice: row times ``exp(theta * points)``, or row plus points)."""
    n_hands = scores.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    if theta == 0.0:
        successor_rows(V, p, n_dice, open_mask, penta_scored, 0, rows)  # noqa: F821
        hand_values(p, counts[:n_hands], scores, open_mask, penta_scored, rows, K, points)  # noqa: F821
    else:
        theta_successor_rows(V, p, n_dice, open_mask, penta_scored, theta, rows)
        theta_hand_values(p, counts[:n_hands], scores, open_mask, penta_scored, theta, rows, K, points)
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


def target_hand_values(p, hand_counts, scores, Wt, rowix, open_mask, flag, sub, out, points):
    """End-game tables (``W`` = :data:`TARGET_LANES` lanes, lane ``d`` = the points to beat): ``out[h, d]``,
    the best legal box's win credit, the next state's row read ``gain`` lanes lower (1 below lane 0)."""
    cap = p[P_UPPER_THRESHOLD]
    n_boxes = p[P_N_BOXES]
    for h in range(hand_counts.shape[0]):
        if scores[h, n_boxes] == 1:
            bonus = 0
            for b in range(n_boxes):
                points[b] = scores[h, b] if (open_mask >> b) & 1 == 1 else -1
        else:
            bonus = score_options(p, hand_counts[h], open_mask, flag, points)  # noqa: F821
        for d in range(W):
            out[h, d] = -1.0
        for b in range(n_boxes):
            pts = points[b]
            if pts < 0:
                continue
            added = pts if p[P_BOX_DATA + BOX_FIELDS * b + F_KIND] == K_FACE else 0
            gain = pts + bonus + upper_bonus(p, sub, added)  # noqa: F821
            nflag = flag if b != p[P_PENTA_BOX] else (1 if pts > 0 else 0)
            row = Wt[rowix[open_mask & ~(1 << b)], nflag, min(sub + added, cap)]
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


_OWN = (theta_successor_rows, theta_hand_values, solve_theta_states, theta_turn_values)
_TARGET = (target_hand_values, target_turn_values, solve_target_states)
TARGET_LANES = 512  # the end game's lanes: points to beat 0..511 (a few turns gain less)


def _compile_own(lanes: int) -> types.SimpleNamespace:
    compiled = dict(vars(kernels.wide_for(lanes)))
    compiled["math"] = math
    for fn in kernels.compile_order(_OWN):
        compiled[fn.__name__] = kernels._compile(fn, compiled, lanes)
    return types.SimpleNamespace(**{fn.__name__: compiled[fn.__name__] for fn in _OWN})


_wide = {LANES: _compile_own(LANES)}


def wide_for(lanes: int) -> types.SimpleNamespace:
    """The utility kernels compiled for ``lanes`` lanes (``RuleSet.lanes``), made on first use."""
    if lanes not in _wide:
        _wide[lanes] = _compile_own(lanes)
        kernels.drop_stale_cache(list(vars(_wide[lanes]).values()))
    return _wide[lanes]


wide = _wide[LANES]  # 64 lanes: Penta, Yahtzee, Kiriki, Yatzy


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
kernels.drop_stale_cache([*vars(wide).values(), *vars(target).values()])
_ = jit  # every kernel here is compiled through pentadice.compiled.jit (by kernels._compile)


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
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    try:
        for masks, flags in states.layers(rs):
            if pool is None:
                most = wide.solve_theta_states(U, theta, *inputs, masks, flags, 0, len(masks))
            else:
                cuts = np.linspace(0, len(masks), threads * 4 + 1).astype(int)
                parts = [
                    pool.submit(wide.solve_theta_states, U, theta, *inputs, masks, flags, lo, hi)
                    for lo, hi in itertools.pairwise(cuts)
                    if hi > lo
                ]
                most = max(part.result() for part in parts)
            if most > MAX_FIXED_POINT_STEPS:
                raise ValueError(
                    f"no fixed point for theta {theta} under {rs.title}: a state comes back to itself often "
                    "enough that E[exp(theta R)] is infinite"
                )
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return U


def solve_endgame(rs: rules.RuleSet, max_open: int, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
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
    pool = ThreadPoolExecutor(threads) if threads > 1 else None
    try:
        for k in range(1, max_open + 1):
            masks = small[pop[small] == k].astype(np.int64)
            if pool is None:
                target.solve_target_states(Wt, rowix, *inputs, masks, 0, len(masks))
                continue
            cuts = np.linspace(0, len(masks), threads * 4 + 1).astype(int)
            parts = [
                pool.submit(target.solve_target_states, Wt, rowix, *inputs, masks, lo, hi)
                for lo, hi in itertools.pairwise(cuts)
                if hi > lo
            ]
            for part in parts:
                part.result()
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return Wt, rowix
