"""Whole games played by compiled code, for the simulator: the optimal strategy, or any strategy that a value
table stands for (the greedy one is a table of zeros: each turn then maximises its own points).

The dice come from NumPy's generator, drawn before the games are played, so that a seed gives the same games
whatever the number of threads.
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
P_UPPER_BONUS = rules.P_UPPER_BONUS


@njit(cache=True)
def play_turn(
    V,
    p,
    n_dice,
    counts,
    scores,
    size,
    add,
    subs,
    subkeeps,
    dice,
    open_mask,
    full,
    sub,
    K,
    B,
    KL,
    rows,
    points,
    box_values,
):
    """Play one turn from state (``open_mask``, ``full``, ``sub``) with the rolls ``dice[roll, i]``: keep what
    the values say is best, then fill the best box. Returns ``(box, points, penta_bonus)``."""
    n_hands = subkeeps.shape[0]
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    last_roll_values(V, p, n_dice, counts[:n_hands], scores, open_mask, full, sub, K, rows, points)
    for h in range(n_hands):
        KL[0, h] = K[h, 0]
    # Keep values with r rerolls left: KL[r] for the earlier layers, K itself for the last one computed.
    for r in range(1, n_rolls):
        if r < n_rolls - 1:
            add_roll(add, subs, n_hands, K, B)
            for k in range(n_hands, n_keeps):  # proper keeps only: hands never compete as keeps
                KL[r, k] = K[k, 0]
        else:  # the first roll's decision needs keep values only, not the hands' best keeps
            keep_values(add, n_hands, K)
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
            value = K[k, 0] if r == n_rolls - 1 else KL[r, k]
            if value > best:
                best = value
                choice = k
        if choice < 0:
            break
        roll = n_rolls - r
        hand = choice
        for i in range(n_dice - size[choice]):
            hand = add[hand, dice[roll, i] - 1]
    bonus = score_values(V, p, counts[hand], open_mask, full, sub, points, box_values)
    box = -1
    for b in range(rules.N_BOXES):
        if points[b] >= 0 and (box < 0 or box_values[b] > box_values[box]):
            box = b
    return box, points[box], bonus


@njit(cache=True)
def play_game(
    V, p, n_dice, counts, scores, size, add, subs, subkeeps, dice, scores_out, K, B, KL, rows, points, box_values
):
    """Play one game with the rolls ``dice[t, roll, i]``: writes its box scores into ``scores_out`` (-1 for a
    box the game lacks) and returns its Penta bonus points, or -1 if the game needed more turns than ``dice``
    holds (Kiriki's extra turns)."""
    open_mask = p[P_BOXES]
    full = 0
    sub = 0
    bonus_total = 0
    for b in range(rules.N_BOXES):
        scores_out[b] = -1
    t = 0
    while open_mask != 0 and t < dice.shape[0]:
        box, pts, bonus = play_turn(
            V,
            p,
            n_dice,
            counts,
            scores,
            size,
            add,
            subs,
            subkeeps,
            dice[t],
            open_mask,
            full,
            sub,
            K,
            B,
            KL,
            rows,
            points,
            box_values,
        )
        if (open_mask >> box) & 1 == 1:
            scores_out[box] = pts
        else:  # Kiriki: five of a kind added to the Penta box, filling nothing
            scores_out[box] += pts
        bonus_total += bonus
        if box < 6:
            sub = min(sub + pts, p[P_UPPER_THRESHOLD])
        if box == rules.PENTA:
            full = 1 if pts > 0 else 0
        open_mask &= ~(1 << box)
        t += 1
    return bonus_total if open_mask == 0 else -1


@njit(cache=True, parallel=True)
def play_games(V, p, n_dice, counts, scores, size, add, subs, subkeeps, dice, scores_out, bonus_out):
    """Play ``dice.shape[0]`` solitaire games; ``dice[g, t, roll, i]`` are the faces game ``g`` rolls.

    Writes each game's box scores (``scores_out[g, b]``, -1 for a box the game lacks) and Penta bonus points.
    """
    n_keeps = counts.shape[0]
    for g in prange(dice.shape[0]):
        K = np.empty((n_keeps, 1))
        B = np.empty((n_keeps, 1))
        KL = np.empty((p[P_ROLLS], n_keeps))
        rows = np.empty((turn.N_ROWS, 1))
        points = np.empty(rules.N_BOXES, dtype=np.int64)
        box_values = np.empty(rules.N_BOXES)
        bonus_out[g] = play_game(
            V,
            p,
            n_dice,
            counts,
            scores,
            size,
            add,
            subs,
            subkeeps,
            dice[g],
            scores_out[g],
            K,
            B,
            KL,
            rows,
            points,
            box_values,
        )


drop_stale_cache([play_turn, play_game, play_games])
