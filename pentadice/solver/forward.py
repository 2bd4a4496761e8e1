"""Forward propagation of the final score's exact distribution under the advisor's policy.

A slot is a state between turns ``(penta_scored, open_mask)`` (its id ``sid = penta_scored << 13 | open_mask``)
and a lane ``u`` (the capped upper subtotal). Each slot holds a vector of probabilities over ``y``, the points
gained since the start *minus* the upper points that went into the lane (``u - u0``): while the subtotal is
under the threshold the upper points are the lane itself, so ``y`` is only lower-box points, Penta bonuses,
the upper bonus and upper points above the threshold, and the vectors stay narrow. The final score is
``score_so_far - u0 + u + y``.

States are processed layer by layer (all states with ``k`` open boxes, then ``k - 1``): for each state the
turn is run forward under the policy, for all 64 lanes at once, giving the chance of each outcome (box, its
points, Penta bonus or not) per lane (:func:`chunk_outcomes`); then each outcome's mass is pushed into the
successor slot, shifted by the points it adds (:func:`chunk_push`). A layer's states are handled in chunks:
threads compute the outcomes of a chunk's states, then push them, each thread owning a share of the
successor states, so no two threads ever write the same slot. A layer's vectors are freed once pushed.

The policy is the advisor's first-ranked option, read from the values computed by the very turn functions
the solver and the advisor run (the same operations, so the same bits): after the last roll the first best
box in sheet order; with rerolls left, scoring now if the best box is worth at least the best proper keep,
else the best keep, ties to the smallest keep number (more dice first, then by faces: the advisor's
``Option.tie_key``). That keep is found per lane from ``BI[k]``, the first keep inside keep ``k`` worth the
best value inside it (``k`` itself if it is, else the smallest of its sub-keeps' answers that reach it), in
branch-free lane loops beside the solver's ``best_subkeeps``.

Kiriki's self-returning states are not handled (the caller refuses Kiriki).
"""

from __future__ import annotations

import numpy as np

from pentadice.compiled import jit
from pentadice.rules import N_BOXES, P_PENTA_BONUS, P_ROLLS, P_UPPER_BONUS, P_UPPER_THRESHOLD, PENTA
from pentadice.solver import kernels
from pentadice.turn import N_ROWS, ROW_LOWER, ROW_PENTA

LANES = kernels.LANES
MASKS = 1 << N_BOXES

# The 64-lane turn functions, compiled once and shared with the solver (callees of the kernels below).
successor_rows = kernels.wide.successor_rows
hand_values = kernels.wide.hand_values
keep_values = kernels.wide.keep_values
best_subkeeps = kernels.wide.best_subkeeps
score_options = kernels.wide.score_options
upper_bonus = kernels.wide.upper_bonus

ERR_NO_BOX = 1  # no legal box reproduced the hand's best value (cannot happen with a consistent table)
ERR_WIDTH = 2  # a shifted vector overran its slot (cannot happen: the plan bounds every slot)


