"""One situation's whole advice in one compiled call: every option's value, loss and SD, ranked, and the numbers of
its explanation (each option's expected points this turn and the box it most likely ends in).

The reference is the object path (:meth:`pentadice.advisor.advice.Advisor.advise`, ``Advisor.with_spread`` and
:func:`pentadice.advisor.explain.explain`); this kernel does the same float operations in the same order, so that
its numbers are the same bits (``tests/test_quick_advice.py`` compares them). It is made of the turn's own
compiled functions (:data:`pentadice.solver.kernels.narrow`: the values), the second-moment pass's on one lane
(the SDs) and, written out here, the explanation's last-roll choices and keeps' means (``explain.py``'s numpy
arithmetic: each mean the sum of the six faces in order, divided by 6).

One call answers many situations (``hands[i]``...); the web server's single answer is the case of one. Python
only reads the request and writes the answer (:mod:`pentadice.advisor.quick`).
"""

from __future__ import annotations

import numpy as np

from pentadice.game import rules
from pentadice.solver import kernels, moments
from pentadice.solver.compiled import jit
from pentadice.solver.kernels import narrow

# Columns of the outputs. Per situation (``head``): options, Penta bonus, the rule of thumb's option (-1: no
# explanation), 1 when every number is finite (else the object path answers), 1 when every box scores 0.
H_COUNT, H_BONUS, H_OBVIOUS, H_FINITE, H_NO_SCORE = range(5)
# Per ranked option, whole numbers (``iopt``): 0 a box, 1 a keep; the box or keep number; the box's points; the
# upper bonus it earns; the box this turn most likely ends in (explanation).
I_KIND, I_ID, I_POINTS, I_UPPER, I_LIKELY = range(5)
# Per ranked option, floats (``fopt``): expected final score, loss, SD (NaN without the spread), points this turn
# and the likely box's chance (explanation).
F_VALUE, F_LOSS, F_SD, F_NOW, F_CHANCE = range(5)
KIND_BOX, KIND_KEEP = 0, 1

# The second-moment pass on one lane, its steps the value pass's one-lane functions (``narrow``): the SDs of the
# keeps as ``moments.keep_moments`` computes them for the advisor. Built under their own names (tag ``advice``).
_scope = {name: getattr(narrow, name) for name in ("comes_back", "hand_options", "successors", "upper_bonus")}
_scope["keep_values"] = narrow.keep_values
_steps: dict = {}
for _fn in (
    moments.moment_rows,
    moments.moment_hands,
    moments.best_inside_plain,
    moments.best_inside,
    moments.best_keep_moments,
    moments.hand_choices,
):
    _scope.update(_steps)
    _steps[_fn.__name__] = kernels._compile(_fn, _scope, 1, "advice")

moment_rows = _steps["moment_rows"]
moment_hands = _steps["moment_hands"]
best_keep_moments = _steps["best_keep_moments"]
hand_choices = _steps["hand_choices"]
comes_back = narrow.comes_back
hand_options = narrow.hand_options
successor_rows = narrow.successor_rows
hand_values = narrow.hand_values
keep_values = narrow.keep_values
best_subkeeps = narrow.best_subkeeps
score_values = narrow.score_values
score_options = narrow.score_options
upper_bonus = narrow.upper_bonus


@jit(nogil=True)
def _point_means(add, n_hands, points):
    """Rows ``n_hands..`` of ``points``: each keep's mean over the six faces of the keep one die larger
    (``explain._keeps``: numpy's mean, the six summed in order, then divided by 6)."""
    for k in range(n_hands, add.shape[0]):
        a0, a1, a2, a3, a4, a5 = add[k, 0], add[k, 1], add[k, 2], add[k, 3], add[k, 4], add[k, 5]
        points[k] = (((((points[a0] + points[a1]) + points[a2]) + points[a3]) + points[a4]) + points[a5]) / 6.0


