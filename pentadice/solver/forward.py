"""Forward propagation of the final score's exact distribution under the advisor's policy.

A slot is a state between turns ``(penta_scored, open_mask)`` (its id ``sid = penta_scored << n_boxes |
open_mask``; ``penta_scored`` is always 0 on a sheet without a Penta box) and a lane ``u`` (the capped upper
subtotal). Each slot holds a vector of probabilities over ``y``, the points
gained since the start *minus* the upper points that went into the lane (``u - u0``): while the subtotal is
under the threshold the upper points are the lane itself, so ``y`` is only lower-box points, Penta bonuses,
the upper bonus and upper points above the threshold, and the vectors stay narrow. The final score is
``score_so_far - u0 + u + y``.

States are processed layer by layer (all states with ``k`` open boxes, then ``k - 1``): for each state the
turn is run forward under the policy, for all the rule set's lanes at once (``RuleSet.lanes``: 64, or 80 for
Maxi Yatzy's threshold of 75), giving the chance of each outcome (box, its
points, Penta bonus or not) per lane (:func:`chunk_outcomes`); then each outcome's mass is pushed into the
successor slot, shifted by the points it adds (:func:`chunk_push`). A layer's states are handled in chunks:
threads compute the outcomes of a chunk's states, then push them, each thread owning a share of the
successor states, so no two threads ever write the same slot. A layer's vectors are freed once pushed.

The policy is the advisor's first-ranked option, read from the values computed by the very turn functions
the solver and the advisor run (the same operations, so the same bits): after the last roll the first best
box in sheet order; with rerolls left, scoring now if the best box is worth at least the best proper keep,
else the best keep, ties to the smallest keep number (more dice first, then by faces: the advisor's
``Option.tie_key``). That keep is found per lane by the second-moment pass's own steps
(:func:`pentadice.solver.moments.best_keep_moments`, which the one-lane advisor's order agrees with), its
second moments left at zero.

Sizes come from the rule set's parameters and the arrays' shapes (boxes, successor rows, the keeps one die
smaller), as in :mod:`pentadice.solver.turn`; the kernels are compiled once per lane count (:func:`compiled`), and the
public functions below pick the build from the value table's lanes.

Kiriki's self-returning states are not handled (the caller refuses Kiriki).
"""

from __future__ import annotations

import functools
import types

import numpy as np

from pentadice.game.rules import (
    BOX_FIELDS,
    F_A,
    F_KIND,
    K_FACE,
    K_PENTA,
    P_BOX_DATA,
    P_N_BOXES,
    P_N_ROWS,
    P_PENTA_BONUS,
    P_PENTA_BOX,
    P_ROLLS,
    P_UPPER_BONUS,
    P_UPPER_THRESHOLD,
    box_successor,
    hand_options,
    upper_bonus,
)
from pentadice.solver.moments import best_keep_moments
from pentadice.solver.turn import hand_values, keep_values, successor_rows

# Lanes: ``compiled(lanes)`` rebinds W to the rule set's lane count (a constant there); the turn functions called
# are the solver's build for that lane count (``kernels.wide_for``), shared with it.
W = 1
LANES = 64  # Penta's, Yahtzee's and Yatzy's lanes (upper threshold 63)

ERR_NO_BOX = 1  # no legal box reproduced the hand's best value (cannot happen with a consistent table)
ERR_WIDTH = 2  # a shifted vector overran its slot (cannot happen: the plan bounds every slot)


