"""The second moment of the points still to come, under the advisor's policy: a backward pass, the values' own.

``M2[penta_scored, open_mask, subtotal] = E[R^2]``, ``R`` the points still to come from a state between turns
when every later decision is the advisor's first-ranked option: the highest value, exactly equal values
ordered as :meth:`pentadice.advisor.advice.Option.tie_key` orders them (scoring before keeping, boxes in sheet
order, keeps with more dice first, then by their faces). The policy is read from the values only; each step
carries the second moment of the option it picks:

- after the last roll, a hand goes into the first best box in sheet order (as ``turn.hand_values``); its
  second moment is ``g^2 + 2 g E[Y] + E[Y^2]`` with ``g`` the box's points and Penta bonus, ``Y`` the upper
  bonus plus the next state's points;
- a keep's moments are the means over the six faces of the keep one die larger, as its value is;
- with rerolls left, a hand scores now if its best box is worth at least its best proper keep (ties: scoring
  first), else it takes the best keep inside it (ties: the smallest keep number, which is the advisor's order:
  keeps are numbered with more dice first, then in the order of their faces).

The values are computed alongside with the value kernel's operations in its order: ``solve`` solves both in
this one pass (:func:`solve_both`, the values the same bits as the value pass's); on a table loaded without its
second moments they are a check (they equal the table). Kiriki's self-returning states: the policy is fixed
by the values, so the state's second moment is linear in itself, ``M2 = A + P * M2`` with ``P`` the chance of
coming back; in those states only, the pass carries ``P`` as a third quantity and solves ``M2 = A / (1 - P)``
exactly.

Sizes come from the rule set's parameters and the arrays' shapes (boxes, successor rows, dice, the keeps one
die smaller: five or six), as in :mod:`pentadice.solver.turn`, so every sheet runs the same code.

The functions below are plain Python that :func:`compiled` compiles per lane count (with the rules' compilable
functions rebound to their compiled versions); the advisor runs :func:`turn_moments` on one lane as plain Python for a
single question, without Numba's start-up.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

from pentadice.game import rules, states
from pentadice.game.rules import comes_back, hand_options, successors, upper_bonus
from pentadice.solver import layers
from pentadice.solver.turn import keep_values
from pentadice.solver.turn_inputs import turn_inputs

# Lanes of the compiled build: ``compiled(lanes)`` rebinds ``W`` to the rule set's lane count (``RuleSet.lanes``,
# a constant there), so that the blocks of lanes vectorise. All the subtotals of a state in one pass: 16 at a
# time (the scratch rows then stay in L2) measured slower, the per-hand set-up being repeated for each group.
W = 1
LANES_PER_PASS = 64  # Penta's and Yatzy's lanes (upper threshold 63); Maxi Yatzy's are 80
MAX_VALUE_DIFFERENCE = 1e-9  # the recomputed values must agree with the table (they agree to the bit in practice)


def moment_rows(V, M, p, n_dice, open_mask, penta_scored, s0, lanes, rowsV, rowsM, rowsP):
    """The successor rows (:func:`pentadice.game.rules.successors`), lane ``u`` subtotal ``s0 + u``: ``rowsV`` the
    next state's value plus the upper bonus ``b``, ``rowsM`` its second moment with ``b`` added (``E[(b + Y)^2]``),
    ``rowsP`` 1 on the row of the state itself (Kiriki), else 0."""
    cap = p[rules.P_UPPER_THRESHOLD]
    succ, own = successors(p, n_dice, open_mask, penta_scored)
    for i in range(succ.shape[0]):
        r, nxt, f, a = succ[i, rules.S_ROW], succ[i, rules.S_MASK], succ[i, rules.S_FLAG], succ[i, rules.S_ADD]
        q = 1.0 if r == own else 0.0  # the row of the state itself
        for u in range(lanes):
            s = min(s0 + u + a, cap)
            ub = upper_bonus(p, s0 + u, a)
            v = V[f, nxt, s]
            rowsV[r, u] = v + ub
            rowsM[r, u] = M[f, nxt, s] + 2.0 * ub * v + float(ub * ub)
            rowsP[r, u] = q


def moment_hands(lanes, rep, opt_row, opt_points, n_opt, rowsV, rowsM, rowsP, KV, KM, KP, SV, SM, SP, BV):
    """After the last roll, each hand into the first best box in sheet order (as ``turn.hand_values``): its value
    ``SV``, second moment ``SM`` (``g^2 + 2 g E[Y] + E[Y^2]``, ``g`` the box's points) and, where a turn can
    come back (``rep``), chance of coming back ``SP``; copied into the hands' rows of ``KV``, ``KM``, ``KP``. The
    hands' options: :func:`pentadice.game.rules.hand_options`."""
    for h in range(n_opt.shape[0]):
        n = n_opt[h]
        if W >= 8 and lanes == W:  # blocks of 8 lanes, loads before stores: vector instructions
            for j in range(0, W, 8):
                v0 = -np.inf
                v1 = -np.inf
                v2 = -np.inf
                v3 = -np.inf
                v4 = -np.inf
                v5 = -np.inf
                v6 = -np.inf
                v7 = -np.inf
                m0 = 0.0
                m1 = 0.0
                m2 = 0.0
                m3 = 0.0
                m4 = 0.0
                m5 = 0.0
                m6 = 0.0
                m7 = 0.0
                for i in range(n):
                    r = opt_row[h, i]
                    g = opt_points[h, i]
                    g2 = g * g
                    y = rowsV[r, j]
                    x = y + g
                    c = x > v0
                    z = g2 + 2.0 * g * y + rowsM[r, j]
                    m0 = z if c else m0
                    v0 = x if x > v0 else v0
                    y = rowsV[r, j + 1]
                    x = y + g
                    c = x > v1
                    z = g2 + 2.0 * g * y + rowsM[r, j + 1]
                    m1 = z if c else m1
                    v1 = x if x > v1 else v1
                    y = rowsV[r, j + 2]
                    x = y + g
                    c = x > v2
                    z = g2 + 2.0 * g * y + rowsM[r, j + 2]
                    m2 = z if c else m2
                    v2 = x if x > v2 else v2
                    y = rowsV[r, j + 3]
                    x = y + g
                    c = x > v3
                    z = g2 + 2.0 * g * y + rowsM[r, j + 3]
                    m3 = z if c else m3
                    v3 = x if x > v3 else v3
                    y = rowsV[r, j + 4]
                    x = y + g
                    c = x > v4
                    z = g2 + 2.0 * g * y + rowsM[r, j + 4]
                    m4 = z if c else m4
                    v4 = x if x > v4 else v4
                    y = rowsV[r, j + 5]
                    x = y + g
                    c = x > v5
                    z = g2 + 2.0 * g * y + rowsM[r, j + 5]
                    m5 = z if c else m5
                    v5 = x if x > v5 else v5
                    y = rowsV[r, j + 6]
                    x = y + g
                    c = x > v6
                    z = g2 + 2.0 * g * y + rowsM[r, j + 6]
                    m6 = z if c else m6
                    v6 = x if x > v6 else v6
                    y = rowsV[r, j + 7]
                    x = y + g
                    c = x > v7
                    z = g2 + 2.0 * g * y + rowsM[r, j + 7]
                    m7 = z if c else m7
                    v7 = x if x > v7 else v7
                SV[h, j] = v0
                SM[h, j] = m0
                KV[h, j] = v0
                KM[h, j] = m0
                SV[h, j + 1] = v1
                SM[h, j + 1] = m1
                KV[h, j + 1] = v1
                KM[h, j + 1] = m1
                SV[h, j + 2] = v2
                SM[h, j + 2] = m2
                KV[h, j + 2] = v2
                KM[h, j + 2] = m2
                SV[h, j + 3] = v3
                SM[h, j + 3] = m3
                KV[h, j + 3] = v3
                KM[h, j + 3] = m3
                SV[h, j + 4] = v4
                SM[h, j + 4] = m4
                KV[h, j + 4] = v4
                KM[h, j + 4] = m4
                SV[h, j + 5] = v5
                SM[h, j + 5] = m5
                KV[h, j + 5] = v5
                KM[h, j + 5] = m5
                SV[h, j + 6] = v6
                SM[h, j + 6] = m6
                KV[h, j + 6] = v6
                KM[h, j + 6] = m6
                SV[h, j + 7] = v7
                SM[h, j + 7] = m7
                KV[h, j + 7] = v7
                KM[h, j + 7] = m7
            if rep:  # Kiriki: the chance of coming back of the same choices (row 0 of BV, free here: scratch)
                for u in range(lanes):
                    BV[0, u] = -np.inf
                    SP[h, u] = 0.0
                for i in range(n):
                    r = opt_row[h, i]
                    g = opt_points[h, i]
                    for u in range(lanes):
                        x = rowsV[r, u] + g
                        q = rowsP[r, u]
                        y = BV[0, u]
                        z = SP[h, u]
                        c = x > y
                        SP[h, u] = q if c else z
                        BV[0, u] = x if c else y
                for u in range(lanes):
                    KP[h, u] = SP[h, u]
            continue
        # Lane-inner loops with selects rather than branches, so that the compiler vectorises across lanes.
        for u in range(lanes):
            SV[h, u] = -np.inf
            SM[h, u] = 0.0
            SP[h, u] = 0.0
        for i in range(n):
            r = opt_row[h, i]
            g = opt_points[h, i]
            for u in range(lanes):
                y = rowsV[r, u]
                x = y + g
                c = x > SV[h, u]
                SM[h, u] = g * g + 2.0 * g * y + rowsM[r, u] if c else SM[h, u]
                SP[h, u] = rowsP[r, u] if c else SP[h, u]
                SV[h, u] = x if c else SV[h, u]
        for u in range(lanes):
            KV[h, u] = SV[h, u]
            KM[h, u] = SM[h, u]
            KP[h, u] = SP[h, u]


def best_inside(subs, lo, hi, own, lanes, KV, KM, BV, BI, BM):
    """Rows ``lo <= k < hi`` of ``BV``, ``BI``, ``BM`` (from ``hi - 1`` down): the value, keep number and second
    moment of the best keep inside keep ``k``: with ``own``, itself (``KV[k]``, ``KM[k]``) or the best inside
    a keep one die smaller (their rows, done first: keeps are numbered with more dice first); without, those
    smaller keeps only (a hand's best proper keep; a hand's rows of ``B`` are free). The best: the highest
    value, ties to the smallest keep number (the advisor's order: ``Option.tie_key``). The padding of ``subs``
    (a keep with at most three smaller keeps repeats the first) is not read. In the blocks every operand is
    loaded before the selects, the second moment selected first (else LLVM leaves them scalar: 4 to 6 times
    slower). One call for many keeps: a compiled call that passes arrays costs more than a keep's work."""
    first = 0 if own else 1
    for k in range(hi - 1, lo - 1, -1):
        used = 3 if subs[k, 3] == subs[k, 0] else subs.shape[1]
        r0 = k if own else subs[k, 0]
        kf = float(k)
        if W >= 8 and lanes == W:  # blocks of 8 lanes, loads before stores: vector instructions
            for j in range(0, W, 8):
                if own:
                    v0 = KV[k, j]
                    v1 = KV[k, j + 1]
                    v2 = KV[k, j + 2]
                    v3 = KV[k, j + 3]
                    v4 = KV[k, j + 4]
                    v5 = KV[k, j + 5]
                    v6 = KV[k, j + 6]
                    v7 = KV[k, j + 7]
                    i0 = kf
                    i1 = kf
                    i2 = kf
                    i3 = kf
                    i4 = kf
                    i5 = kf
                    i6 = kf
                    i7 = kf
                    m0 = KM[k, j]
                    m1 = KM[k, j + 1]
                    m2 = KM[k, j + 2]
                    m3 = KM[k, j + 3]
                    m4 = KM[k, j + 4]
                    m5 = KM[k, j + 5]
                    m6 = KM[k, j + 6]
                    m7 = KM[k, j + 7]
                else:
                    v0 = BV[r0, j]
                    v1 = BV[r0, j + 1]
                    v2 = BV[r0, j + 2]
                    v3 = BV[r0, j + 3]
                    v4 = BV[r0, j + 4]
                    v5 = BV[r0, j + 5]
                    v6 = BV[r0, j + 6]
                    v7 = BV[r0, j + 7]
                    i0 = BI[r0, j]
                    i1 = BI[r0, j + 1]
                    i2 = BI[r0, j + 2]
                    i3 = BI[r0, j + 3]
                    i4 = BI[r0, j + 4]
                    i5 = BI[r0, j + 5]
                    i6 = BI[r0, j + 6]
                    i7 = BI[r0, j + 7]
                    m0 = BM[r0, j]
                    m1 = BM[r0, j + 1]
                    m2 = BM[r0, j + 2]
                    m3 = BM[r0, j + 3]
                    m4 = BM[r0, j + 4]
                    m5 = BM[r0, j + 5]
                    m6 = BM[r0, j + 6]
                    m7 = BM[r0, j + 7]
                for t in range(first, used):
                    s = subs[k, t]
                    x = BV[s, j]
                    e = BI[s, j]
                    c = (x > v0) | ((x == v0) & (e < i0))
                    z = BM[s, j]
                    m0 = z if c else m0
                    i0 = e if c else i0
                    v0 = x if c else v0
                    x = BV[s, j + 1]
                    e = BI[s, j + 1]
                    c = (x > v1) | ((x == v1) & (e < i1))
                    z = BM[s, j + 1]
                    m1 = z if c else m1
                    i1 = e if c else i1
                    v1 = x if c else v1
                    x = BV[s, j + 2]
                    e = BI[s, j + 2]
                    c = (x > v2) | ((x == v2) & (e < i2))
                    z = BM[s, j + 2]
                    m2 = z if c else m2
                    i2 = e if c else i2
                    v2 = x if c else v2
                    x = BV[s, j + 3]
                    e = BI[s, j + 3]
                    c = (x > v3) | ((x == v3) & (e < i3))
                    z = BM[s, j + 3]
                    m3 = z if c else m3
                    i3 = e if c else i3
                    v3 = x if c else v3
                    x = BV[s, j + 4]
                    e = BI[s, j + 4]
                    c = (x > v4) | ((x == v4) & (e < i4))
                    z = BM[s, j + 4]
                    m4 = z if c else m4
                    i4 = e if c else i4
                    v4 = x if c else v4
                    x = BV[s, j + 5]
                    e = BI[s, j + 5]
                    c = (x > v5) | ((x == v5) & (e < i5))
                    z = BM[s, j + 5]
                    m5 = z if c else m5
                    i5 = e if c else i5
                    v5 = x if c else v5
                    x = BV[s, j + 6]
                    e = BI[s, j + 6]
                    c = (x > v6) | ((x == v6) & (e < i6))
                    z = BM[s, j + 6]
                    m6 = z if c else m6
                    i6 = e if c else i6
                    v6 = x if c else v6
                    x = BV[s, j + 7]
                    e = BI[s, j + 7]
                    c = (x > v7) | ((x == v7) & (e < i7))
                    z = BM[s, j + 7]
                    m7 = z if c else m7
                    i7 = e if c else i7
                    v7 = x if c else v7
                BV[k, j] = v0
                BV[k, j + 1] = v1
                BV[k, j + 2] = v2
                BV[k, j + 3] = v3
                BV[k, j + 4] = v4
                BV[k, j + 5] = v5
                BV[k, j + 6] = v6
                BV[k, j + 7] = v7
                BI[k, j] = i0
                BI[k, j + 1] = i1
                BI[k, j + 2] = i2
                BI[k, j + 3] = i3
                BI[k, j + 4] = i4
                BI[k, j + 5] = i5
                BI[k, j + 6] = i6
                BI[k, j + 7] = i7
                BM[k, j] = m0
                BM[k, j + 1] = m1
                BM[k, j + 2] = m2
                BM[k, j + 3] = m3
                BM[k, j + 4] = m4
                BM[k, j + 5] = m5
                BM[k, j + 6] = m6
                BM[k, j + 7] = m7
            continue
        best_inside_plain(subs, k, own, used, lanes, KV, KM, BV, BI, BM)


def best_inside_plain(subs, k, own, used, lanes, KV, KM, BV, BI, BM):
    """Row ``k`` of :func:`best_inside` in plain lane loops (fewer lanes than the build's: the one-lane advisor)."""
    r0 = k if own else subs[k, 0]
    kf = float(k)
    for u in range(lanes):
        BV[k, u] = KV[k, u] if own else BV[r0, u]
        BI[k, u] = kf if own else BI[r0, u]
        BM[k, u] = KM[k, u] if own else BM[r0, u]
    for t in range(0 if own else 1, used):
        s = subs[k, t]
        for u in range(lanes):
            x = BV[s, u]
            m = BV[k, u]
            c = (x > m) | ((x == m) & (BI[s, u] < BI[k, u]))
            BI[k, u] = BI[s, u] if c else BI[k, u]
            BM[k, u] = BM[s, u] if c else BM[k, u]
            BV[k, u] = x if c else m


def best_keep_moments(subs, n_hands, lanes, KV, KM, BV, BI, BM):
    """One roll earlier, the keeps' rows of ``KV`` and ``KM`` already their means over the faces: for each keep
    smaller than a hand, its best keep inside it (:func:`best_inside`, itself included), then each hand's best
    proper keep into the hand's rows."""
    last = subs.shape[0] - 1  # the empty keep: nothing inside it but itself
    for u in range(lanes):
        BV[last, u] = KV[last, u]
        BI[last, u] = last
        BM[last, u] = KM[last, u]
    best_inside(subs, n_hands, last, True, lanes, KV, KM, BV, BI, BM)
    best_inside(subs, 0, n_hands, False, lanes, KV, KM, BV, BI, BM)


def hand_choices(n_hands, lanes, rep, KV, KM, KP, SV, SM, SP, BV, BI, BM):
    """Each hand one roll earlier, its best proper keep in its rows of ``BV``, ``BI``, ``BM``
    (:func:`best_keep_moments`): it scores now if its best box (``SV``, ``SM``, ``SP``) is worth at least that
    keep (ties: scoring first), else it takes the keep, with its second moment (and, where a turn can come back,
    ``rep``, its chance of coming back). Its value is the value kernel's: the previous one or the keep's, if
    higher."""
    for k in range(n_hands):
        if W >= 8 and lanes == W:  # blocks of 8 lanes, loads before stores: vector instructions
            for j in range(0, W, 8):
                v0 = BV[k, j]
                v1 = BV[k, j + 1]
                v2 = BV[k, j + 2]
                v3 = BV[k, j + 3]
                v4 = BV[k, j + 4]
                v5 = BV[k, j + 5]
                v6 = BV[k, j + 6]
                v7 = BV[k, j + 7]
                m0 = BM[k, j]
                m1 = BM[k, j + 1]
                m2 = BM[k, j + 2]
                m3 = BM[k, j + 3]
                m4 = BM[k, j + 4]
                m5 = BM[k, j + 5]
                m6 = BM[k, j + 6]
                m7 = BM[k, j + 7]
                s0 = SV[k, j]
                s1 = SV[k, j + 1]
                s2 = SV[k, j + 2]
                s3 = SV[k, j + 3]
                s4 = SV[k, j + 4]
                s5 = SV[k, j + 5]
                s6 = SV[k, j + 6]
                s7 = SV[k, j + 7]
                q0 = SM[k, j]
                q1 = SM[k, j + 1]
                q2 = SM[k, j + 2]
                q3 = SM[k, j + 3]
                q4 = SM[k, j + 4]
                q5 = SM[k, j + 5]
                q6 = SM[k, j + 6]
                q7 = SM[k, j + 7]
                x0 = KV[k, j]
                x1 = KV[k, j + 1]
                x2 = KV[k, j + 2]
                x3 = KV[k, j + 3]
                x4 = KV[k, j + 4]
                x5 = KV[k, j + 5]
                x6 = KV[k, j + 6]
                x7 = KV[k, j + 7]
                KM[k, j] = q0 if s0 >= v0 else m0
                KM[k, j + 1] = q1 if s1 >= v1 else m1
                KM[k, j + 2] = q2 if s2 >= v2 else m2
                KM[k, j + 3] = q3 if s3 >= v3 else m3
                KM[k, j + 4] = q4 if s4 >= v4 else m4
                KM[k, j + 5] = q5 if s5 >= v5 else m5
                KM[k, j + 6] = q6 if s6 >= v6 else m6
                KM[k, j + 7] = q7 if s7 >= v7 else m7
                KV[k, j] = v0 if v0 > x0 else x0
                KV[k, j + 1] = v1 if v1 > x1 else x1
                KV[k, j + 2] = v2 if v2 > x2 else x2
                KV[k, j + 3] = v3 if v3 > x3 else x3
                KV[k, j + 4] = v4 if v4 > x4 else x4
                KV[k, j + 5] = v5 if v5 > x5 else x5
                KV[k, j + 6] = v6 if v6 > x6 else x6
                KV[k, j + 7] = v7 if v7 > x7 else x7
        else:
            for u in range(lanes):
                x = BV[k, u]
                KM[k, u] = SM[k, u] if SV[k, u] >= x else BM[k, u]
                KV[k, u] = x if x > KV[k, u] else KV[k, u]
        if rep:  # the chance of coming back of the hand's choice (Kiriki)
            for u in range(lanes):
                KP[k, u] = SP[k, u] if SV[k, u] >= BV[k, u] else KP[int(BI[k, u]), u]


def turn_moments(V, M, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, s0, lanes, levels, KV, KM, KP,
                 SV, SM, SP, BV, BI, BM, rowsV, rowsM, rowsP):  # fmt: skip
    """One state's turn for ``lanes`` lanes, lane ``u`` being subtotal ``s0 + u``: each keep's value ``KV``,
    second moment ``KM`` and chance of coming back (Kiriki) ``KP``, ``levels`` rerolls before the end; for
    hands, the hand's value and moments with ``levels`` rerolls left, under the advisor's choice.

    ``V`` and ``M`` are the value and second-moment tables; the state's own entry of ``M`` is read as the second
    moment of coming back (0 while it is being solved: ``KP`` then says how much of it each entry lacks). The
    other arrays are scratch (:func:`new_work`, ``W`` lanes wide): ``S*`` the best box per hand, ``BV``, ``BI``
    and ``BM`` the value, number and second moment of the best keep inside each keep, ``rows*`` the successor
    rows. Separate arrays, so that the compiler knows they do not overlap and vectorises the blocks of lanes.
    The keeps' means are the value kernel's own ``keep_values``, one channel at a time (same sums, same bits).
    """
    # Hands: the keeps of all the dice, numbered first. (Not counted up from a literal 0: Numba would compile
    # each step called with it twice, for the literal and for an integer.)
    n_hands = counts.shape[0]
    for k in range(counts.shape[0]):
        s = 0
        for f in range(6):
            s += counts[k, f]
        if s < n_dice:
            n_hands = k
            break
    rep = comes_back(p, open_mask, penta_scored)  # a turn can come back to this state: KP is carried
    moment_rows(V, M, p, n_dice, open_mask, penta_scored, s0, lanes, rowsV, rowsM, rowsP)
    _, opt_row, opt_points, n_opt, _ = hand_options(p, counts[:n_hands], scores, open_mask, penta_scored)
    moment_hands(lanes, rep, opt_row, opt_points, n_opt, rowsV, rowsM, rowsP, KV, KM, KP, SV, SM, SP, BV)
    for _ in range(levels):
        keep_values(add, n_hands, KV)
        keep_values(add, n_hands, KM)
        if rep:
            keep_values(add, n_hands, KP)
        best_keep_moments(subs, n_hands, lanes, KV, KM, BV, BI, BM)
        hand_choices(n_hands, lanes, rep, KV, KM, KP, SV, SM, SP, BV, BI, BM)


def solve_moments(V, M, C, fused, p, n_dice, counts, scores, add, subs, weight, masks, penta_scored_flags, lo, hi):
    """The second moment at the start of a turn of states ``lo <= i < hi`` (``masks[i]``,
    ``penta_scored_flags[i]``), every lane, written into ``M``; the values recomputed alongside into ``C``. A state
    that can come back to itself solves ``M2 = A + P * M2``.

    ``fused``: the value pass and this one in one (``C`` is ``V``, the states' values not known yet): each turn's
    values go into ``V`` as they are computed, the same sums in the same order as the value pass's, so the same
    bits. A state that can come back to itself (Kiriki) has had its value solved by the value pass's secant
    steps first (:func:`solve_both`); its recomputed value, within 1e-12 of that fixed point, is not written.
    Otherwise ``C`` is a check against the table ``V``.
    """
    n_keeps = counts.shape[0]
    L = V.shape[2]
    KV, KM, KP, SV, SM, SP, BV, BI, BM, rowsV, rowsM, rowsP = new_work(max(n_keeps, p[rules.P_N_ROWS]), W)
    acc_v = np.empty(W)
    acc_m = np.empty(W)
    acc_p = np.empty(W)
    n_hands = weight.shape[0]
    total = float(6**n_dice)
    levels = p[rules.P_ROLLS] - 1
    for i in range(lo, hi):
        open_mask = masks[i]
        penta_scored = penta_scored_flags[i]
        rep = comes_back(p, open_mask, penta_scored)
        for u in range(L):
            M[penta_scored, open_mask, u] = 0.0  # coming back: solved for below
        for s0 in range(0, L, W):  # W subtotals at a time (all of them in the compiled build)
            lanes = min(W, L - s0)
            turn_moments(V, M, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, s0, lanes, levels,
                         KV, KM, KP, SV, SM, SP, BV, BI, BM, rowsV, rowsM, rowsP)  # fmt: skip
            # The hands weighted by their odds, hand by hand for all lanes (each lane's sums in the same order).
            for u in range(lanes):
                acc_v[u] = 0.0
                acc_m[u] = 0.0
                acc_p[u] = 0.0
            for h in range(n_hands):
                w = float(weight[h])
                for u in range(lanes):
                    acc_v[u] += w * KV[h, u]
                    acc_m[u] += w * KM[h, u]
                if rep:  # elsewhere the chance of coming back is 0
                    for u in range(lanes):
                        acc_p[u] += w * KP[h, u]
            for u in range(lanes):
                if not (fused and rep):
                    C[penta_scored, open_mask, s0 + u] = acc_v[u] / total
                M[penta_scored, open_mask, s0 + u] = (acc_m[u] / total) / (1.0 - acc_p[u] / total)


def new_work(n, lanes):
    """The scratch arrays of :func:`turn_moments`, each ``n`` x lanes (``n`` the more of the keeps and the
    successor rows: :func:`work_rows`), separately allocated; zeros, so that lanes a call leaves out (fewer
    lanes than the build's, whose keeps' means run on all of them) hold no slow subnormal garbage."""
    return (
        np.zeros((n, lanes)), np.zeros((n, lanes)), np.zeros((n, lanes)), np.zeros((n, lanes)),
        np.zeros((n, lanes)), np.zeros((n, lanes)), np.zeros((n, lanes)), np.zeros((n, lanes)),
        np.zeros((n, lanes)), np.zeros((n, lanes)), np.zeros((n, lanes)), np.zeros((n, lanes)),
    )  # fmt: skip


def work_rows(rs: rules.RuleSet) -> int:
    """The rows of :func:`new_work`'s arrays for ``rs``: its keeps or its successor rows, the more."""
    return max(turn_inputs(rs).n_keeps, rs.n_rows)


def lanes_for(rs: rules.RuleSet) -> int:
    """The build :func:`second_moments` runs for ``rs``: 64 lanes (Penta's, Yatzy's and every reduced game with
    a threshold under 64, which runs its lanes in the plain loops), else the rule set's own (80: Maxi Yatzy)."""
    return LANES_PER_PASS if rs.upper_threshold < LANES_PER_PASS else rs.lanes


@functools.cache
def compiled(lanes: int = LANES_PER_PASS):
    """The compiled ``turn_moments`` and ``solve_moments`` for ``lanes`` lanes (Numba, cached on disk, one
    entry per lane count; imported late: quick commands do not pay Numba's start-up)."""
    import types

    from pentadice.solver import kernels

    # The value pass's own compiled functions (the rules' and the keeps' means): compiled once for both passes.
    wide = kernels.wide_for(lanes)
    scope = {name: getattr(wide, name) for name in ("comes_back", "hand_options", "successors", "upper_bonus")}
    scope["keep_values"] = wide.keep_values
    out = {}
    steps = (moment_rows, moment_hands, best_inside_plain, best_inside, best_keep_moments, hand_choices)
    for fn in (new_work, *steps, turn_moments, solve_moments):
        scope.update(out)
        out[fn.__name__] = kernels._compile(fn, scope, lanes)
    kernels.drop_stale_cache(list(out.values()))
    return types.SimpleNamespace(**out)


# The pass runs unasked (in every `solve`, with the values, and in `advise` when the file is missing) only where
# its work, the states between turns times the keeps of a turn, is at most this: Yatzy's 32,767 states x 252
# keeps (8.3M; 5.5 s on one quiet core, Penta's 3.1M about 2 s). Maxi Yatzy's 1,048,575 x 924 (969M) took about
# 0.8 ms a state on one quiet core (2.5 ms loaded) with the kernel before issue 22: 14 minutes, far past its
# value solve: built only on request (`solve --moments`).
AUTOMATIC_WORK = 1 << 24
ON_DEMAND = (
    "the second moments (SDs) of {title} are not computed by themselves: their pass over {states:,} states takes "
    "about {minutes:.0f} minutes on one core (at the rate measured on a quiet core, 2026-11-30); build them once "
    "with `pentadice solve --rules {name} --moments`"
)
SECONDS_PER_STATE_AND_KEEP = 0.85e-6  # one quiet core (measured: Maxi Yatzy 0.8 ms a state, 924 keeps)


class MomentsOnDemand(NotImplementedError):
    """The second moments of a rule set whose pass is too long to run unasked (:func:`automatic`): the message
    says how long it would take and how to build them (``solve --moments``)."""


def pass_states(rs: rules.RuleSet) -> int:
    """The states between turns the pass computes (every mask of the game's boxes but the empty one, with each
    Penta flag it can have)."""
    return sum(len(masks) for masks, _ in states.layers(rs))


def automatic(rs: rules.RuleSet) -> bool:
    """Whether the second moments of ``rs`` are computed by themselves (see :data:`AUTOMATIC_WORK`): with every
    ``solve`` and, when their file is missing, by ``advise``. Otherwise only :func:`second_moments` with
    ``force`` (``solve --moments``) builds them."""
    return pass_states(rs) * turn_inputs(rs).n_keeps <= AUTOMATIC_WORK


def unsaved_message(rs: rules.RuleSet, directory: object) -> str:
    """What happens when the second moments cannot be saved beside the table (a read-only table directory):
    every run computes them again; and how to have them computed once."""
    return (
        f"the {rs.name} table's second moments (the SDs) cannot be saved in {directory}, so every run computes "
        "them again (seconds each time); to compute them once, copy the table to a directory you can write and "
        "give it with --data (the first run there saves them), or run "
        f"`pentadice solve --rules {rs.rules_option} --data DIR` with DIR writable"
    )


def on_demand_message(rs: rules.RuleSet) -> str:
    """Why the second moments of ``rs`` are not computed unasked, and the command that builds them."""
    n = pass_states(rs)
    minutes = n * turn_inputs(rs).n_keeps * SECONDS_PER_STATE_AND_KEEP / 60
    return ON_DEMAND.format(title=rs.title, states=n, minutes=minutes, name=rs.rules_option)


def second_moments(
    rs: rules.RuleSet,
    values: np.ndarray,
    threads: int = 1,
    check: bool = True,
    timings: dict | None = None,
    force: bool = False,
) -> np.ndarray:
    """``M2[penta_scored, open_mask, subtotal] = E[R^2]`` for every state of ``rs`` (same shape as ``values``,
    NaN where ``values`` is NaN): ``R`` the points still to come under the advisor's policy.

    ``values`` is the solved value table of ``rs``. With ``check``, the values recomputed on the way must equal
    it (to ``MAX_VALUE_DIFFERENCE``; RuntimeError otherwise). ``timings``, if given, receives
    ``compile_seconds``, ``seconds`` and ``max_value_difference`` (0.0: the values' bits). Where the pass is too
    long to run unasked (:func:`automatic`: Maxi Yatzy), :class:`MomentsOnDemand` unless ``force``.
    """
    start = time.perf_counter()
    if not force and not automatic(rs):
        raise MomentsOnDemand(on_demand_message(rs))
    if values.shape != rs.table_shape:
        raise ValueError(f"a value table of {rs.name} is shaped {rs.table_shape}, not {values.shape}")
    lanes = lanes_for(rs)
    k = compiled(lanes)
    V = np.ascontiguousarray(values, dtype=np.float64)
    n_lanes = V.shape[2]
    if LANES_PER_PASS < n_lanes < lanes:
        # All the build's lanes in one pass (its blocks of lanes): the lanes past the threshold repeat the
        # threshold's (a subtotal above it is capped to it, and earns no bonus), so they compute the same.
        V = np.concatenate([V, np.repeat(V[:, :, -1:], lanes - n_lanes, axis=2)], axis=2)
    if not V.flags.writeable:
        V = V.copy()
    inputs = turn_inputs(rs).layer()
    M = np.full(V.shape, np.nan)
    C = np.full(V.shape, np.nan)
    M[:, 0, :] = 0.0
    C[:, 0, :] = 0.0
    empty = np.zeros(0, dtype=np.int64)
    k.solve_moments(V, M, C, False, *inputs, empty, empty, 0, 0)  # compile (or load) before timing
    compiled_at = time.perf_counter()
    with layers.Workers(threads) as workers:
        for masks, flags in states.layers(rs):
            workers.run(k.solve_moments, (V, M, C, False, *inputs, masks, flags), len(masks))
    # (In place where it can be: Maxi Yatzy's arrays are 0.6 GB each.)
    V, C = V[:, :, :n_lanes], C[:, :, :n_lanes]
    M = np.ascontiguousarray(M[:, :, :n_lanes])
    unreachable = np.isnan(V)
    M[unreachable] = np.nan
    C -= V  # NaN where a state cannot occur
    C = np.abs(C, out=C)
    worst = float(np.nanmax(C)) if (~unreachable).any() else 0.0
    if check and not worst <= MAX_VALUE_DIFFERENCE:
        from pentadice.support.exits import TableError

        raise TableError(
            f"the {rs.name} values are not those of its rules: the second-moment pass, which computes them again, "
            f"differs by up to {worst:.3g} (the table was damaged or written by something else than pentadice); "
            f"run `pentadice solve --rules {rs.rules_option}` to solve it again"
        )
    if timings is not None:
        timings["compile_seconds"] = compiled_at - start
        timings["seconds"] = time.perf_counter() - compiled_at
        timings["max_value_difference"] = worst
    return M


def coming_back(rs: rules.RuleSet, masks: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """Which of these states a turn can lead back to (:func:`pentadice.game.rules.comes_back`, for arrays)."""
    p = rs.params()
    return np.array([rules.comes_back(p, int(m), int(f)) for m, f in zip(masks, flags, strict=True)], dtype=bool)


def solve_both(
    rs: rules.RuleSet, threads: int = 1, progress=None, timings: dict | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(values, M2)`` of every state of ``rs`` in one pass (``solve_moments`` fused): the values the same bits
    as the value pass's (:func:`pentadice.solver.induction.solve_values`), both ``rs.lanes`` lanes wide and NaN
    for masks outside the game, before unreachable states are blanked. ``progress(done, total)`` after each
    layer; ``timings`` receives ``compile_seconds`` and ``seconds``."""
    from pentadice.solver import kernels

    start = time.perf_counter()
    k = compiled(lanes_for(rs))
    inputs = turn_inputs(rs).layer()
    V = np.full((rs.n_flags, 1 << rs.n_boxes, rs.lanes), np.nan)
    M = np.full(V.shape, np.nan)
    V[:, 0, :] = 0.0  # game over: nothing more to score
    M[:, 0, :] = 0.0
    empty = np.zeros(0, dtype=np.int64)
    k.solve_moments(V, M, V, True, *inputs, empty, empty, 0, 0)  # compile (or load) before timing
    values = None
    if rs.penta_repeat:  # Kiriki's returning states: the value pass's secant steps, compiled (or loaded) now
        values = kernels.wide_for(rs.lanes)
        values.solve_states(V, 0.0, *inputs, empty, empty, 0, 0)
    compiled_at = time.perf_counter()
    all_layers = states.layers(rs)
    with layers.Workers(threads) as workers:
        for i, (masks, flags) in enumerate(all_layers):
            back = coming_back(rs, masks, flags) if values is not None else None
            if back is not None and back.any():  # their values first, by the value pass's secant steps (a fixed point)
                workers.run(values.solve_states, (V, 0.0, *inputs, masks[back], flags[back]), int(back.sum()))
            workers.run(k.solve_moments, (V, M, V, True, *inputs, masks, flags), len(masks))
            if progress is not None:
                progress(i + 1, len(all_layers))
    if timings is not None:
        timings["compile_seconds"] = compiled_at - start
        timings["seconds"] = time.perf_counter() - compiled_at
    return V, M


def sd(mean: float, second: float) -> float:
    """Standard deviation from a mean and a second moment (0 where rounding leaves a tiny negative variance)."""
    return math.sqrt(max(second - mean * mean, 0.0))


def start_sd(rs: rules.RuleSet, values: np.ndarray, m2: np.ndarray) -> float:
    """The SD of the final score at the start of a game under the advisor's policy."""
    return sd(float(values[0, rs.box_mask, 0]), float(m2[0, rs.box_mask, 0]))


def keep_moments(
    rs: rules.RuleSet,
    values: np.ndarray,
    m2: np.ndarray,
    open_mask: int,
    penta_scored: int,
    sub: int,
    rerolls: int,
    compiled_code: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """``(KV, KM)``: each keep's value and second moment of the points still to come with ``rerolls`` rerolls
    left, in one state and subtotal (for the advisor: plain Python unless ``compiled_code``)."""
    t = turn_inputs(rs)
    tables = t.tables
    sub = min(sub, rs.upper_threshold)
    # The compiled build's keeps' means run on all its lanes: its scratch is that wide (lane 0 is this one).
    work = new_work(work_rows(rs), lanes_for(rs) if compiled_code else 1)
    fn = compiled(lanes_for(rs)).turn_moments if compiled_code else turn_moments
    V = np.asarray(values)
    M = np.asarray(m2)
    fn(V, M, t.p, rs.dice, tables.counts, t.scores, tables.add, tables.subs, open_mask, penta_scored, sub, 1,
       rerolls, *work)  # fmt: skip
    return work[0][:, 0].copy(), work[1][:, 0].copy()


def needs_compiling(rs: rules.RuleSet | None = None) -> bool:
    """Whether the second-moment kernel (for ``rs``'s lanes; default 64) is not in Numba's cache yet (a first
    run: compiling takes seconds)."""
    from pentadice.solver.compiled import cached

    return not cached(compiled(LANES_PER_PASS if rs is None else lanes_for(rs)).solve_moments)
