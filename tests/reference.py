"""Slow, obviously-correct reference implementations that the fast kernels are compared with.

They share nothing with the solver but the rules module (``rules.legal_scores``, ``rules.upper_bonus_earned``,
and a rule set's sheet data: box ids and bits, the upper boxes, the Penta box), and work for any sheet, 1 to 6
dice and any threshold. :func:`family_points` scores the Yatzy family's boxes without the rules module at all.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math

import numpy as np

from pentadice.game import rules


def score_now(rs: rules.RuleSet, dice: tuple[int, ...], open_mask: int, sub: int, full: int, V) -> float:
    """Best value of scoring ``dice`` now: box points, Penta bonus, upper bonus, plus the next state's value."""
    legal, bonus = rules.legal_scores(rs, dice, rs.boxes_of(open_mask), bool(full))
    best = -math.inf
    for box, pts in legal.items():
        b = rs.box_index[box]
        added = pts if (rs.upper_mask >> b) & 1 else 0
        nxt_full = full if b != rs.penta_box else int(pts > 0)
        nxt_sub = min(sub + added, rs.upper_threshold)
        gain = pts + bonus + rules.upper_bonus_earned(rs, sub, added)
        best = max(best, gain + V(open_mask & ~(1 << b), nxt_sub, nxt_full))
    return best


def penta_holds_points(rs: rules.RuleSet, open_mask: int, full: int) -> bool:
    """Whether the game's Penta box is filled and holds points (Kiriki's repeat needs it)."""
    b = rs.penta_box
    return bool(full) and b >= 0 and bool((rs.box_mask >> b) & 1) and not (open_mask >> b) & 1


def brute_force(rs: rules.RuleSet):
    """Expectimax over dice positions: ``V(open_mask, subtotal, full)`` for a (small) game of any sheet.

    Each roll is one of the ``6**n`` equally likely ordered tuples; with rerolls left the player either scores
    or picks a non-empty set of positions to roll again, each rerolled die one of 6 equally likely faces. A
    hand's value depends only on its faces, not on their order, so values are remembered per sorted hand and
    per sorted kept dice, and the ordered tuples of faces are counted per sorted tuple (what makes 6 dice
    affordable): the sums still weigh every ordered tuple alike.
    """
    n = rs.dice
    # For k dice rolled: each sorted tuple of faces and how many of the 6**k ordered tuples sort to it.
    outcomes = [
        collections.Counter(tuple(sorted(t)) for t in itertools.product(range(1, 7), repeat=k)) for k in range(n + 1)
    ]
    subsets = [s for k in range(1, n + 1) for s in itertools.combinations(range(n), k)]

    @functools.cache
    def V(open_mask: int, sub: int, full: int) -> float:
        if open_mask == 0:
            return 0.0
        if not (rs.penta_repeat and penta_holds_points(rs, open_mask, full)):
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
        def best(hand: tuple[int, ...], rerolls: int) -> float:
            """Value of the sorted ``hand`` with ``rerolls`` left: score now, or reroll some positions."""
            value = score_now(rs, hand, open_mask, sub, full, V)
            if rerolls == 0:
                return value
            for positions in subsets:
                kept = tuple(d for i, d in enumerate(hand) if i not in positions)
                value = max(value, reroll(kept, rerolls - 1))
            return value

        @functools.cache
        def reroll(kept: tuple[int, ...], rerolls: int) -> float:
            """Mean value over the ordered faces of the dice not ``kept`` (a sorted tuple)."""
            total = 0.0
            for faces, ways in outcomes[n - len(kept)].items():
                total += ways * best(tuple(sorted(kept + faces)), rerolls)
            return total / 6 ** (n - len(kept))

        return reroll((), rs.rolls - 1)

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


# ----------------------------------------------------------------------------------------------------------
# The Yatzy family's boxes, scored from the words of ../shared/rules/yatzy-family.md by trying every subset of
# the dice: nothing here is shared with pentadice.game.rules (no kinds, no counts, no sheet data).

FACE_BOXES = {"ones": 1, "twos": 2, "threes": 3, "fours": 4, "fives": 5, "sixes": 6}
STRAIGHTS = {"small_straight": ({1, 2, 3, 4, 5}, 15), "large_straight": ({2, 3, 4, 5, 6}, 20)}
STRAIGHTS_MAXI = {**STRAIGHTS, "full_straight": ({1, 2, 3, 4, 5, 6}, 21)}
ALIKE = {"one_pair": 2, "three_of_a_kind": 3, "four_of_a_kind": 4, "five_of_a_kind": 5}
# Groups of dice alike, of different faces: (sizes of the groups).
GROUPS = {
    "two_pairs": (2, 2),
    "three_pairs": (2, 2, 2),
    "full_house": (3, 2),
    "super_house": (3, 3),
    "tower": (4, 2),
}


def _groups_of(chosen: tuple[int, ...], sizes: tuple[int, ...]) -> bool:
    """Whether the dice ``chosen`` split into groups of ``sizes`` dice, each group alike and the groups' faces all
    different: then each face shown is one group, so the dice per face are the sizes."""
    return sorted(chosen.count(face) for face in set(chosen)) == sorted(sizes)


def family_points(box: str, dice: tuple[int, ...], alike: bool = False) -> int:
    """Points of ``box`` of ``yatzy`` (5 dice) or ``maxi-yatzy`` (6 dice) for ``dice``, as the spec words it:
    the best subset of the dice that forms the combination, 0 when none does. ``alike``: the house rule that the
    groups of a pairs or house box may show one face (four alike are two pairs, five alike a full house)."""
    if alike and box in GROUPS:
        return _alike_groups(GROUPS[box], tuple(sorted(dice)))
    return _family_points(box, tuple(sorted(dice)))  # remembered per hand: subsets of any order are the same


@functools.cache
def _alike_groups(sizes: tuple[int, ...], dice: tuple[int, ...]) -> int:
    """The best sum of groups of ``sizes`` dice, each group alike, any group of any face (two may share one)."""
    best = 0
    for faces in itertools.product(range(1, 7), repeat=len(sizes)):
        need = collections.Counter()
        for face, size in zip(faces, sizes, strict=True):
            need[face] += size
        if all(dice.count(face) >= n for face, n in need.items()):
            best = max(best, sum(face * size for face, size in zip(faces, sizes, strict=True)))
    return best


@functools.cache
def _family_points(box: str, dice: tuple[int, ...]) -> int:
    if box in FACE_BOXES:
        return sum(d for d in dice if d == FACE_BOXES[box])
    if box == "chance":
        return sum(dice)
    if box in ("yatzy", "maxi_yatzy"):
        return (50 if box == "yatzy" else 100) if len(set(dice)) == 1 else 0
    straights = STRAIGHTS_MAXI if len(dice) == 6 else STRAIGHTS
    if box in straights:
        faces, points = straights[box]
        return points if faces <= set(dice) else 0
    best = 0
    if box in ALIKE:
        for chosen in itertools.combinations(dice, ALIKE[box]):
            if len(set(chosen)) == 1:
                best = max(best, sum(chosen))
        return best
    sizes = GROUPS[box]
    for chosen in itertools.combinations(dice, sum(sizes)):
        if _groups_of(chosen, sizes):
            best = max(best, sum(chosen))
    return best
