"""Numba kernels for one turn ("widget"), computed for all 64 upper subtotals at once.

Every array row holds 64 lanes, one per capped upper subtotal, so that each step is a contiguous,
vectorisable operation on rows. The steps of a turn, from the last roll back to the first:

1. :func:`successor_rows`: for each way of filling a box (box, upper points), the value of the next state
   seen from each subtotal, upper bonus included.
2. :func:`hand_values`: each hand's value after the last roll: the best legal box (rules module).
3. :func:`keep_values`: a keep of k dice is worth the mean, over the six faces, of the keep with that face
   added; the hands (full keeps) are worth their hand values.
4. :func:`best_subkeeps`: the best keep inside a multiset is its own value or the best keep inside one of
   the multisets with one die fewer. For a hand, that is its value with one roll more.

:func:`turn_value` chains them for one state and averages over the first roll.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import njit, prange

from pentadice import rules

LANES = 64  # capped upper subtotals 0..63
N_ROWS = 44  # successor rows: 6 upper boxes x 6 dice counts, 6 lower boxes, Penta at 0 and at full points
ROW_LOWER = 36
ROW_PENTA = 42

score_options = njit(cache=True)(rules.score_options)
upper_bonus = njit(cache=True)(rules.upper_bonus)


@njit(cache=True)
def successor_row(box: int, points: int) -> int:
    """Row of :func:`successor_rows` that holds the next state after ``points`` go into ``box``."""
    if box < 6:
        return box * 6 + points // (box + 1)
    if box < rules.PENTA:
        return ROW_LOWER + box - 6
    return ROW_PENTA + (1 if points > 0 else 0)


@njit(cache=True)
def successor_rows(V, p, n_dice, open_mask, full, rows):
    """Fill ``rows`` with the next state's value, per subtotal lane, for each way to fill an open box."""
    cap = p[rules.P_UPPER_THRESHOLD]
    for b in range(rules.N_BOXES):
        if (open_mask >> b) & 1 == 0:
            continue
        nxt = open_mask & ~(1 << b)
        if b < 6:
            src = V[full, nxt]
            for c in range(n_dice + 1):
                a = c * (b + 1)
                dst = rows[b * 6 + c]
                for u in range(LANES):
                    dst[u] = src[min(u + a, cap)] + upper_bonus(p, u, a)
        elif b < rules.PENTA:
            dst = rows[ROW_LOWER + b - 6]
            src = V[full, nxt]
            for u in range(LANES):
                dst[u] = src[u]
        else:
            for f in range(2):
                dst = rows[ROW_PENTA + f]
                src = V[f, nxt]
                for u in range(LANES):
                    dst[u] = src[u]


@njit(cache=True)
def hand_values(p, hand_counts, open_mask, full, rows, out, points):
    """``out[h]``: value of hand ``h`` after the last roll, per lane: the best legal box."""
    for h in range(hand_counts.shape[0]):
        bonus = score_options(p, hand_counts[h], open_mask, full, points)
        best = out[h]
        for u in range(LANES):
            best[u] = -np.inf
        for b in range(rules.N_BOXES):
            pts = points[b]
            if pts < 0:
                continue
            row = rows[successor_row(b, pts)]
            add = float(pts + bonus)
            for u in range(LANES):
                x = row[u] + add
                if x > best[u]:
                    best[u] = x


@njit(cache=True)
def keep_values(add, n_hands, K):
    """Rows ``n_hands..`` of ``K``: each keep's value, the mean over the six faces of the keep one die larger."""
    for k in range(n_hands, K.shape[0]):
        out = K[k]
        r0 = K[add[k, 0]]
        r1 = K[add[k, 1]]
        r2 = K[add[k, 2]]
        r3 = K[add[k, 3]]
        r4 = K[add[k, 4]]
        r5 = K[add[k, 5]]
        for u in range(LANES):
            out[u] = (r0[u] + r1[u] + r2[u] + r3[u] + r4[u] + r5[u]) / 6.0


@njit(cache=True)
def best_subkeeps(remove, K, B):
    """``B[k]``: the best value of any keep inside multiset ``k`` (itself included)."""
    for k in range(K.shape[0] - 1, -1, -1):
        out = B[k]
        own = K[k]
        for u in range(LANES):
            out[u] = own[u]
        for j in range(6):
            s = remove[k, j]
            if s < 0:
                break
            sub = B[s]
            for u in range(LANES):
                if sub[u] > out[u]:
                    out[u] = sub[u]


@njit(cache=True)
def turn_value(V, p, n_dice, counts, add, remove, weight, open_mask, full, K, B, rows, points):
    """Value at the start of a turn in state (``open_mask``, ``full``), per lane, written into ``V``."""
    n_hands = weight.shape[0]
    successor_rows(V, p, n_dice, open_mask, full, rows)
    hand_values(p, counts[:n_hands], open_mask, full, rows, K, points)
    for _ in range(p[rules.P_ROLLS] - 1):
        keep_values(add, n_hands, K)
        best_subkeeps(remove, K, B)
        for h in range(n_hands):
            for u in range(LANES):
                K[h, u] = B[h, u]
    acc = B[0]
    for u in range(LANES):
        acc[u] = 0.0
    for h in range(n_hands):
        w = float(weight[h])
        row = K[h]
        for u in range(LANES):
            acc[u] += w * row[u]
    total = float(6**n_dice)
    out = V[full, open_mask]
    for u in range(LANES):
        out[u] = acc[u] / total


@njit(cache=True, parallel=True)
def solve_layer(V, p, n_dice, counts, add, remove, weight, masks, fulls):
    """Solve the independent states ``(masks[i], fulls[i])`` of one layer, in parallel."""
    n_keeps = counts.shape[0]
    for i in prange(masks.shape[0]):
        K = np.empty((n_keeps, LANES))
        B = np.empty((n_keeps, LANES))
        rows = np.empty((N_ROWS, LANES))
        points = np.empty(rules.N_BOXES, dtype=np.int64)
        turn_value(V, p, n_dice, counts, add, remove, weight, masks[i], fulls[i], K, B, rows, points)


def _drop_stale_cache() -> None:
    """Empty Numba's cache of these kernels when ``rules.py`` changed since it was written.

    Numba keys a cached kernel on its own source file only, yet these kernels compile in the rules module's
    scoring: without this a changed rule would silently run the old compiled one.
    """
    stamp_text = hashlib.sha256(Path(rules.__file__).read_bytes()).hexdigest()
    dispatchers = [obj for obj in globals().values() if hasattr(obj, "_cache") and hasattr(obj, "py_func")]
    try:
        stamp = Path(solve_layer._cache._cache_path) / "pentadice-rules.sha256"
        if stamp.exists() and stamp.read_text() == stamp_text:
            return
        for d in dispatchers:
            d._cache.flush()
        stamp.write_text(stamp_text)
    except (AttributeError, OSError):  # another Numba cache layout, or a read-only install: nothing to drop
        pass


_drop_stale_cache()