def plan_slots(p, n_dice, max_points, start_sid, u0, hi, lanes):
    """The slots reachable from ``start_sid`` at lane ``u0``: ``lanes[sid, u]`` 1 where lane ``u`` of state
    ``sid`` can be reached, ``hi[sid]`` the largest ``y`` any of them can hold (a bound from the rules, whatever
    the policy). States come in decreasing mask order: every predecessor of a state has a larger mask."""
    cap = p[P_UPPER_THRESHOLD]
    ub = p[P_UPPER_BONUS]
    pb = p[P_PENTA_BONUS]
    n_boxes = p[P_N_BOXES]
    penta = p[P_PENTA_BOX]
    n_flags = hi.shape[0] >> n_boxes
    n_masks = 1 << n_boxes
    for s in range(hi.shape[0]):
        hi[s] = -1
        for u in range(lanes.shape[1]):
            lanes[s, u] = 0
    hi[start_sid] = 0
    lanes[start_sid, u0] = 1
    start_mask = start_sid & (n_masks - 1)
    for mask in range(start_mask, -1, -1):
        if mask & ~start_mask:
            continue
        for ps in range(n_flags):
            sid = (ps << n_boxes) | mask
            if hi[sid] < 0:
                continue
            bonus = pb if ps == 1 and (mask >> penta) & 1 == 0 else 0
            for b in range(n_boxes):
                if (mask >> b) & 1 == 0:
                    continue
                nxt = mask & ~(1 << b)
                o = P_BOX_DATA + BOX_FIELDS * b
                kind = p[o + F_KIND]
                if kind == K_FACE:
                    face = p[o + F_A]
                    t = (ps << n_boxes) | nxt
                    for c in range(n_dice + 1):
                        a = c * face
                        extra = bonus if c == n_dice else 0
                        for u in range(cap + 1):
                            if lanes[sid, u] == 0:
                                continue
                            u2 = min(u + a, cap)
                            lanes[t, u2] = 1
                            inc = extra + (ub if u < cap and u + a >= cap else 0) + (u + a - u2)
                            hi[t] = max(hi[t], hi[sid] + inc)
                elif kind != K_PENTA:
                    t = (ps << n_boxes) | nxt
                    for u in range(cap + 1):
                        lanes[t, u] |= lanes[sid, u]
                    hi[t] = max(hi[t], hi[sid] + max_points[b] + bonus)
                else:
                    for f in range(2):
                        t = (f << n_boxes) | nxt
                        for u in range(cap + 1):
                            lanes[t, u] |= lanes[sid, u]
                        hi[t] = max(hi[t], hi[sid] + (max_points[b] if f == 1 else 0))


