"""Slow, obviously-correct reference implementations that the fast kernels are compared with.

They share nothing with the solver but the rules module (``rules.legal_scores``, ``rules.upper_bonus_earned``).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from pentadice import rules


def score_now(rs: rules.RuleSet, dice: tuple[int, ...], open_mask: int, sub: int, full: int, V) -> float:
    """Best value of scoring ``dice`` now: box points, Penta bonus, upper bonus, plus the next state's value."""
    legal, bonus = rules.legal_scores(rs, dice, rules.boxes_of(open_mask), bool(full))
    best = -math.inf
    for box, pts in legal.items():
        b = rules.BOX_INDEX[box]
        added = pts if b < 6 else 0
        nxt_full = full if b != rules.PENTA else int(pts > 0)
        nxt_sub = min(sub + added, rs.upper_threshold)
        gain = pts + bonus + rules.upper_bonus_earned(rs, sub, added)
        best = max(best, gain + V(open_mask & ~(1 << b), nxt_sub, nxt_full))
    return best


def brute_force(rs: rules.RuleSet):
    """Expectimax over dice positions: ``V(open_mask, subtotal, full)`` for a (small) game.

    Each roll is one of the ``6**n`` equally likely ordered tuples; with rerolls left the player either scores
    or picks a non-empty set of positions to roll again.
    """
    n = rs.dice
    tuples = list(itertools.product(range(1, 7), repeat=n))
    subsets = [s for k in range(1, n + 1) for s in itertools.combinations(range(n), k)]

    @functools.cache
    def V(open_mask: int, sub: int, full: int) -> float:
        if open_mask == 0:
            return 0.0
        penta_holds_points = full and (rs.box_mask >> rules.PENTA) & 1 and not (open_mask >> rules.PENTA) & 1
        if not (rs.penta_repeat and penta_holds_points):
            return turn(open_mask, sub, full, V)
        # Kiriki: adding five of a kind to the Penta box comes back to this state. Iterate V = T(V).
        state = (open_mask, sub, full)
        x = 0.0
        for _ in range(10_000):
            nxt = turn(open_mask, sub, full, lambda m, s, f, x=x: x if (m, s, f) == state else V(m, s, f))
            if abs(nxt - x) < 1e-13:
                return nxt
            x = nxt
        raise AssertionError("no fixed point")

    def turn(open_mask: int, sub: int, full: int, V) -> float:
        """One turn's value, with ``V`` the value of each state the turn can lead to."""

        @functools.cache
        def best(dice: tuple[int, ...], rerolls: int) -> float:
            value = score_now(rs, dice, open_mask, sub, full, V)
            if rerolls == 0:
                return value
            for positions in subsets:
                total = 0.0
                for faces in itertools.product(range(1, 7), repeat=len(positions)):
                    new = list(dice)
                    for pos, face in zip(positions, faces, strict=True):
                        new[pos] = face
                    total += best(tuple(new), rerolls - 1)
                value = max(value, total / 6 ** len(positions))
            return value

        return sum(best(t, rs.rolls - 1) for t in tuples) / len(tuples)

    return V


@functools.cache
def _keep_to_hand(n: int):
    """Glenn's widget in matrix form: hands, keeps, and P[keep, hand] of rolling to the hand from the keep."""
    hands = list(itertools.combinations_with_replacement(range(1, 7), n))
    hand_index = {h: i for i, h in enumerate(hands)}
    keeps = sorted({k for h in hands for r in range(n + 1) for k in itertools.combinations(h, r)})
    P = np.zeros((len(keeps), len(hands)))
    for i, keep in enumerate(keeps):
        m = n - len(keep)
        for faces in itertools.product(range(1, 7), repeat=m):
            P[i, hand_index[tuple(sorted(keep + faces))]] += 1.0 / 6**m
    keep_index = {k: i for i, k in enumerate(keeps)}
    subkeeps = [sorted({keep_index[k] for r in range(n + 1) for k in itertools.combinations(h, r)}) for h in hands]
    first = np.array([P[keep_index[()], hand_index[h]] for h in hands])
    return hands, keeps, P, subkeeps, first


def turn_values(rs: rules.RuleSet, open_mask: int, sub: int, full: int, V):
    """Every value inside one turn, by the keep-to-hand matrix: ``(start value, hand values per roll)``.

    ``hand_values[r][h]`` is the value of hand ``h`` with ``r`` rerolls left.
    """
    hands, _keeps, P, subkeeps, first = _keep_to_hand(rs.dice)
    values = [np.array([score_now(rs, h, open_mask, sub, full, V) for h in hands])]
    for _ in range(rs.rolls - 1):
        keep_value = P @ values[-1]
        values.append(np.array([max(values[-1][i], keep_value[s].max()) for i, s in enumerate(subkeeps)]))
    return float(first @ values[-1]), values