@jit(nogil=True)
def _spread_need(add, n_hands, need):
    """Mark every keep that a marked keep's mean reads (the keeps one die larger, and theirs, up to the hands)."""
    for k in range(add.shape[0] - 1, n_hands - 1, -1):  # smaller keeps first: each marks larger ones
        if need[k]:
            for f in range(6):
                need[add[k, f]] = True


@jit(nogil=True)
def _box_means(add, n_hands, need, boxes):
    """The marked keep rows ``n_hands..`` of ``boxes``: each the mean over the six faces of the rows one die
    larger, as ``explain._keeps`` computes every row (the rows nobody reads are left out)."""
    nb = boxes.shape[1]
    for k in range(n_hands, add.shape[0]):
        if not need[k]:
            continue
        a0, a1, a2, a3, a4, a5 = add[k, 0], add[k, 1], add[k, 2], add[k, 3], add[k, 4], add[k, 5]
        for b in range(nb):
            s = ((((boxes[a0, b] + boxes[a1, b]) + boxes[a2, b]) + boxes[a3, b]) + boxes[a4, b]) + boxes[a5, b]
            boxes[k, b] = s / 6.0


@jit(nogil=True)
def _sd(mean, second):
    """``moments.sd``: ``sqrt(max(second - mean * mean, 0.0))`` with Python's ``max`` (the first unless the
    second is greater)."""
    x = second - mean * mean
    if x < 0.0:
        x = 0.0
    return np.sqrt(x)


@jit(nogil=True)
def _before(rest_a, kind_a, tie_a, rest_b, kind_b, tie_b):
    """Whether option a ranks before option b: the higher value, then boxes before keeps, then the tie order."""
    if rest_a != rest_b:
        return rest_a > rest_b
    if kind_a != kind_b:
        return kind_a < kind_b
    return tie_a < tie_b