def turn_outcomes(
    V, p, n_dice, counts, scores, add, subs, weight, subkeeps, sids, lo, hi, rlo, rhi, slot_of, start_hand,
    start_stage, out, tlist, ntouch, errors,
):  # fmt: skip
    """For chunk entries ``lo <= i < hi``: the turn of state ``sids[i]`` run forward under the policy, for its
    lanes that hold mass (``rlo[slot_of[sid]] <= rhi[slot_of[sid]]``: the slots' rows of the states reached).
    ``out[i, b, bonus, points, u]``: the chance that lane ``u``'s turn fills box ``b``
    with ``points`` (and the Penta bonus when ``bonus`` is 1); ``tlist[i, :ntouch[i]]`` lists the entries
    ``(b * 2 + bonus) * n_points + points`` that are not zero. ``start_hand >= 0``: the chunk's first state
    starts mid-turn, with that hand showing and ``start_stage`` rerolls left."""
    n_hands = weight.shape[0]
    n_keeps = counts.shape[0]
    n_points = out.shape[3]
    n_boxes = p[P_N_BOXES]
    R = p[P_ROLLS]
    K = np.empty((n_keeps, W))
    rows = np.empty((p[P_N_ROWS], W))
    KV = np.empty((R, n_keeps, W))  # keep values with r rerolls left
    BV = np.empty((R, n_keeps, W))  # the best keep inside each keep
    BI = np.empty((R, n_keeps, W))  # and which it is (its number)
    BM = np.zeros((n_keeps, W))  # the second moments those steps carry: not needed here
    Z = np.zeros((n_keeps, W))
    n_lanes = Z.shape[1]  # W, as a number rather than a constant (a constant compiles the steps again)
    S = np.empty((n_hands, W))  # the best box's value per hand
    M = np.empty((n_keeps, W))  # mass on hands, then on keeps
    flags = np.zeros(n_boxes * 2 * n_points, dtype=np.bool_)
    active = np.empty(W, dtype=np.bool_)
    act = np.empty(W, dtype=np.int64)  # the active lanes
    box_arg = np.empty((n_hands, W), dtype=np.int64)  # each hand's box (its option number) per lane
    keep_arg = np.empty(W, dtype=np.int64)
    total = float(6**n_dice)
    for i in range(lo, hi):
        sid = sids[i]
        ps = sid >> n_boxes
        mask = sid & ((1 << n_boxes) - 1)
        slot = slot_of[sid]
        ntouch[i] = 0
        any_active = False
        for u in range(W):
            active[u] = rhi[slot, u] >= rlo[slot, u]
            any_active = any_active or active[u]
        if not any_active:
            continue
        # The values inside the turn, as the solver and the advisor compute them.
        successor_rows(V, p, n_dice, mask, ps, 0, rows, 0.0)
        hand_values(p, counts[:n_hands], scores, mask, ps, rows, K, 0.0)
        for r in range(1, R):
            keep_values(add, n_hands, K)
            KV[r] = K
            # BV[r, k], BI[r, k]: the best keep inside keep k and its number, ties to the smallest (the advisor's
            # order); for a hand, its best proper keep (the second-moment pass's steps, without their moments).
            best_keep_moments(subs, n_hands, n_lanes, KV[r], Z, BV[r], BI[r], BM)
            for h in range(n_hands):  # the hands' values with one more roll, for the roll before: the best proper
                for u in range(W):  # keep's, if higher (best_subkeeps' maximum, found above already)
                    x = BV[r, h, u]
                    K[h, u] = x if x > K[h, u] else K[h, u]
        # Each hand's legal boxes, in sheet order, with their successor rows (as hand_values takes them).
        opt_box, opt_row, opt_gain, opt_n, opt_bonus = hand_options(p, counts[:n_hands], scores, mask, ps)
        # Each hand's box after the last roll, per lane: the first best in sheet order (as hand_values finds it).
        for h in range(n_hands):
            for u in range(W):
                S[h, u] = -np.inf
                box_arg[h, u] = -1
            for o in range(opt_n[h]):
                row = opt_row[h, o]
                gain = opt_gain[h, o]
                for u in range(W):
                    x = rows[row, u] + gain
                    if x > S[h, u]:
                        S[h, u] = x
                        box_arg[h, u] = o
        n_act = 0
        for u in range(W):
            if active[u]:
                act[n_act] = u
                n_act += 1
        # The first roll.
        stage = R - 1
        if start_hand >= 0 and i == 0:
            stage = start_stage
            for h in range(n_hands):
                for u in range(W):
                    M[h, u] = 1.0 if (h == start_hand and active[u]) else 0.0
        else:
            for h in range(n_hands):
                w = weight[h] / total
                for u in range(W):
                    M[h, u] = w
        for r in range(stage, -1, -1):
            for k in range(n_hands, n_keeps):
                for u in range(W):
                    M[k, u] = 0.0
            for h in range(n_hands):
                if r > 0:  # the best proper keep, if it is worth more than the best box
                    for u in range(W):
                        keep_arg[u] = int(BI[r, h, u]) if BV[r, h, u] > S[h, u] else -1
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
                    pts = int(opt_gain[h, o]) - opt_bonus[h]
                    e = (b * 2 + bf) * n_points + pts
                    if not flags[e]:
                        flags[e] = True
                        tlist[i, ntouch[i]] = e
                        ntouch[i] += 1
                    out[i, b, bf, pts, u] += m
            if r == 0:
                break
            # Roll the dice not kept: each keep gains a die of each face with chance 1/6, the smallest first.
            for h in range(n_hands):
                for u in range(W):
                    M[h, u] = 0.0
            for k in range(n_keeps - 1, n_hands - 1, -1):
                for u in range(W):
                    M[k, u] *= 1.0 / 6.0
                for f in range(6):
                    t = add[k, f]
                    for u in range(W):
                        M[t, u] += M[k, u]
        for t in range(ntouch[i]):
            flags[tlist[i, t]] = False