@jit(nogil=True)
def plan(p, n_dice, max_points, start_sid, u0, hi, lanes):
    """The slots reachable from ``start_sid`` at lane ``u0``: ``lanes[sid]`` a bit mask of lanes, ``hi[sid]``
    the largest ``y`` any of them can hold (a bound from the rules, whatever the policy). States come in
    decreasing mask order: every predecessor of a state has a larger mask."""
    cap = p[P_UPPER_THRESHOLD]
    ub = p[P_UPPER_BONUS]
    pb = p[P_PENTA_BONUS]
    for s in range(2 * MASKS):
        hi[s] = -1
        lanes[s] = 0
    hi[start_sid] = 0
    lanes[start_sid] = np.uint64(1) << np.uint64(u0)
    start_mask = start_sid & (MASKS - 1)
    for mask in range(start_mask, -1, -1):
        if mask & ~start_mask:
            continue
        for ps in range(2):
            sid = (ps << N_BOXES) | mask
            if lanes[sid] == 0:
                continue
            bonus = pb if ps == 1 and (mask >> PENTA) & 1 == 0 else 0
            for b in range(N_BOXES):
                if (mask >> b) & 1 == 0:
                    continue
                nxt = mask & ~(1 << b)
                if b < 6:
                    t = (ps << N_BOXES) | nxt
                    for c in range(n_dice + 1):
                        a = c * (b + 1)
                        extra = bonus if c == n_dice else 0
                        for u in range(cap + 1):
                            if (lanes[sid] >> np.uint64(u)) & np.uint64(1) == 0:
                                continue
                            u2 = min(u + a, cap)
                            lanes[t] |= np.uint64(1) << np.uint64(u2)
                            inc = extra + (ub if u < cap and u + a >= cap else 0) + (u + a - u2)
                            hi[t] = max(hi[t], hi[sid] + inc)
                elif b < PENTA:
                    t = (ps << N_BOXES) | nxt
                    lanes[t] |= lanes[sid]
                    hi[t] = max(hi[t], hi[sid] + max_points[b] + bonus)
                else:
                    for f in range(2):
                        t = (f << N_BOXES) | nxt
                        lanes[t] |= lanes[sid]
                        hi[t] = max(hi[t], hi[sid] + (max_points[b] if f == 1 else 0))


