"""Whole games played by compiled code, for the simulator: the optimal strategy, or any strategy that a value
table stands for (the greedy one is a table of zeros: each turn then maximises its own points).

The dice come from NumPy's generator, drawn before the games are played, so that a seed gives the same games
whatever the number of threads. The games are played in step, turn by turn: the games whose sheets have the
same open boxes (and Penta flag) share one computation of the turn's values for all 64 upper subtotals (the
solver's wide kernels), and each game reads the lane of its own subtotal.
"""

from __future__ import annotations

import numpy as np

from pentadice import rules, turn
from pentadice.compiled import jit, prange
from pentadice.solver.kernels import LANES, aligned_rows, drop_stale_cache, narrow, wide

wide_last_roll_values = wide.last_roll_values
wide_add_roll = wide.add_roll
wide_keep_values = wide.keep_values
score_values = narrow.score_values

P_ROLLS = rules.P_ROLLS
P_BOXES = rules.P_BOXES
P_UPPER_THRESHOLD = rules.P_UPPER_THRESHOLD
N_BOXES = rules.N_BOXES
PENTA = rules.PENTA
N_ROWS = turn.N_ROWS


@jit
def turn_layers(V, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, K, B, rows, points, L):
    """What a turn's decisions need in one state, for every subtotal lane: ``L[0, h, u]`` the value of hand
    ``h`` after the last roll, and for ``r >= 1`` ``L[r, k, u]`` the value of keeping multiset ``k`` (not a
    whole hand) with ``r`` rerolls left."""
    n_hands = scores.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    wide_last_roll_values(V, p, n_dice, counts[:n_hands], scores, open_mask, penta_scored, 0, K, rows, points)
    L[0, :n_hands] = K[:n_hands]
    for r in range(1, n_rolls):
        if r < n_rolls - 1:
            wide_add_roll(add, subs, n_hands, K, B)
        else:  # the first roll's decision needs keep values only, not the hands' best keeps
            wide_keep_values(add, n_hands, K)
        L[r, n_hands:n_keeps] = K[n_hands:n_keeps]


@jit
def play_turn(V, p, n_dice, counts, size, add, subkeeps, L, dice, open_mask, penta_scored, sub, points, box_values):
    """Play one turn with the rolls ``dice[roll, i]`` and the turn values ``L`` (lane ``sub``): keep what the
    values say is best, then fill the best box. Returns ``(box, points, penta_bonus)``."""
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    hand = n_keeps - 1  # the empty keep, then the first roll's dice added one by one
    for i in range(n_dice):
        hand = add[hand, dice[0, i] - 1]
    for r in range(n_rolls - 1, 0, -1):  # r rerolls left: score now, or keep the best sub-keep
        best = L[0, hand, sub]
        choice = -1
        for j in range(subkeeps.shape[1]):
            k = subkeeps[hand, j]
            if k < 0:
                break
            if L[r, k, sub] > best:
                best = L[r, k, sub]
                choice = k
        if choice < 0:
            break
        roll = n_rolls - r
        hand = choice
        for i in range(n_dice - size[choice]):
            hand = add[hand, dice[roll, i] - 1]
    bonus = score_values(V, p, counts[hand], open_mask, penta_scored, sub, points, box_values)
    box = -1
    for b in range(N_BOXES):
        if points[b] >= 0 and (box < 0 or box_values[b] > box_values[box]):
            box = b
    return box, points[box], bonus


@jit
def record(p, scores_out, open_mask, sub, box, pts):
    """Write a penta_scored box into a game's sheet; returns the game's new ``(open_mask, sub)``."""
    if (open_mask >> box) & 1 == 1:
        scores_out[box] = pts
    else:  # Kiriki: five of a kind added to the Penta box, filling nothing
        scores_out[box] += pts
    if box < 6:
        sub = min(sub + pts, p[P_UPPER_THRESHOLD])
    return open_mask & ~(1 << box), sub


@jit(parallel=True)
def play_games(V, p, n_dice, counts, scores, size, add, subs, subkeeps, dice, scores_out, bonus_out, n_blocks):
    """Play ``dice.shape[0]`` solitaire games; ``dice[g, t, roll, i]`` are the faces game ``g`` rolls.

    Writes each game's box scores (``scores_out[g, b]``, -1 for a box the game lacks) and Penta bonus points
    (-1 for a game that needed more turns than ``dice`` holds: Kiriki's extra turns). The groups of each turn
    are shared out in ``n_blocks`` blocks (one per thread), each with its own scratch.
    """
    n_games = dice.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    masks = np.full(n_games, p[P_BOXES], dtype=np.int64)
    penta_scored_flags = np.zeros(n_games, dtype=np.int64)
    subtotals = np.zeros(n_games, dtype=np.int64)
    scores_out[:] = -1
    bonus_out[:] = 0
    if n_games == 0:
        return
    for t in range(dice.shape[1]):
        keys = masks * 2 + penta_scored_flags
        order = np.argsort(keys, kind="mergesort")
        starts = np.flatnonzero(np.diff(keys[order])) + 1
        bounds = np.concatenate((np.zeros(1, dtype=np.int64), starts, np.full(1, n_games, dtype=np.int64)))
        n_groups = bounds.shape[0] - 1
        for blk in prange(n_blocks):  # each block of groups with its own scratch
            K = aligned_rows(n_keeps)
            B = aligned_rows(n_keeps)
            L = np.empty((n_rolls, n_keeps, LANES))
            rows = aligned_rows(N_ROWS)
            points = np.empty(N_BOXES, dtype=np.int64)
            box_values = np.empty(N_BOXES)
            for grp in range(blk * n_groups // n_blocks, (blk + 1) * n_groups // n_blocks):
                first = order[bounds[grp]]
                open_mask, penta_scored = masks[first], penta_scored_flags[first]
                if open_mask == 0:
                    continue  # these games are over
                turn_layers(V, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, K, B, rows, points, L)
                for i in range(bounds[grp], bounds[grp + 1]):
                    g = order[i]
                    sub = subtotals[g]
                    box, pts, bonus = play_turn(
                        V,
                        p,
                        n_dice,
                        counts,
                        size,
                        add,
                        subkeeps,
                        L,
                        dice[g, t],
                        open_mask,
                        penta_scored,
                        sub,
                        points,
                        box_values,
                    )
                    bonus_out[g] += bonus
                    if box == PENTA:
                        penta_scored_flags[g] = 1 if pts > 0 else 0
                    masks[g], subtotals[g] = record(p, scores_out[g], open_mask, sub, box, pts)
        if masks.max() == 0:
            break
    for g in range(n_games):
        if masks[g] != 0:
            bonus_out[g] = -1


drop_stale_cache([turn_layers, play_turn, record, play_games])
