"""A slow, obviously-correct second moment for the moment tests: expectimax over dice positions.

Every roll is one of the ``6**n`` equally likely ordered tuples; with rerolls left the player scores now or
rerolls a non-empty set of positions. The policy is the advisor's: the highest value, values within
``TIE`` of the highest counted as equal and ordered as ``Option.tie_key`` orders them (scoring before
keeping, boxes in sheet order, keeps with more dice first, then by their faces). It shares nothing with the
fast code but the rules module and, for the values that choose, ``reference.brute_force``.

Any sheet and up to six dice: a hand's moments depend only on its faces, so they are remembered per sorted
hand, a roll of ``m`` dice (the first roll too) averages over the sorted outcomes weighted by how many of the
``6**m`` ordered ones give each, and rerolling positions that leave the same faces is one option (what makes six
dice affordable).
"""

from __future__ import annotations

import functools
import itertools
import math

from reference import brute_force

from pentadice.game import rules

TIE = 1e-9


@functools.cache
def completions(m: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """The sorted outcomes of rolling ``m`` dice, each with its probability (ordered tuples giving it / 6**m)."""
    out = []
    for faces in itertools.combinations_with_replacement(range(1, 7), m):
        ways = math.factorial(m)
        for f in set(faces):
            ways //= math.factorial(faces.count(f))
        out.append((faces, ways / 6**m))
    return tuple(out)


def brute_moments(rs: rules.RuleSet):
    """``(V, M2)``: functions of ``(open_mask, subtotal, full)`` giving the value and E[R^2] of a state."""
    V = brute_force(rs)
    n = rs.dice
    subsets = [s for k in range(1, n + 1) for s in itertools.combinations(range(n), k)]

    @functools.cache
    def M2(open_mask: int, sub: int, full: int) -> float:
        if open_mask == 0:
            return 0.0
        b = rs.penta_box
        penta_holds_points = b >= 0 and full and (rs.box_mask >> b) & 1 and not (open_mask >> b) & 1
        if not (rs.penta_repeat and penta_holds_points):
            return turn(open_mask, sub, full, M2)
        # Kiriki: coming back to this state. The policy is fixed by the values: iterate M2 = T(M2).
        state = (open_mask, sub, full)
        x = 0.0
        for _ in range(100_000):
            nxt = turn(open_mask, sub, full, lambda m, s, f, x=x: x if (m, s, f) == state else M2(m, s, f))
            if abs(nxt - x) < 1e-11 * max(1.0, abs(x)):
                return nxt
            x = nxt
        raise AssertionError("no fixed point")

    def turn(open_mask: int, sub: int, full: int, M) -> float:
        @functools.cache
        def best(dice: tuple[int, ...], rerolls: int) -> tuple[float, float]:
            """Value and second moment of the sorted ``dice`` with ``rerolls`` left, under the policy."""
            options = []  # (value, tie key, second moment)
            legal, bonus = rules.legal_scores(rs, dice, rs.boxes_of(open_mask), bool(full))
            for box, pts in legal.items():
                b = rs.box_index[box]
                added = pts if (rs.upper_mask >> b) & 1 else 0
                # (Kiriki: five of a kind added to the filled Penta box leads back to this very state.)
                nxt_full = full if b != rs.penta_box else int(pts > 0)
                nxt = (open_mask & ~(1 << b), min(sub + added, rs.upper_threshold), nxt_full)
                g = pts + bonus + rules.upper_bonus_earned(rs, sub, added)
                options.append((g + V(*nxt), (0, b, ()), g * g + 2 * g * V(*nxt) + M(*nxt)))
            if rerolls:
                # Positions rerolled that keep the same faces are the same option: each kept hand once.
                for kept in {tuple(d for i, d in enumerate(dice) if i not in positions) for positions in subsets}:
                    v, m = reroll(kept, rerolls - 1)
                    options.append((v, (1, -len(kept), kept), m))
            top = max(o[0] for o in options)
            chosen = min((o for o in options if o[0] >= top - TIE), key=lambda o: o[1])
            return chosen[0], chosen[2]

        @functools.cache
        def reroll(kept: tuple[int, ...], rerolls: int) -> tuple[float, float]:
            """The means, over the dice not ``kept`` rolled again, of the value and second moment."""
            v = m = 0.0
            for faces, p in completions(n - len(kept)):
                bv, bm = best(tuple(sorted(kept + faces)), rerolls)
                v += p * bv
                m += p * bm
            return v, m

        return reroll((), rs.rolls - 1)[1]  # the first roll: all the dice

    return V, M2