@jit(nogil=True)
def chunk_outcomes(
    V, p, n_dice, counts, scores, add, subs, weight, subkeeps, sids, lo, hi, rlo, rhi, start_hand, start_stage,
    out, tlist, ntouch, errors,
):  # fmt: skip
    """For chunk entries ``lo <= i < hi``: the turn of state ``sids[i]`` run forward under the policy, for its
    lanes that hold mass. ``out[i, b, bonus, points, u]``: the chance that lane ``u``'s turn fills box ``b``
    with ``points`` (and the Penta bonus when ``bonus`` is 1); ``tlist[i, :ntouch[i]]`` lists the entries
    ``(b * 2 + bonus) * n_points + points`` that are not zero. ``start_hand >= 0``: the chunk's first state
    starts mid-turn, with that hand showing and ``start_stage`` rerolls left."""
    n_hands = weight.shape[0]
    n_keeps = counts.shape[0]
    n_points = out.shape[3]
    R = p[P_ROLLS]
    K = np.empty((n_keeps, LANES))
    B = np.empty((n_keeps, LANES))
    rows = np.empty((N_ROWS, LANES))
    KV = np.empty((R, n_keeps, LANES))  # keep values with r rerolls left
    BV = np.empty((R, n_keeps, LANES))  # the best keep inside each keep
    BI = np.empty((R, n_keeps, LANES), dtype=np.int64)  # and which it is
    S = np.empty((n_hands, LANES))  # the best box's value per hand
    M = np.empty((n_keeps, LANES))  # mass on hands, then on keeps
    points = np.empty(N_BOXES, dtype=np.int64)
    opt_n = np.empty(n_hands, dtype=np.int64)
    opt_box = np.empty((n_hands, N_BOXES), dtype=np.int64)
    opt_pts = np.empty((n_hands, N_BOXES), dtype=np.int64)
    opt_row = np.empty((n_hands, N_BOXES), dtype=np.int64)
    opt_bonus = np.empty(n_hands, dtype=np.int64)
    flags = np.zeros(N_BOXES * 2 * n_points, dtype=np.bool_)
    active = np.empty(LANES, dtype=np.bool_)
    act = np.empty(LANES, dtype=np.int64)  # the active lanes
    box_arg = np.empty((n_hands, LANES), dtype=np.int64)  # each hand's box (its option number) per lane
    keep_arg = np.empty(LANES, dtype=np.int64)
    tmp = np.empty(LANES, dtype=np.int64)
    bk = np.empty(LANES)
    total = float(6**n_dice)
    for i in range(lo, hi):
        sid = sids[i]
        ps = sid >> N_BOXES
        mask = sid & (MASKS - 1)
        ntouch[i] = 0
        any_active = False
        for u in range(LANES):
            active[u] = rhi[sid, u] >= rlo[sid, u]
            any_active = any_active or active[u]
        if not any_active:
            continue
        # The values inside the turn, as the solver and the advisor compute them.
        successor_rows(V, p, n_dice, mask, ps, 0, rows)
        hand_values(p, counts[:n_hands], scores, mask, ps, rows, K, points)
        for r in range(1, R):
            keep_values(add, n_hands, K)
            KV[r] = K
            best_subkeeps(subs, n_hands, K, B)
            BV[r] = B
            # BI[r, k]: the first keep (smallest number: the advisor's order) inside keep k worth BV[r, k]. Keep k
            # comes before every keep inside it, so it is its own answer when it is worth the best.
            last = n_keeps - 1  # the empty keep: nothing inside it but itself
            for u in range(LANES):
                BI[r, last, u] = last
            for k in range(last - 1, n_hands - 1, -1):  # branch-free lane loops, which vectorise
                for u in range(LANES):
                    tmp[u] = n_keeps
                for j in range(subs.shape[1]):
                    sk = subs[k, j]
                    for u in range(LANES):
                        c = BI[r, sk, u]
                        tmp[u] = c if (BV[r, sk, u] == BV[r, k, u]) & (c < tmp[u]) else tmp[u]
                for u in range(LANES):
                    BI[r, k, u] = k if KV[r, k, u] == BV[r, k, u] else tmp[u]
        # Each hand's legal boxes, in sheet order, with their successor rows (as hand_values builds them).
        for h in range(n_hands):
            if scores[h, N_BOXES] == 1:
                bonus = 0
                for b in range(N_BOXES):
                    points[b] = scores[h, b] if (mask >> b) & 1 == 1 else -1
            else:
                bonus = score_options(p, counts[h], mask, ps, points)
            n = 0
            for b in range(N_BOXES):
                pts = points[b]
                if pts < 0:
                    continue
                opt_box[h, n] = b
                opt_pts[h, n] = pts
                if b < 6:
                    opt_row[h, n] = b * 6 + pts // (b + 1)
                elif b < PENTA:
                    opt_row[h, n] = ROW_LOWER + b - 6
                else:
                    opt_row[h, n] = ROW_PENTA + (1 if pts > 0 else 0)
                n += 1
            opt_n[h] = n
            opt_bonus[h] = bonus
        # Each hand's box after the last roll, per lane: the first best in sheet order (as hand_values finds it).
        for h in range(n_hands):
            for u in range(LANES):
                S[h, u] = -np.inf
                box_arg[h, u] = -1
            for o in range(opt_n[h]):
                row = opt_row[h, o]
                gain = float(opt_pts[h, o] + opt_bonus[h])
                for u in range(LANES):
                    x = rows[row, u] + gain
                    if x > S[h, u]:
                        S[h, u] = x
                        box_arg[h, u] = o
        n_act = 0
        for u in range(LANES):
            if active[u]:
                act[n_act] = u
                n_act += 1
        # The first roll.
        stage = R - 1
        if start_hand >= 0 and i == 0:
            stage = start_stage
            for h in range(n_hands):
                for u in range(LANES):
                    M[h, u] = 1.0 if (h == start_hand and active[u]) else 0.0
        else:
            for h in range(n_hands):
                w = weight[h] / total
                for u in range(LANES):
                    M[h, u] = w
        for r in range(stage, -1, -1):
            for k in range(n_hands, n_keeps):
                for u in range(LANES):
                    M[k, u] = 0.0
            for h in range(n_hands):
                if r > 0:  # the best proper keep: the best keep inside one of the keeps a die smaller
                    for u in range(LANES):
                        bk[u] = -np.inf
                    for j in range(subs.shape[1]):
                        s = subs[h, j]
                        for u in range(LANES):
                            x = BV[r, s, u]
                            bk[u] = x if x > bk[u] else bk[u]
                    for u in range(LANES):
                        tmp[u] = n_keeps
                    for j in range(subs.shape[1]):
                        sk = subs[h, j]
                        for u in range(LANES):
                            c = BI[r, sk, u]
                            tmp[u] = c if (BV[r, sk, u] == bk[u]) & (c < tmp[u]) else tmp[u]
                    for u in range(LANES):
                        keep_arg[u] = tmp[u] if bk[u] > S[h, u] else -1
                for a in range(n_act):
                    u = act[a]
                    m = M[h, u]
                    if m == 0.0:
                        continue
                    if r > 0 and keep_arg[u] >= 0:
                        if keep_arg[u] >= n_keeps:
                            errors[0] = ERR_NO_BOX
                            continue
                        M[keep_arg[u], u] += m
                        continue
                    o = box_arg[h, u]
                    b = opt_box[h, o]
                    bf = 1 if opt_bonus[h] > 0 else 0
                    e = (b * 2 + bf) * n_points + opt_pts[h, o]
                    if not flags[e]:
                        flags[e] = True
                        tlist[i, ntouch[i]] = e
                        ntouch[i] += 1
                    out[i, b, bf, opt_pts[h, o], u] += m
            if r == 0:
                break
            # Roll the dice not kept: each keep gains a die of each face with chance 1/6, the smallest first.
            for h in range(n_hands):
                for u in range(LANES):
                    M[h, u] = 0.0
            for k in range(n_keeps - 1, n_hands - 1, -1):
                for u in range(LANES):
                    M[k, u] *= 1.0 / 6.0
                for f in range(6):
                    t = add[k, f]
                    for u in range(LANES):
                        M[t, u] += M[k, u]
        for t in range(ntouch[i]):
            flags[tlist[i, t]] = False


