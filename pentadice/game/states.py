"""The states between turns: open boxes, capped upper subtotal, and whether the Penta box holds its points.

The table is indexed ``[penta_scored, open_mask, subtotal]`` (``penta_50`` on disk), shaped
``RuleSet.table_shape``: ``penta_scored`` is 1 when the Penta box holds points (50; in Kiriki 50 or more; only
meaningful once the box is filled; a sheet without a Penta box has only 0), ``open_mask`` has bit ``i`` set
while the sheet's box ``i`` (``RuleSet.box_ids[i]``) is open, and ``subtotal`` is the upper section's total
capped at the bonus threshold.
"""

from __future__ import annotations

import numpy as np

from pentadice.game import rules


def layers(rs: rules.RuleSet) -> list[tuple[np.ndarray, np.ndarray]]:
    """States to solve, in groups that can each be solved in parallel: ``(masks, penta_scored_flags)`` per group.

    By number of open boxes (1, 2, ...): a state only leads to states with fewer open boxes, or (Kiriki) back
    to itself. Within a number of open boxes, the states whose Penta box holds points come in a second group,
    after those whose box is open or at 0, whose values they start from.
    """
    game = rs.box_mask
    all_masks = np.arange(1 << rs.n_boxes, dtype=np.int64)
    in_game = all_masks[(all_masks & ~game) == 0]
    popcount = np.bitwise_count(in_game)
    out = []
    for k in range(1, rs.box_mask.bit_count() + 1):
        masks = in_game[popcount == k]
        has_penta = rs.penta_box >= 0 and (game >> rs.penta_box) & 1
        both = masks[(masks >> rs.penta_box) & 1 == 0] if has_penta else masks[:0]
        out.append((np.ascontiguousarray(masks), np.zeros(len(masks), dtype=np.int64)))
        if len(both):
            out.append((np.ascontiguousarray(both), np.ones(len(both), dtype=np.int64)))
    return out


def upper_subtotals(rs: rules.RuleSet, filled_faces: int) -> np.ndarray:
    """Boolean vector over capped subtotals 0..threshold: which ones filling the upper boxes of these faces
    (bit ``f``: the box of face ``f + 1``) can give."""
    cap = rs.upper_threshold
    ok = np.zeros(cap + 1, dtype=bool)
    ok[0] = True
    for f in range(6):
        if (filled_faces >> f) & 1:
            nxt = np.zeros_like(ok)
            for c in range(rs.dice + 1):
                shifted = np.flatnonzero(ok) + c * (f + 1)
                nxt[np.minimum(shifted, cap)] = True
            ok = nxt
    return ok


def filled_faces(rs: rules.RuleSet, masks: np.ndarray) -> np.ndarray:
    """For each open mask, the faces (bit ``f``: face ``f + 1``) whose upper box the game has and has filled."""
    out = np.zeros(len(masks), dtype=np.int64)
    for f in range(6):
        box = rs.face_box(f + 1)
        if box is not None and (rs.box_mask >> rs.box_index[box]) & 1:
            out |= ((masks >> rs.box_index[box]) & 1 == 0).astype(np.int64) << f
    return out


def reachable(rs: rules.RuleSet) -> np.ndarray:
    """Boolean array shaped like the table: True where a state can occur in a game of rule set ``rs``."""
    game = rs.box_mask
    n = 1 << rs.n_boxes
    out = np.zeros(rs.table_shape, dtype=bool)
    by_faces = np.array([upper_subtotals(rs, f) for f in range(64)])
    masks = np.arange(n, dtype=np.int64)
    in_game = (masks & ~game) == 0
    out[0] = by_faces[filled_faces(rs, masks)] & in_game[:, None]
    if rs.penta_box >= 0 and (game >> rs.penta_box) & 1:
        penta_filled = in_game & ((masks >> rs.penta_box) & 1 == 0)
        out[1] = out[0] & penta_filled[:, None]
    return out