def push_outcomes(
    p, sids, n_chunk, out, tlist, ntouch, src, dst, row_off, width, rlo, rhi, part, slot_of, me, errors,
):  # fmt: skip
    """Push the outcomes of the chunk's states into their successors' vectors, for the successor states with
    ``part[slot] == me`` only (so threads never share a slot); the entries pushed are set back to zero. The slots'
    arrays (``row_off``, ``width``, ``rlo``, ``rhi``, ``part``) have a row per state reached, ``slot_of[sid]``."""
    cap = p[P_UPPER_THRESHOLD]
    pb = p[P_PENTA_BONUS]
    n_boxes = p[P_N_BOXES]
    n_points = out.shape[3]
    for i in range(n_chunk):
        sid = sids[i]
        ps = sid >> n_boxes
        mask = sid & ((1 << n_boxes) - 1)
        slot = slot_of[sid]
        for t in range(ntouch[i]):
            e = tlist[i, t]
            pts = e % n_points
            bf = (e // n_points) % 2
            b = e // (2 * n_points)
            nxt, nps, added = box_successor(p, b, pts, mask, ps)
            nslot = slot_of[(nps << n_boxes) | nxt]
            if part[nslot] != me:
                continue
            base = bf * pb + pts - added  # the upper points are counted in the subtotal lane, until it caps
            w2 = width[nslot]
            for u in range(W):
                q = out[i, b, bf, pts, u]
                if q == 0.0:
                    continue
                out[i, b, bf, pts, u] = 0.0
                u2 = min(u + added, cap)
                inc = base + upper_bonus(p, u, added) + (u + added - u2)
                lo = rlo[slot, u]
                hi = rhi[slot, u]
                if hi + inc >= w2 or row_off[nslot, u2] < 0:
                    errors[0] = ERR_WIDTH
                    continue
                so = row_off[slot, u]
                do = row_off[nslot, u2] + inc
                for y in range(lo, hi + 1):
                    dst[do + y] += q * src[so + y]
                if lo + inc < rlo[nslot, u2]:
                    rlo[nslot, u2] = lo + inc
                if hi + inc > rhi[nslot, u2]:
                    rhi[nslot, u2] = hi + inc


@functools.cache
def compiled(lanes: int = LANES) -> types.SimpleNamespace:
    """``plan_slots``, ``turn_outcomes`` and ``push_outcomes`` compiled for ``lanes`` lanes (Numba, cached on disk
    per lane count), calling the solver's turn functions of that lane count."""
    from pentadice.solver import kernels, moments

    scope = dict(vars(kernels.wide_for(lanes)))
    steps = moments.compiled(lanes)
    scope.update(best_keep_moments=steps.best_keep_moments)
    out = {}
    for fn in (plan_slots, turn_outcomes, push_outcomes):
        out[fn.__name__] = kernels._compile(fn, scope, lanes)
    kernels.drop_stale_cache(list(out.values()), extra=[moments])
    return types.SimpleNamespace(**out)


def kernels_for(V: np.ndarray) -> types.SimpleNamespace:
    """The build for a value table padded to its rule set's lanes (``distribution._padded``)."""
    return compiled(V.shape[2])


def plan(p, n_dice, max_points, start_sid, u0, hi, lanes) -> None:
    """:func:`plan_slots` of the build for ``lanes.shape[1]`` lanes."""
    compiled(lanes.shape[1]).plan_slots(p, n_dice, max_points, start_sid, u0, hi, lanes)


def chunk_outcomes(
    rs, V, sids, rlo, rhi, out, tlist, ntouch, start_hand=-1, start_stage=-1, slot_of=None,
) -> None:  # fmt: skip
    """:func:`turn_outcomes` of every state of ``sids`` under the rule set ``rs``, by the build for the value
    table's lanes (``V.shape[2]``); ``rlo`` and ``rhi`` with a row per state id (every state's) unless
    ``slot_of`` maps the states to their rows. RuntimeError if the outcomes failed (a table that does not fit
    the rules)."""
    from pentadice.solver.turn_inputs import turn_inputs

    inputs = turn_inputs(rs)
    t = inputs.tables
    errors = np.zeros(1, dtype=np.int64)
    kernels_for(V).turn_outcomes(
        V, inputs.p, rs.dice, t.counts, inputs.scores, t.add, t.subs, t.weight, t.subkeeps, sids, 0, len(sids),
        rlo, rhi, _identity(rlo.shape[0]) if slot_of is None else slot_of, start_hand, start_stage, out, tlist,
        ntouch, errors,
    )  # fmt: skip
    if errors[0]:
        raise RuntimeError(f"the turn outcomes failed (code {errors[0]}): the table does not fit the rules")


def chunk_push(p, sids, n_chunk, out, tlist, ntouch, src, dst, row_off, width, rlo, rhi, part, me, errors) -> None:
    """:func:`push_outcomes` of the build for the outcomes' lanes (``out.shape[4]``), the slots' arrays with a
    row per state id (every state's)."""
    compiled(out.shape[4]).push_outcomes(
        p,
        sids,
        n_chunk,
        out,
        tlist,
        ntouch,
        src,
        dst,
        row_off,
        width,
        rlo,
        rhi,
        part,
        _identity(rlo.shape[0]),
        me,
        errors,
    )


@functools.lru_cache(maxsize=4)
def _identity(n: int) -> np.ndarray:
    """``slot_of`` where every state id has its own row: ``arange(n)`` (read-only, shared)."""
    out = np.arange(n, dtype=np.int64)
    out.setflags(write=False)
    return out
