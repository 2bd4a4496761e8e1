"""One turn ("widget"): every value inside a turn, for many upper subtotals at once.

Plain Python that Numba compiles (``pentadice.solver.kernels``): the solver runs the compiled functions on 64
lanes at once, the advisor on one lane, compiled in batches or as plain Python for a single quick answer.
Each array row holds one value per lane; lane ``u`` stands for upper subtotal ``s0 + u``. The steps, from
the last roll back to the first:

1. :func:`successor_rows`: for each way of filling a box (box, upper points), the value of the next state
   seen from each subtotal, upper bonus included.
2. :func:`hand_values`: each hand's value after the last roll: the best legal box (the rules module says
   which boxes are legal and what they score).
3. :func:`keep_values`: a keep of k dice is worth the mean, over the six faces, of the keep with that face
   added; the hands (keeps of all the dice) are worth their hand values.
4. :func:`best_subkeeps`: the best keep inside a multiset is its own value or the best keep inside one of
   the multisets with one die fewer. For a hand, that is its value with one more roll left.

Functions here may call only each other and the rules module's compilable functions, by their bare names:
the compiler rebinds those names to the compiled versions. Each compiled function costs compile time on a
first run (Numba optimises a function again with every function it calls), so the call tree is kept
shallow: a turn calls the four steps directly, and small helpers are written out where they are used.
"""

from __future__ import annotations

import numpy as np

from pentadice.rules import (
    N_BOXES,
    P_PENTA_REPEAT,
    P_ROLLS,
    P_UPPER_THRESHOLD,
    PENTA,
    penta_filled,
    score_options,
    upper_bonus,
)

LANES = 64  # capped upper subtotals 0..63: the solver's lane count
# Lanes per row. Plain-Python callers (one situation at a time) use one lane; the compiler builds each function
# once per lane count with ``W`` rebound to a constant, so that the solver's lane loops have a fixed length.
W = 1
N_ROWS = 44  # successor rows: 6 upper boxes x 6 dice counts, 6 lower boxes, Penta at 0 and at full points
ROW_LOWER = 36
ROW_PENTA = 42
FIXED_POINT_TOLERANCE = 1e-12  # Kiriki's self-returning states: stop when a turn moves no value more
MAX_FIXED_POINT_STEPS = 100


def successor_rows(V, p, n_dice, open_mask, penta_scored, s0, rows):
    """Fill ``rows`` with the next state's value, per lane (subtotal ``s0 + lane``), for each way to fill an
    open box; and, where Kiriki lets five of a kind be added to a filled Penta box, the state itself (its
    current estimate in ``V``): that turn fills nothing."""
    cap = p[P_UPPER_THRESHOLD]
    if repeats(p, open_mask, penta_scored):
        dst = rows[ROW_PENTA + 1]
        src = V[penta_scored, open_mask]
        for u in range(W):
            dst[u] = src[s0 + u]
    for b in range(N_BOXES):
        if (open_mask >> b) & 1 == 0:
            continue
        nxt = open_mask & ~(1 << b)
        if b < 6:
            src = V[penta_scored, nxt]
            for c in range(n_dice + 1):
                a = c * (b + 1)
                dst = rows[b * 6 + c]
                for u in range(W):
                    dst[u] = src[min(s0 + u + a, cap)] + upper_bonus(p, s0 + u, a)
        elif b < PENTA:
            dst = rows[ROW_LOWER + b - 6]
            src = V[penta_scored, nxt]
            for u in range(W):
                dst[u] = src[s0 + u]
        else:
            for f in range(2):
                dst = rows[ROW_PENTA + f]
                src = V[f, nxt]
                for u in range(W):
                    dst[u] = src[s0 + u]


