"""A slow expectimax over dice for any sheet (any boxes, 2 to 6 dice), for the target, utility and end-game
kernels' checks. It shares only the rules module with the fast code: each roll is one of the ``6**n`` equally
likely ordered tuples, each reroll every non-empty set of positions with each rerolled die one of 6 faces.
Values are remembered per sorted hand and per sorted kept dice (a hand's value does not depend on the order of
its dice), which is what makes 6 dice affordable; the sums still run over ordered tuples.

A value is whatever the caller's ``choose`` and ``mean`` combine: a float (utilities), a row of lanes (targets,
each lane its own choice) or a pair (expected score, row) for the expected-score policy's tail.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable

from pentadice.game import rules


def box_moves(rs: rules.RuleSet, dice, open_mask: int, sub: int, full: int) -> list[tuple[str, int, tuple]]:
    """``(box, gain, next state)`` of each legal box for ``dice``: gain is the box's points, the Penta bonus and
    the upper bonus; the next state is ``(open_mask, subtotal, full)``."""
    legal, bonus = rules.legal_scores(rs, tuple(dice), rs.boxes_of(open_mask), bool(full))
    out = []
    for box, pts in legal.items():
        b = rs.box_index[box]
        added = pts if (rs.upper_mask >> b) & 1 else 0
        nxt_full = full if b != rs.penta_box else int(pts > 0)
        gain = pts + bonus + rules.upper_bonus_earned(rs, sub, added)
        out.append((box, gain, (open_mask & ~(1 << b), min(sub + added, rs.upper_threshold), nxt_full)))
    return out


def holds_penta(rs: rules.RuleSet, open_mask: int, full: int) -> bool:
    """Whether the game's Penta box is filled and holds points (Kiriki's repeat needs it)."""
    b = rs.penta_box
    return bool(full) and b >= 0 and bool((rs.box_mask >> b) & 1) and not (open_mask >> b) & 1


@functools.cache
def rerolled(kept: tuple[int, ...], n: int) -> tuple[tuple[tuple[int, ...], ...], Callable]:
    """The rolls of ``n - len(kept)`` dice beside ``kept``: ``(hands, outcomes)``, the distinct sorted hands,
    and a function of their values (in that order) giving each ordered outcome's, in the order of
    ``itertools.product``. The same for every state, so worked out once rather than once per turn."""
    order = [tuple(sorted(kept + faces)) for faces in itertools.product(range(1, 7), repeat=n - len(kept))]
    hands = tuple(dict.fromkeys(order))
    index = {h: i for i, h in enumerate(hands)}
    pick = operator.itemgetter(*(index[h] for h in order))  # n - len(kept) >= 1: at least 6 outcomes, a tuple
    return hands, lambda values: list(pick(values))


@functools.cache
def kept_after(dice: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The dice kept by rerolling each non-empty set of positions of ``dice``, in the order of the sets."""
    n = len(dice)
    subsets = [s for k in range(1, n + 1) for s in itertools.combinations(range(n), k)]
    return tuple(tuple(d for i, d in enumerate(dice) if i not in positions) for positions in subsets)


def turn_of(rs: rules.RuleSet, score_now: Callable, choose: Callable, mean: Callable):
    """``(start, options)`` of one state's turn: ``start()`` the value at the turn's start, ``options(dice,
    rerolls)`` each option's value (``("box", id)`` from ``score_now(dice)``, ``("keep", kept faces)``)."""
    n = rs.dice

    @functools.cache
    def now(dice):
        return score_now(dice)

    @functools.cache
    def best(dice, rerolls):
        candidates = list(now(dice).values())
        if rerolls:
            candidates += list(keeps(dice, rerolls).values())
        return choose(candidates)

    @functools.cache
    def keep(kept, rerolls):
        """The mean over every ordered outcome of the rerolled dice (each its sorted hand's value)."""
        hands, outcomes = rerolled(kept, n)
        return mean(outcomes([best(h, rerolls - 1) for h in hands]))

    def keeps(dice, rerolls):
        return {("keep", kept): keep(kept, rerolls) for kept in kept_after(dice)}

    def start():
        return keep((), rs.rolls)  # the first roll: every ordered tuple of n dice

    def options(dice, rerolls):
        dice = tuple(sorted(dice))
        return {**now(dice), **(keeps(dice, rerolls) if rerolls else {})}

    return start, options
