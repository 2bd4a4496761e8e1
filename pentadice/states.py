"""The states between turns: open boxes, capped upper subtotal, and whether the Penta box holds its points.

The table is indexed ``[penta_scored, open_mask, subtotal]`` (``penta_50`` on disk): ``penta_scored`` is 1
when the Penta box holds points (50; in Kiriki 50 or more; only meaningful once the box is filled),
``open_mask`` has bit ``i`` set while box ``rules.BOX_IDS[i]`` is open, and ``subtotal`` is the upper
section's total capped at the bonus threshold.
"""

from __future__ import annotations

import numpy as np

from pentadice import rules


def layers(rs: rules.RuleSet) -> list[tuple[np.ndarray, np.ndarray]]:
    """States to solve, in groups that can each be solved in parallel: ``(masks, penta_scored_flags)`` per group.

    By number of open boxes (1, 2, ...): a state only leads to states with fewer open boxes, or (Kiriki) back
    to itself. Within a number of open boxes, the states whose Penta box holds points come in a second group,
    after those whose box is open or at 0, whose values they start from.
    """
    game = rs.box_mask
    all_masks = np.arange(1 << rules.N_BOXES, dtype=np.int64)
    in_game = all_masks[(all_masks & ~game) == 0]
    popcount = np.array([bin(m).count("1") for m in in_game])
    has_penta = (game >> rules.PENTA) & 1
    out = []
    for k in range(1, bin(game).count("1") + 1):
        masks = in_game[popcount == k]
        penta_filled = ((masks >> rules.PENTA) & 1 == 0) & bool(has_penta)
        both = masks[penta_filled]
        out.append((np.ascontiguousarray(masks), np.zeros(len(masks), dtype=np.int64)))
        if len(both):
            out.append((np.ascontiguousarray(both), np.ones(len(both), dtype=np.int64)))
    return out


def upper_subtotals(rs: rules.RuleSet, filled_upper: int) -> np.ndarray:
    """Boolean vector over capped subtotals 0..threshold: which ones filling these upper boxes can give."""
    cap = rs.upper_threshold
    ok = np.zeros(cap + 1, dtype=bool)
    ok[0] = True
    for b in range(6):
        if (filled_upper >> b) & 1:
            nxt = np.zeros_like(ok)
            for c in range(rs.dice + 1):
                shifted = np.flatnonzero(ok) + c * (b + 1)
                nxt[np.minimum(shifted, cap)] = True
            ok = nxt
    return ok


def reachable(rs: rules.RuleSet) -> np.ndarray:
    """Boolean array shaped like the table: True where a state can occur in a game of rule set ``rs``."""
    game = rs.box_mask
    n = 1 << rules.N_BOXES
    out = np.zeros((2, n, rs.upper_threshold + 1), dtype=bool)
    by_upper = [upper_subtotals(rs, f & game) for f in range(64)]
    masks = np.arange(n)
    in_game = (masks & ~game) == 0
    filled_upper = (~masks & game) & rules.UPPER_MASK
    out[0] = np.where(in_game[:, None], np.array(by_upper)[filled_upper], False)
    if (game >> rules.PENTA) & 1:
        penta_filled = in_game & ((masks >> rules.PENTA) & 1 == 0)
        out[1] = out[0] & penta_filled[:, None]
    return out