def hand_values(p, hand_counts, scores, open_mask, penta_scored, rows, out, points):
    """``out[h]``: value of hand ``h`` after the last roll, per lane: the best legal box.

    ``scores`` is :func:`pentadice.rules.score_table`: hands whose points do not depend on the state take
    them from there (every open box, at its normal points) instead of asking the rules again.
    """
    for h in range(hand_counts.shape[0]):
        if scores[h, N_BOXES] == 1:
            bonus = 0
            for b in range(N_BOXES):
                points[b] = scores[h, b] if (open_mask >> b) & 1 == 1 else -1
        else:
            bonus = score_options(p, hand_counts[h], open_mask, penta_scored, points)
        best = out[h]
        for u in range(W):
            best[u] = -np.inf
        for b in range(N_BOXES):
            pts = points[b]
            if pts < 0:
                continue
            # The successor row of the box (see successor_rows), then best = max(best, row + points) lane by lane.
            if b < 6:
                row = rows[b * 6 + pts // (b + 1)]
            elif b < PENTA:
                row = rows[ROW_LOWER + b - 6]
            else:
                row = rows[ROW_PENTA + (1 if pts > 0 else 0)]
            add = float(pts + bonus)
            for u in range(W):
                x = row[u] + add
                if x > best[u]:
                    best[u] = x


def keep_values(add, n_hands, K):
    """Rows ``n_hands..`` of ``K``: each keep's value, the mean over the six faces of the keep one die larger."""
    for k in range(n_hands, K.shape[0]):
        out = K[k]
        r0 = K[add[k, 0]]
        r1 = K[add[k, 1]]
        r2 = K[add[k, 2]]
        r3 = K[add[k, 3]]
        r4 = K[add[k, 4]]
        r5 = K[add[k, 5]]
        for u in range(W):
            out[u] = (r0[u] + r1[u] + r2[u] + r3[u] + r4[u] + r5[u]) / 6.0


def best_subkeeps(subs, n_hands, K, B):
    """``B[k]`` for every keep smaller than a hand: the best value of any keep inside multiset ``k`` (itself
    included); then each hand's row of ``K`` becomes the best of itself and of the keeps inside it.

    Every keep but the empty one has five entries in ``subs`` (repeats allowed), so each row is one
    fixed-length, vectorisable loop.
    """
    last = K.shape[0] - 1
    for u in range(W):
        B[last, u] = K[last, u]
    for k in range(last - 1, -1, -1):
        out = B[k] if k >= n_hands else K[k]
        own = K[k]
        b0 = B[subs[k, 0]]
        b1 = B[subs[k, 1]]
        b2 = B[subs[k, 2]]
        b3 = B[subs[k, 3]]
        b4 = B[subs[k, 4]]
        for u in range(W):
            m = own[u]
            m = b0[u] if b0[u] > m else m
            m = b1[u] if b1[u] > m else m
            m = b2[u] if b2[u] > m else m
            m = b3[u] if b3[u] > m else m
            out[u] = b4[u] if b4[u] > m else m


def repeats(p, open_mask, penta_scored):
    """Whether a turn in this state can lead back to it (Kiriki: five of a kind added to the Penta box)."""
    return p[P_PENTA_REPEAT] == 1 and penta_scored == 1 and penta_filled(p, open_mask) and open_mask != 0


def aligned_rows(n_rows):
    """An uninitialised ``(n_rows, W)`` float64 array starting on a 64-byte boundary (a cache line), so that no
    512-bit load of a row straddles two lines."""
    buf = np.empty(n_rows * W + 8)
    skip = ((64 - buf.ctypes.data % 64) % 64) // 8
    return buf[skip : skip + n_rows * W].reshape((n_rows, W))


def solve_states(V, p, n_dice, counts, scores, add, subs, weight, masks, penta_scored_flags, lo, hi):
    """The value at the start of a turn of each state ``(masks[i], penta_scored_flags[i])``, ``lo <= i < hi``,
    per lane, written into ``V``: independent states of one layer, whose values depend only on earlier layers.

    One turn's value: the hands' values after the last roll, then one roll earlier (keep values, best
    sub-keeps) for each further roll, then the hands weighted by their odds.

    A state that can lead back to itself has the value that solves V = T(V), where T is one turn with V as
    the value of coming back. T is increasing, convex and piecewise linear, with slope below 1 (the chance of
    coming back), so secant steps on T(x) - x, from below, reach the fixed point in a few turns; they stop
    once a turn changes no lane by more than ``FIXED_POINT_TOLERANCE``. They start from the value of the same
    boxes with the Penta box at 0, a lower bound that the solver computes first.

    (One function rather than a turn function called per state: each level of compiled calls costs compile
    time on a first run.)
    """
    K = aligned_rows(counts.shape[0])
    B = aligned_rows(counts.shape[0])
    rows = aligned_rows(N_ROWS)
    points = np.empty(N_BOXES, dtype=np.int64)
    xa = np.empty(W)
    ya = np.empty(W)
    xb = np.empty(W)
    n_hands = weight.shape[0]
    total = float(6**n_dice)
    for i in range(lo, hi):
        open_mask = masks[i]
        penta_scored = penta_scored_flags[i]
        out = V[penta_scored, open_mask]
        repeating = repeats(p, open_mask, penta_scored)
        if repeating:
            start = V[0, open_mask]
            for u in range(W):
                xa[u] = start[u]
                out[u] = start[u]
        step = 0
        while True:
            # One turn, with ``out`` as the value of coming back (Kiriki).
            successor_rows(V, p, n_dice, open_mask, penta_scored, 0, rows)
            hand_values(p, counts[:n_hands], scores, open_mask, penta_scored, rows, K, points)
            for _ in range(p[P_ROLLS] - 1):  # one roll earlier: keeps worth their reroll, hands one more roll
                keep_values(add, n_hands, K)
                best_subkeeps(subs, n_hands, K, B)
            acc = B[0]
            for u in range(W):
                acc[u] = 0.0
            for h in range(n_hands):
                w = float(weight[h])
                row = K[h]
                for u in range(W):
                    acc[u] += w * row[u]
            for u in range(W):
                out[u] = acc[u] / total
            if not repeating:
                break
            if step == 0:
                for u in range(W):
                    ya[u] = out[u]
                    xb[u] = out[u]
            else:
                change = 0.0
                for u in range(W):
                    change = max(change, abs(out[u] - xb[u]))
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


def score_values(V, p, counts, open_mask, penta_scored, sub, points, out):
    """``out[b]``: the points still to come if the dice go into box ``b`` now (box points, Penta bonus, upper
    bonus, then the next state's value); NaN where the box may not take them. Returns the Penta bonus."""
    bonus = score_options(p, counts, open_mask, penta_scored, points)
    cap = p[P_UPPER_THRESHOLD]
    for b in range(N_BOXES):
        pts = points[b]
        if pts < 0:
            out[b] = np.nan
            continue
        added = pts if b < 6 else 0
        nxt_penta_scored = penta_scored if b != PENTA else (1 if pts > 0 else 0)
        nxt = V[nxt_penta_scored, open_mask & ~(1 << b), min(sub + added, cap)]
        # The same sums in the same order as hand_values, so both give the same bits.
        out[b] = (nxt + upper_bonus(p, sub, added)) + float(pts + bonus)
    return bonus


def situation_values(
    V,
    p,
    n_dice,
    n_hands,
    counts,
    scores,
    add,
    subs,
    hand,
    open_mask,
    penta_scored,
    sub,
    rerolls,
    K,
    B,
    rows,
    points,
    box_out,
):
    """All option values of one situation (one lane): ``box_out`` as :func:`score_values`; with rerolls left,
    ``K[k, 0]`` is the value still to come of keeping multiset ``k`` and rerolling the rest. Returns the
    Penta bonus of scoring the dice now."""
    if rerolls > 0:
        successor_rows(V, p, n_dice, open_mask, penta_scored, sub, rows)
        hand_values(p, counts[:n_hands], scores, open_mask, penta_scored, rows, K, points)
        for _ in range(rerolls):
            keep_values(add, n_hands, K)
            best_subkeeps(subs, n_hands, K, B)
    return score_values(V, p, counts[hand], open_mask, penta_scored, sub, points, box_out)