@jit(nogil=True)
def chunk_push(
    p, sids, n_chunk, out, tlist, ntouch, src, dst, row_off, width, rlo, rhi, part, me, errors,
):  # fmt: skip
    """Push the outcomes of the chunk's states into their successors' vectors, for the successor states with
    ``part[sid] == me`` only (so threads never share a slot); the entries pushed are set back to zero."""
    cap = p[P_UPPER_THRESHOLD]
    pb = p[P_PENTA_BONUS]
    n_points = out.shape[3]
    for i in range(n_chunk):
        sid = sids[i]
        ps = sid >> N_BOXES
        mask = sid & (MASKS - 1)
        for t in range(ntouch[i]):
            e = tlist[i, t]
            pts = e % n_points
            bf = (e // n_points) % 2
            b = e // (2 * n_points)
            nxt = mask & ~(1 << b)
            nps = ps if b != PENTA else (1 if pts > 0 else 0)
            nsid = (nps << N_BOXES) | nxt
            if part[nsid] != me:
                continue
            base = bf * pb + (pts if b >= 6 else 0)
            w2 = width[nsid]
            for u in range(LANES):
                q = out[i, b, bf, pts, u]
                if q == 0.0:
                    continue
                out[i, b, bf, pts, u] = 0.0
                if b < 6:
                    u2 = min(u + pts, cap)
                    inc = base + upper_bonus(p, u, pts) + (u + pts - u2)
                else:
                    u2 = u
                    inc = base
                lo = rlo[sid, u]
                hi = rhi[sid, u]
                if hi + inc >= w2 or row_off[nsid, u2] < 0:
                    errors[0] = ERR_WIDTH
                    continue
                so = row_off[sid, u]
                do = row_off[nsid, u2] + inc
                for y in range(lo, hi + 1):
                    dst[do + y] += q * src[so + y]
                if lo + inc < rlo[nsid, u2]:
                    rlo[nsid, u2] = lo + inc
                if hi + inc > rhi[nsid, u2]:
                    rhi[nsid, u2] = hi + inc


COMPILED = (plan, chunk_outcomes, chunk_push)
kernels.drop_stale_cache(list(COMPILED))
