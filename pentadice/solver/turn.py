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

This turn is every pass of the max-plus family (choices are maxima, keeps are means): the values, and with
four operations of its own in place of :func:`successor_value`, :func:`option_gain`, :func:`chosen` and
:func:`distance`, the exponential utility (``pentadice.solver.kernels.compile_pass``; ``docs/solver.md``, "One
traversal, many passes"). Which boxes a hand may fill and where each leads are the rules module's
(:func:`pentadice.game.rules.successors`, :func:`pentadice.game.rules.hand_options`).

Functions here may call only each other and the rules module's compilable functions, by their bare names:
the compiler rebinds those names to the compiled versions. Each compiled function costs compile time on a
first run (Numba optimises a function again with every function it calls), so the call tree is kept
shallow: a turn calls the four steps directly, and small helpers are written out where they are used.
"""

from __future__ import annotations

import numpy as np

from pentadice.game import rules
from pentadice.game.rules import box_successor, comes_back, hand_options, score_options, successors, upper_bonus

# The solver runs ``RuleSet.lanes`` lanes (the capped subtotals 0..threshold, rounded up to blocks of 16: 64 for
# a threshold of 63, 80 for 75); lanes past the threshold compute values nobody reads.
# Lanes per row. Plain-Python callers (one situation at a time) use one lane; the compiler builds each function
# once per lane count with ``W`` rebound to a constant, so that the solver's lane loops have a fixed length.
W = 1
# The wide kernels' hot lane loops are written as blocks of lanes with literal offsets (8 lanes: one 512-bit
# register of float64), all loads of a block before its stores, which LLVM's SLP vectoriser turns into vector
# instructions (see pentadice.solver.compiled); the plain ``for u in range(W)`` loop that the compiler's loop vectoriser
# gets runs less than half as fast. Vectorising across lanes leaves each lane's arithmetic, and so its bits,
# unchanged. ``W`` is 1 (the plain loops; ``W < BLOCK`` is a constant, so the compiler drops the branch not
# taken) or a multiple of HAND_BLOCK.
BLOCK = 8
HAND_BLOCK = 16  # hand values: 16 lanes of a hand (two registers) stay in registers while every box is tried
# Successor rows (``RuleSet.n_rows``; each box's first row is in the rule set's parameters): an upper box has
# one row per count of its face (0..dice), the Penta box two (filled at 0, with its points), any other box one.
FIXED_POINT_TOLERANCE = 1e-12  # Kiriki's self-returning states: stop when a turn moves no value more
MAX_FIXED_POINT_STEPS = 100


def successor_rows(V, p, n_dice, open_mask, penta_scored, s0, rows, T):
    """Fill ``rows`` with the next state's value, per lane (subtotal ``s0 + lane``), for each way to fill an
    open box (:func:`pentadice.game.rules.successors`: the rows of the rules' successor_row), the upper bonus it pays
    included; and, where Kiriki lets five of a kind be added to a filled Penta box, the state itself (its
    current estimate in ``V``, in the Penta box's second row): that turn fills nothing. ``T``: the pass's
    parameter (:func:`successor_value`)."""
    cap = p[rules.P_UPPER_THRESHOLD]
    succ, _ = successors(p, n_dice, open_mask, penta_scored)
    for i in range(succ.shape[0]):
        r, nxt, f, a = succ[i, rules.S_ROW], succ[i, rules.S_MASK], succ[i, rules.S_FLAG], succ[i, rules.S_ADD]
        for u in range(W):
            s = s0 + u
            rows[r, u] = successor_value(V[f, nxt, min(s + a, cap)], upper_bonus(p, s, a), T)


def hand_values(p, hand_counts, scores, open_mask, penta_scored, rows, out, T):
    """``out[h]``: value of hand ``h`` after the last roll, per lane: the best legal box
    (:func:`pentadice.game.rules.hand_options`), a successor row and the box's gain (:func:`option_gain` of its
    points, once per box) taken together by :func:`chosen` (``T``: the pass's parameter)."""
    _, opt_row, opt_points, n_opt, _ = hand_options(p, hand_counts, scores, open_mask, penta_scored)
    gains = np.empty(opt_points.shape[1])
    for h in range(hand_counts.shape[0]):
        n_options = n_opt[h]
        box_rows = opt_row[h]
        for i in range(n_options):
            gains[i] = option_gain(opt_points[h, i], T)
        if W < HAND_BLOCK:
            for u in range(W):
                out[h, u] = -np.inf
            for i in range(n_options):
                r = box_rows[i]
                add = gains[i]
                for u in range(W):
                    x = chosen(rows[r, u], add)
                    if x > out[h, u]:
                        out[h, u] = x
            continue
        for j in range(0, W, HAND_BLOCK):  # 16 lanes stay in registers (2 of 512 bits) while every box is tried
            m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = m8 = m9 = m10 = m11 = m12 = m13 = m14 = m15 = -np.inf
            for i in range(n_options):
                r = box_rows[i]
                add = gains[i]
                x = chosen(rows[r, j], add)
                m0 = x if x > m0 else m0
                x = chosen(rows[r, j + 1], add)
                m1 = x if x > m1 else m1
                x = chosen(rows[r, j + 2], add)
                m2 = x if x > m2 else m2
                x = chosen(rows[r, j + 3], add)
                m3 = x if x > m3 else m3
                x = chosen(rows[r, j + 4], add)
                m4 = x if x > m4 else m4
                x = chosen(rows[r, j + 5], add)
                m5 = x if x > m5 else m5
                x = chosen(rows[r, j + 6], add)
                m6 = x if x > m6 else m6
                x = chosen(rows[r, j + 7], add)
                m7 = x if x > m7 else m7
                x = chosen(rows[r, j + 8], add)
                m8 = x if x > m8 else m8
                x = chosen(rows[r, j + 9], add)
                m9 = x if x > m9 else m9
                x = chosen(rows[r, j + 10], add)
                m10 = x if x > m10 else m10
                x = chosen(rows[r, j + 11], add)
                m11 = x if x > m11 else m11
                x = chosen(rows[r, j + 12], add)
                m12 = x if x > m12 else m12
                x = chosen(rows[r, j + 13], add)
                m13 = x if x > m13 else m13
                x = chosen(rows[r, j + 14], add)
                m14 = x if x > m14 else m14
                x = chosen(rows[r, j + 15], add)
                m15 = x if x > m15 else m15
            out[h, j] = m0
            out[h, j + 1] = m1
            out[h, j + 2] = m2
            out[h, j + 3] = m3
            out[h, j + 4] = m4
            out[h, j + 5] = m5
            out[h, j + 6] = m6
            out[h, j + 7] = m7
            out[h, j + 8] = m8
            out[h, j + 9] = m9
            out[h, j + 10] = m10
            out[h, j + 11] = m11
            out[h, j + 12] = m12
            out[h, j + 13] = m13
            out[h, j + 14] = m14
            out[h, j + 15] = m15


def keep_values(add, n_hands, K):
    """Rows ``n_hands..`` of ``K``: each keep's value, the mean over the six faces of the keep one die larger."""
    for k in range(n_hands, add.shape[0]):  # K may have more rows (scratch shared with the successor rows)
        a0 = add[k, 0]
        a1 = add[k, 1]
        a2 = add[k, 2]
        a3 = add[k, 3]
        a4 = add[k, 4]
        a5 = add[k, 5]
        if W < BLOCK:
            for u in range(W):
                K[k, u] = (K[a0, u] + K[a1, u] + K[a2, u] + K[a3, u] + K[a4, u] + K[a5, u]) / 6.0
            continue
        for j in range(0, W, BLOCK):
            x0 = (K[a0, j] + K[a1, j] + K[a2, j] + K[a3, j] + K[a4, j] + K[a5, j]) / 6.0
            x1 = (K[a0, j + 1] + K[a1, j + 1] + K[a2, j + 1] + K[a3, j + 1] + K[a4, j + 1] + K[a5, j + 1]) / 6.0
            x2 = (K[a0, j + 2] + K[a1, j + 2] + K[a2, j + 2] + K[a3, j + 2] + K[a4, j + 2] + K[a5, j + 2]) / 6.0
            x3 = (K[a0, j + 3] + K[a1, j + 3] + K[a2, j + 3] + K[a3, j + 3] + K[a4, j + 3] + K[a5, j + 3]) / 6.0
            x4 = (K[a0, j + 4] + K[a1, j + 4] + K[a2, j + 4] + K[a3, j + 4] + K[a4, j + 4] + K[a5, j + 4]) / 6.0
            x5 = (K[a0, j + 5] + K[a1, j + 5] + K[a2, j + 5] + K[a3, j + 5] + K[a4, j + 5] + K[a5, j + 5]) / 6.0
            x6 = (K[a0, j + 6] + K[a1, j + 6] + K[a2, j + 6] + K[a3, j + 6] + K[a4, j + 6] + K[a5, j + 6]) / 6.0
            x7 = (K[a0, j + 7] + K[a1, j + 7] + K[a2, j + 7] + K[a3, j + 7] + K[a4, j + 7] + K[a5, j + 7]) / 6.0
            K[k, j] = x0
            K[k, j + 1] = x1
            K[k, j + 2] = x2
            K[k, j + 3] = x3
            K[k, j + 4] = x4
            K[k, j + 5] = x5
            K[k, j + 6] = x6
            K[k, j + 7] = x7


def best_subkeeps(subs, n_hands, K, B):
    """``B[k]`` for every keep smaller than a hand: the best value of any keep inside multiset ``k`` (itself
    included); then each hand's row of ``K`` becomes the best of itself and of the keeps inside it.

    Every keep but the empty one has five entries in ``subs`` (six with six dice; repeats allowed), so each row
    is one fixed-length, vectorisable loop.
    """
    six = subs.shape[1] > 5
    last = K.shape[0] - 1
    for u in range(W):
        B[last, u] = K[last, u]
    for k in range(last - 1, -1, -1):
        s0 = subs[k, 0]
        s1 = subs[k, 1]
        s2 = subs[k, 2]
        s3 = subs[k, 3]
        s4 = subs[k, 4]
        s5 = subs[k, 5] if six else s4
        if W < BLOCK:
            for u in range(W):
                m = K[k, u]
                m = B[s0, u] if B[s0, u] > m else m
                m = B[s1, u] if B[s1, u] > m else m
                m = B[s2, u] if B[s2, u] > m else m
                m = B[s3, u] if B[s3, u] > m else m
                m = B[s4, u] if B[s4, u] > m else m
                m = B[s5, u] if B[s5, u] > m else m
                if k >= n_hands:
                    B[k, u] = m
                else:
                    K[k, u] = m
            continue
        if s3 == s0:  # at most three distinct smaller keeps (most keeps): the padding is not read
            for j in range(0, W, BLOCK):
                m0 = K[k, j]
                m1 = K[k, j + 1]
                m2 = K[k, j + 2]
                m3 = K[k, j + 3]
                m4 = K[k, j + 4]
                m5 = K[k, j + 5]
                m6 = K[k, j + 6]
                m7 = K[k, j + 7]
                for s in (s0, s1, s2):
                    x0 = B[s, j]
                    x1 = B[s, j + 1]
                    x2 = B[s, j + 2]
                    x3 = B[s, j + 3]
                    x4 = B[s, j + 4]
                    x5 = B[s, j + 5]
                    x6 = B[s, j + 6]
                    x7 = B[s, j + 7]
                    m0 = x0 if x0 > m0 else m0
                    m1 = x1 if x1 > m1 else m1
                    m2 = x2 if x2 > m2 else m2
                    m3 = x3 if x3 > m3 else m3
                    m4 = x4 if x4 > m4 else m4
                    m5 = x5 if x5 > m5 else m5
                    m6 = x6 if x6 > m6 else m6
                    m7 = x7 if x7 > m7 else m7
                if k >= n_hands:  # a keep smaller than a hand
                    B[k, j] = m0
                    B[k, j + 1] = m1
                    B[k, j + 2] = m2
                    B[k, j + 3] = m3
                    B[k, j + 4] = m4
                    B[k, j + 5] = m5
                    B[k, j + 6] = m6
                    B[k, j + 7] = m7
                else:  # a hand: its value with one more roll
                    K[k, j] = m0
                    K[k, j + 1] = m1
                    K[k, j + 2] = m2
                    K[k, j + 3] = m3
                    K[k, j + 4] = m4
                    K[k, j + 5] = m5
                    K[k, j + 6] = m6
                    K[k, j + 7] = m7
            continue
        for j in range(0, W, BLOCK):
            m0 = K[k, j]
            m1 = K[k, j + 1]
            m2 = K[k, j + 2]
            m3 = K[k, j + 3]
            m4 = K[k, j + 4]
            m5 = K[k, j + 5]
            m6 = K[k, j + 6]
            m7 = K[k, j + 7]
            for s in (s0, s1, s2, s3, s4):
                x0 = B[s, j]
                x1 = B[s, j + 1]
                x2 = B[s, j + 2]
                x3 = B[s, j + 3]
                x4 = B[s, j + 4]
                x5 = B[s, j + 5]
                x6 = B[s, j + 6]
                x7 = B[s, j + 7]
                m0 = x0 if x0 > m0 else m0
                m1 = x1 if x1 > m1 else m1
                m2 = x2 if x2 > m2 else m2
                m3 = x3 if x3 > m3 else m3
                m4 = x4 if x4 > m4 else m4
                m5 = x5 if x5 > m5 else m5
                m6 = x6 if x6 > m6 else m6
                m7 = x7 if x7 > m7 else m7
            if six:  # six dice: a keep may have a sixth smaller keep
                x0 = B[s5, j]
                x1 = B[s5, j + 1]
                x2 = B[s5, j + 2]
                x3 = B[s5, j + 3]
                x4 = B[s5, j + 4]
                x5 = B[s5, j + 5]
                x6 = B[s5, j + 6]
                x7 = B[s5, j + 7]
                m0 = x0 if x0 > m0 else m0
                m1 = x1 if x1 > m1 else m1
                m2 = x2 if x2 > m2 else m2
                m3 = x3 if x3 > m3 else m3
                m4 = x4 if x4 > m4 else m4
                m5 = x5 if x5 > m5 else m5
                m6 = x6 if x6 > m6 else m6
                m7 = x7 if x7 > m7 else m7
            if k >= n_hands:  # a keep smaller than a hand
                B[k, j] = m0
                B[k, j + 1] = m1
                B[k, j + 2] = m2
                B[k, j + 3] = m3
                B[k, j + 4] = m4
                B[k, j + 5] = m5
                B[k, j + 6] = m6
                B[k, j + 7] = m7
            else:  # a hand: its value with one more roll
                K[k, j] = m0
                K[k, j + 1] = m1
                K[k, j + 2] = m2
                K[k, j + 3] = m3
                K[k, j + 4] = m4
                K[k, j + 5] = m5
                K[k, j + 6] = m6
                K[k, j + 7] = m7


# The pass's arithmetic. The turn above is every pass of the max-plus family: the expected value (these, the
# plain-Python defaults) and the exponential utility (pentadice.solver.utility's, rebound by the compiler under
# the same names). ``T`` is the pass's one parameter (the utility's theta; the value pass ignores it).


def successor_value(x, bonus, T):
    """A successor row's entry: the next state's table entry ``x`` with the upper ``bonus`` paid on the way."""
    return x + bonus


def option_gain(points, T):
    """A box's points (Penta bonus included) as the pass takes them together with a successor row."""
    return points


def chosen(row, gain):
    """A box's worth: its successor row's entry and its gain (:func:`option_gain`) taken together."""
    return row + gain


def distance(new, old):
    """How far one turn moved a self-returning state's entry (Kiriki's secant steps stop below
    ``FIXED_POINT_TOLERANCE``)."""
    return abs(new - old)


def aligned_rows(n_rows):
    """An uninitialised ``(n_rows, W)`` float64 array starting on a 64-byte boundary (a cache line), so that no
    512-bit load of a row straddles two lines."""
    buf = np.empty(n_rows * W + 8)
    skip = ((64 - buf.ctypes.data % 64) % 64) // 8
    return buf[skip : skip + n_rows * W].reshape((n_rows, W))


def solve_states(V, T, p, n_dice, counts, scores, add, subs, weight, masks, penta_scored_flags, lo, hi):
    """The value at the start of a turn of each state ``(masks[i], penta_scored_flags[i])``, ``lo <= i < hi``,
    per lane, written into ``V``: independent states of one layer, whose values depend only on earlier layers.

    One turn's value: the hands' values after the last roll, then one roll earlier (keep values, best
    sub-keeps) for each further roll, then the hands weighted by their odds.

    A state that can lead back to itself has the value that solves V = T(V), where T is one turn with V as
    the value of coming back. T is increasing, convex and piecewise linear, with slope below 1 (the chance of
    coming back), so secant steps on T(x) - x, from below, reach the fixed point in a few turns; they stop
    once a turn changes no lane by more than ``FIXED_POINT_TOLERANCE``. They start from the value of the same
    boxes with the Penta box at 0, a lower bound that the solver computes first.

    ``T`` is the pass's parameter (the value pass: 0.0). Returns the most secant steps a state needed (more
    than ``MAX_FIXED_POINT_STEPS``: no fixed point found).

    (One function rather than a turn function called per state: each level of compiled calls costs compile
    time on a first run.)
    """
    K = aligned_rows(counts.shape[0])
    B = aligned_rows(counts.shape[0])
    rows = aligned_rows(p[rules.P_N_ROWS])
    xa = np.empty(W)
    ya = np.empty(W)
    xb = np.empty(W)
    n_hands = weight.shape[0]
    total = float(6**n_dice)
    most = 0
    for i in range(lo, hi):
        open_mask = masks[i]
        penta_scored = penta_scored_flags[i]
        out = V[penta_scored, open_mask]
        repeating = comes_back(p, open_mask, penta_scored)
        if repeating:
            start = V[0, open_mask]
            for u in range(W):
                xa[u] = start[u]
                out[u] = start[u]
        step = 0
        while True:
            # One turn, with ``out`` as the value of coming back (Kiriki).
            successor_rows(V, p, n_dice, open_mask, penta_scored, 0, rows, T)
            hand_values(p, counts[:n_hands], scores, open_mask, penta_scored, rows, K, T)
            for _ in range(p[rules.P_ROLLS] - 1):  # one roll earlier: keeps worth their reroll, hands one more roll
                keep_values(add, n_hands, K)
                best_subkeeps(subs, n_hands, K, B)
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
                    change = max(change, distance(out[u], xb[u]))
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


def turn_levels(V, T, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, L, rows, K, B):
    """One state's turn values for every lane (subtotal) under the pass's table ``V``: ``L[0, h, u]`` the hand
    ``h`` after the last roll, ``L[r, k, u]`` keeping multiset ``k`` with ``r`` rerolls left (the simulator's
    and the win strategy's choices read these)."""
    n_hands = scores.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[rules.P_ROLLS]
    successor_rows(V, p, n_dice, open_mask, penta_scored, 0, rows, T)
    hand_values(p, counts[:n_hands], scores, open_mask, penta_scored, rows, K, T)
    for h in range(n_hands):
        for u in range(W):
            L[0, h, u] = K[h, u]
    for r in range(1, n_rolls):
        keep_values(add, n_hands, K)
        if r < n_rolls - 1:
            best_subkeeps(subs, n_hands, K, B)
        for j in range(n_hands, n_keeps):
            for u in range(W):
                L[r, j, u] = K[j, u]


def score_values(V, p, counts, open_mask, penta_scored, sub, points, out):
    """``out[b]``: the points still to come if the dice go into box ``b`` now (box points, Penta bonus, upper
    bonus, then the next state's value); NaN where the box may not take them. Returns the Penta bonus."""
    bonus = score_options(p, counts, open_mask, penta_scored, points)
    cap = p[rules.P_UPPER_THRESHOLD]
    for b in range(p[rules.P_N_BOXES]):
        pts = points[b]
        if pts < 0:
            out[b] = np.nan
            continue
        nxt_mask, nxt_flag, added = box_successor(p, b, pts, open_mask, penta_scored)
        nxt = V[nxt_flag, nxt_mask, min(sub + added, cap)]
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
        successor_rows(V, p, n_dice, open_mask, penta_scored, sub, rows, 0.0)
        hand_values(p, counts[:n_hands], scores, open_mask, penta_scored, rows, K, 0.0)
        for _ in range(rerolls):
            keep_values(add, n_hands, K)
            best_subkeeps(subs, n_hands, K, B)
    return score_values(V, p, counts[hand], open_mask, penta_scored, sub, points, box_out)
