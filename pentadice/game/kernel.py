"""Whole games played by compiled code, for the simulator: the optimal strategy, or any strategy that a value
table stands for (the greedy one is a table of zeros: each turn then maximises its own points).

The dice come from NumPy's generator, drawn before the games are played, so that a seed gives the same games
whatever the number of threads. Early in the games many of them are in the same state, so the first turns
are played in step: each state's turn values are computed once and shared. Once the games have spread out,
each one plays its remaining turns on its own.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from pentadice import rules, turn
from pentadice.solver.kernels import drop_stale_cache, narrow

last_roll_values = narrow.last_roll_values
add_roll = narrow.add_roll
keep_values = narrow.keep_values
score_values = narrow.score_values

P_ROLLS = rules.P_ROLLS
P_BOXES = rules.P_BOXES
P_UPPER_THRESHOLD = rules.P_UPPER_THRESHOLD
N_BOXES = rules.N_BOXES
PENTA = rules.PENTA
N_ROWS = turn.N_ROWS
SHARED_STATES = 4096  # at most this many distinct states in a turn played in step (tables: 11 kB each)
SHARING = 4  # ... and only while there are at least this many games per distinct state


@njit(cache=True)
def turn_layers(V, p, n_dice, counts, scores, add, subs, open_mask, full, sub, K, B, rows, points, KL):
    """What a turn's decisions need in one state: ``KL[0, h]`` the value of hand ``h`` after the last roll, and
    for ``r >= 1`` ``KL[r, k]`` the value of keeping multiset ``k`` (not a whole hand) with ``r`` rerolls left."""
    n_hands = scores.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    last_roll_values(V, p, n_dice, counts[:n_hands], scores, open_mask, full, sub, K, rows, points)
    for h in range(n_hands):
        KL[0, h] = K[h, 0]
    for r in range(1, n_rolls):
        if r < n_rolls - 1:
            add_roll(add, subs, n_hands, K, B)
        else:  # the first roll's decision needs keep values only, not the hands' best keeps
            keep_values(add, n_hands, K)
        for k in range(n_hands, n_keeps):
            KL[r, k] = K[k, 0]


@njit(cache=True)
def play_turn(V, p, n_dice, counts, size, add, subkeeps, KL, dice, open_mask, full, sub, points, box_values):
    """Play one turn with the rolls ``dice[roll, i]`` and the turn values ``KL``: keep what the values say is
    best, then fill the best box. Returns ``(box, points, penta_bonus)``."""
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    hand = n_keeps - 1  # the empty keep, then the first roll's dice added one by one
    for i in range(n_dice):
        hand = add[hand, dice[0, i] - 1]
    for r in range(n_rolls - 1, 0, -1):  # r rerolls left: score now, or keep the best sub-keep
        best = KL[0, hand]
        choice = -1
        for j in range(subkeeps.shape[1]):
            k = subkeeps[hand, j]
            if k < 0:
                break
            if KL[r, k] > best:
                best = KL[r, k]
                choice = k
        if choice < 0:
            break
        roll = n_rolls - r
        hand = choice
        for i in range(n_dice - size[choice]):
            hand = add[hand, dice[roll, i] - 1]
    bonus = score_values(V, p, counts[hand], open_mask, full, sub, points, box_values)
    box = -1
    for b in range(N_BOXES):
        if points[b] >= 0 and (box < 0 or box_values[b] > box_values[box]):
            box = b
    return box, points[box], bonus


@njit(cache=True)
def record(p, scores_out, open_mask, sub, box, pts):
    """Write a scored box into a game's sheet; returns the state's new ``(open_mask, full, sub)`` parts."""
    if (open_mask >> box) & 1 == 1:
        scores_out[box] = pts
    else:  # Kiriki: five of a kind added to the Penta box, filling nothing
        scores_out[box] += pts
    if box < 6:
        sub = min(sub + pts, p[P_UPPER_THRESHOLD])
    return open_mask & ~(1 << box), sub


@njit(cache=True, parallel=True)
def play_games(V, p, n_dice, counts, scores, size, add, subs, subkeeps, dice, scores_out, bonus_out):
    """Play ``dice.shape[0]`` solitaire games; ``dice[g, t, roll, i]`` are the faces game ``g`` rolls.

    Writes each game's box scores (``scores_out[g, b]``, -1 for a box the game lacks) and Penta bonus points
    (-1 for a game that needed more turns than ``dice`` holds: Kiriki's extra turns).
    """
    n_games = dice.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    masks = np.full(n_games, p[P_BOXES], dtype=np.int64)
    fulls = np.zeros(n_games, dtype=np.int64)
    subtotals = np.zeros(n_games, dtype=np.int64)
    scores_out[:] = -1
    bonus_out[:] = 0
    t = 0
    while t < dice.shape[1]:  # turns in step, while games share states
        keys = (masks * 2 + fulls) * 64 + subtotals
        states = np.unique(keys)
        if states.shape[0] > SHARED_STATES or states.shape[0] * SHARING > n_games or states[0] < 128:
            break  # spread out, or some game is over
        tables = np.empty((states.shape[0], n_rolls, n_keeps))
        for s in prange(states.shape[0]):
            K = np.empty((n_keeps, 1))
            B = np.empty((n_keeps, 1))
            rows = np.empty((N_ROWS, 1))
            points = np.empty(N_BOXES, dtype=np.int64)
            key = states[s]
            turn_layers(
                V,
                p,
                n_dice,
                counts,
                scores,
                add,
                subs,
                key // 128,
                (key // 64) % 2,
                key % 64,
                K,
                B,
                rows,
                points,
                tables[s],
            )
        where = np.searchsorted(states, keys)
        for g in prange(n_games):
            points = np.empty(N_BOXES, dtype=np.int64)
            box_values = np.empty(N_BOXES)
            box, pts, bonus = play_turn(
                V,
                p,
                n_dice,
                counts,
                size,
                add,
                subkeeps,
                tables[where[g]],
                dice[g, t],
                masks[g],
                fulls[g],
                subtotals[g],
                points,
                box_values,
            )
            bonus_out[g] += bonus
            if box == PENTA:
                fulls[g] = 1 if pts > 0 else 0
            masks[g], subtotals[g] = record(p, scores_out[g], masks[g], subtotals[g], box, pts)
        t += 1
    for g in prange(n_games):  # the rest of each game on its own
        K = np.empty((n_keeps, 1))
        B = np.empty((n_keeps, 1))
        KL = np.empty((n_rolls, n_keeps))
        rows = np.empty((N_ROWS, 1))
        points = np.empty(N_BOXES, dtype=np.int64)
        box_values = np.empty(N_BOXES)
        open_mask, full, sub = masks[g], fulls[g], subtotals[g]
        u = t
        while open_mask != 0 and u < dice.shape[1]:
            turn_layers(V, p, n_dice, counts, scores, add, subs, open_mask, full, sub, K, B, rows, points, KL)
            box, pts, bonus = play_turn(
                V, p, n_dice, counts, size, add, subkeeps, KL, dice[g, u], open_mask, full, sub, points, box_values
            )
            bonus_out[g] += bonus
            if box == PENTA:
                full = 1 if pts > 0 else 0
            open_mask, sub = record(p, scores_out[g], open_mask, sub, box, pts)
            u += 1
        if open_mask != 0:
            bonus_out[g] = -1


drop_stale_cache([turn_layers, play_turn, record, play_games])