@jit(nogil=True)
def advise_states(
    V,
    M,
    spread,
    p,
    n_dice,
    counts,
    scores,
    add,
    subs,
    subkeeps,
    keep_rank,
    hands,
    open_masks,
    penta_flags,
    subtotals,
    rerolls,
    so_far,
    explain,
    head,
    iopt,
    fopt,
):
    """The advice of each situation ``i`` (hand ``hands[i]`` in state ``open_masks[i]``, ``penta_flags[i]``,
    ``subtotals[i]``, ``rerolls[i]`` rerolls left, ``so_far[i]`` points on the sheet), into row ``i`` of ``head``,
    ``iopt`` and ``fopt`` (see the columns above), the options best first as ``Advisor._advice`` ranks them. With
    ``spread``, every option's SD from the second moments ``M``; with ``explain``, each option's points this turn
    and likely box (two rerolls left at most), and the rule of thumb's option."""
    n_hands = subkeeps.shape[0]
    n_keeps = counts.shape[0]
    nb = p[rules.P_N_BOXES]
    cap = p[rules.P_UPPER_THRESHOLD]
    upper_mask = p[rules.P_UPPER_MASK]
    penta_box = p[rules.P_PENTA_BOX]
    K = np.empty((n_keeps, 1))
    B = np.empty((n_keeps, 1))
    rows = np.empty((p[rules.P_N_ROWS], 1))
    keep1 = np.empty(n_keeps)
    points = np.empty(nb, dtype=np.int64)
    box_rest = np.empty(nb)
    work_n = max(n_keeps, p[rules.P_N_ROWS])
    KV = np.zeros((work_n, 1))
    KM = np.zeros((work_n, 1))
    KP = np.zeros((work_n, 1))
    SV = np.zeros((work_n, 1))
    SM = np.zeros((work_n, 1))
    SP = np.zeros((work_n, 1))
    BV = np.zeros((work_n, 1))
    BI = np.zeros((work_n, 1))
    BM = np.zeros((work_n, 1))
    rowsV = np.zeros((work_n, 1))
    rowsM = np.zeros((work_n, 1))
    rowsP = np.zeros((work_n, 1))
    hand_pts = np.empty((n_hands, nb), dtype=np.int64)
    last_box = np.empty(n_hands, dtype=np.int64)
    last_rest = np.empty(n_hands)
    pts1 = np.empty(n_keeps)
    boxes1 = np.empty((n_keeps, nb))
    pts2 = np.empty(n_keeps)
    boxes2 = np.empty((n_keeps, nb))
    taken = np.empty(n_hands, dtype=np.int64)
    need1 = np.empty(n_keeps, dtype=np.bool_)
    need2 = np.empty(n_keeps, dtype=np.bool_)
    m = iopt.shape[1]
    rest = np.empty(m)
    kinds = np.empty(m, dtype=np.int64)
    ids = np.empty(m, dtype=np.int64)
    ties = np.empty(m, dtype=np.int64)
    order = np.empty(m, dtype=np.int64)
    for i in range(hands.shape[0]):
        hand = hands[i]
        open_mask = open_masks[i]
        penta = penta_flags[i]
        sub = subtotals[i]
        r = rerolls[i]
        base = float(so_far[i])
        # The values: with the spread, the second-moment pass (``moments.turn_moments``: its values are the value
        # pass's, the same sums in the same order, so the same bits), else the value pass
        # (``turn.situation_values``); the keeps with one reroll kept for the explanation.
        if r > 0 and spread:
            rep = comes_back(p, open_mask, penta)
            moment_rows(V, M, p, n_dice, open_mask, penta, min(sub, cap), 1, rowsV, rowsM, rowsP)
            _, opt_row, opt_points, n_opt, _ = hand_options(p, counts[:n_hands], scores, open_mask, penta)
            moment_hands(1, rep, opt_row, opt_points, n_opt, rowsV, rowsM, rowsP, KV, KM, KP, SV, SM, SP, BV)
            for level in range(r):
                keep_values(add, n_hands, KV)
                keep_values(add, n_hands, KM)
                if rep:
                    keep_values(add, n_hands, KP)
                best_keep_moments(subs, n_hands, 1, KV, KM, BV, BI, BM)
                hand_choices(n_hands, 1, rep, KV, KM, KP, SV, SM, SP, BV, BI, BM)
                if level == 0:
                    for k in range(n_keeps):
                        keep1[k] = KV[k, 0]
            values = KV
        elif r > 0:
            successor_rows(V, p, n_dice, open_mask, penta, sub, rows, 0.0)
            hand_values(p, counts[:n_hands], scores, open_mask, penta, rows, K, 0.0)
            for level in range(r):
                keep_values(add, n_hands, K)
                best_subkeeps(subs, n_hands, K, B)
                if level == 0:
                    for k in range(n_keeps):
                        keep1[k] = K[k, 0]
            values = K
        else:
            values = K
        bonus = score_values(V, p, counts[hand], open_mask, penta, sub, points, box_rest)
        # The options in ``Advisor._advice``'s order before ranking: legal boxes, then the hand's keeps.
        n = 0
        for b in range(nb):
            if points[b] >= 0:
                rest[n] = box_rest[b]
                kinds[n] = KIND_BOX
                ids[n] = b
                ties[n] = b
                n += 1
        if r > 0:
            for j in range(subkeeps.shape[1]):
                k = subkeeps[hand, j]
                if k < 0:
                    break
                rest[n] = values[k, 0]
                kinds[n] = KIND_KEEP
                ids[n] = k
                ties[n] = keep_rank[k]
                n += 1
        best = -np.inf
        finite = 1
        for j in range(n):
            if rest[j] > best:
                best = rest[j]
            if not np.isfinite(rest[j]):
                finite = 0
        # Ranked: insertion sort (stable; a few dozen options).
        for j in range(n):
            order[j] = j
            x = j
            while x > 0:
                a = order[x - 1]
                c = order[x]
                if _before(rest[c], kinds[c], ties[c], rest[a], kinds[a], ties[a]):
                    order[x - 1] = c
                    order[x] = a
                    x -= 1
                else:
                    break
        no_score = 1
        for j in range(n):
            o = order[j]
            iopt[i, j, I_KIND] = kinds[o]
            iopt[i, j, I_ID] = ids[o]
            fopt[i, j, F_VALUE] = base + rest[o]
            fopt[i, j, F_LOSS] = best - rest[o]
            fopt[i, j, F_SD] = np.nan
            fopt[i, j, F_NOW] = np.nan
            fopt[i, j, F_CHANCE] = np.nan
            iopt[i, j, I_LIKELY] = -1
            if kinds[o] == KIND_BOX:
                b = ids[o]
                pts = points[b]
                iopt[i, j, I_POINTS] = pts
                iopt[i, j, I_UPPER] = upper_bonus(p, sub, pts) if (upper_mask >> b) & 1 else 0
                if pts != 0:
                    no_score = 0
            else:
                iopt[i, j, I_POINTS] = 0
                iopt[i, j, I_UPPER] = 0
        # The SDs (``Advisor.option_sds``): a keep's from its moments, a box's from the next state's.
        if spread:
            for j in range(n):
                if iopt[i, j, I_KIND] == KIND_KEEP:
                    k = iopt[i, j, I_ID]
                    fopt[i, j, F_SD] = _sd(KV[k, 0], KM[k, 0])
                else:
                    b = iopt[i, j, I_ID]
                    pts = iopt[i, j, I_POINTS]
                    added = pts if (upper_mask >> b) & 1 else 0
                    flag = penta if b != penta_box else (1 if pts > 0 else 0)
                    nxt_mask = open_mask & ~(1 << b)
                    s = min(sub + added, cap)
                    fopt[i, j, F_SD] = _sd(V[flag, nxt_mask, s], M[flag, nxt_mask, s])
                if not np.isfinite(fopt[i, j, F_SD]):
                    finite = 0
        head[i, H_COUNT] = n
        head[i, H_BONUS] = bonus
        head[i, H_FINITE] = finite
        head[i, H_NO_SCORE] = no_score
        head[i, H_OBVIOUS] = -1
        if not explain or r > 2:
            continue
        # The explanation (``explain.outlooks``): each option's points this turn; the box chances of the two
        # options it shows.
        now = pts1
        if r > 0:
            # The last roll (``explain.last_roll_choices``): each hand's box, points still to come, points earned.
            for h in range(n_hands):
                fixed = scores[h, nb] == 1
                for b in range(nb):
                    hand_pts[h, b] = scores[h, b]
                    if fixed and (open_mask >> b) & 1 == 0:
                        hand_pts[h, b] = -1
                hb = 0
                if not fixed:
                    hb = score_options(p, counts[h], open_mask, penta, hand_pts[h])
                top = 0
                top_rest = -np.inf
                top_earned = 0
                found_nan = False
                for b in range(nb):
                    pts = hand_pts[h, b]
                    added = pts if (upper_mask >> b) & 1 else 0
                    ub = p[rules.P_UPPER_BONUS] if (sub < cap) and (sub + added >= cap) else 0
                    value = -np.inf
                    if pts >= 0:
                        flag = penta if b != penta_box else (1 if pts > 0 else 0)
                        value = (V[flag, open_mask & ~(1 << b), min(sub + added, cap)] + ub) + float(pts + hb)
                    earned = pts + hb + ub
                    if b == 0:
                        top_rest = value
                        top_earned = earned
                        found_nan = np.isnan(value)
                    elif not found_nan and (np.isnan(value) or value > top_rest):
                        top = b
                        top_rest = value
                        top_earned = earned
                        found_nan = np.isnan(value)
                last_box[h] = top
                last_rest[h] = top_rest
                pts1[h] = float(top_earned)
            _point_means(add, n_hands, pts1)
            if r == 2:
                # One reroll left: each hand scores (its best box) or takes its best keep, by the values.
                for h in range(n_hands):
                    togo = (base + last_rest[h]) - base
                    kb = subkeeps[h, 0]
                    kv = keep1[kb]
                    for j in range(1, subkeeps.shape[1]):
                        k = subkeeps[h, j]
                        if k < 0:
                            break
                        if keep1[k] > kv:
                            kv = keep1[k]
                            kb = k
                    taken[h] = kb if keep1[kb] > togo else -1
                    pts2[h] = pts1[kb] if taken[h] >= 0 else pts1[h]
                _point_means(add, n_hands, pts2)
                now = pts2
        # Each option's points this turn; the rule of thumb's option: the most points this turn, then the highest
        # value, the first of equals.
        obvious = 0
        for j in range(n):
            if iopt[i, j, I_KIND] == KIND_BOX:
                fopt[i, j, F_NOW] = float(iopt[i, j, I_POINTS] + bonus + iopt[i, j, I_UPPER])
            else:
                fopt[i, j, F_NOW] = now[iopt[i, j, I_ID]]
            if j > 0:
                x_now, x_value = fopt[i, j, F_NOW], fopt[i, j, F_VALUE]
                o_now, o_value = fopt[i, obvious, F_NOW], fopt[i, obvious, F_VALUE]
                if x_now > o_now or (x_now == o_now and x_value > o_value):
                    obvious = j
            if not np.isfinite(fopt[i, j, F_NOW]):
                head[i, H_FINITE] = 0
        if obvious == 0 or not fopt[i, obvious, F_NOW] > fopt[i, 0, F_NOW]:
            continue
        head[i, H_OBVIOUS] = obvious
        for j in (0, obvious):
            if iopt[i, j, I_KIND] == KIND_BOX:
                iopt[i, j, I_LIKELY] = iopt[i, j, I_ID]
                fopt[i, j, F_CHANCE] = 1.0
        if r == 0:
            continue
        # The box chances of the best option and the rule of thumb's: the rows of ``explain._keeps`` they read.
        for k in range(n_keeps):
            need1[k] = False
            need2[k] = False
        for j in (0, obvious):
            if iopt[i, j, I_KIND] == KIND_KEEP:
                if r == 1:
                    need1[iopt[i, j, I_ID]] = True
                else:
                    need2[iopt[i, j, I_ID]] = True
        if r == 2:
            _spread_need(add, n_hands, need2)
            for h in range(n_hands):
                if need2[h] and taken[h] >= 0:
                    need1[taken[h]] = True
        _spread_need(add, n_hands, need1)
        for h in range(n_hands):
            for b in range(nb):
                boxes1[h, b] = 0.0
            boxes1[h, last_box[h]] = 1.0
        _box_means(add, n_hands, need1, boxes1)
        dist = boxes1
        if r == 2:
            for h in range(n_hands):
                if need2[h]:
                    src = taken[h] if taken[h] >= 0 else h
                    for b in range(nb):
                        boxes2[h, b] = boxes1[src, b]
            _box_means(add, n_hands, need2, boxes2)
            dist = boxes2
        for j in (0, obvious):
            if iopt[i, j, I_KIND] == KIND_BOX:
                continue
            k = iopt[i, j, I_ID]
            likely = -1
            chance = 0.0
            for b in range(nb):
                if dist[k, b] > 0 and (likely < 0 or dist[k, b] > chance):
                    likely = b
                    chance = dist[k, b]
            iopt[i, j, I_LIKELY] = likely
            fopt[i, j, F_CHANCE] = chance


kernels.drop_stale_cache(
    [advise_states, _point_means, _spread_need, _box_means, _sd, _before, *_steps.values()], extra=(moments,)
)
