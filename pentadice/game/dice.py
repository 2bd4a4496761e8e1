"""Dice combinatorics: hands, keeps, and the index tables that the turn kernels walk.

A *keep* is a multiset of 0 to ``n`` dice; a *hand* is a keep of all ``n`` dice. Keeps are numbered with the
hands first (so a hand's number is its keep number), then keeps of ``n - 1`` dice, and so on down to the empty
keep, which is last. Adding a die to a keep therefore always gives a smaller number, removing one a larger.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DiceTables:
    """Index tables for ``n`` dice (all arrays int64 unless said)."""

    n: int
    counts: np.ndarray  # (n_keeps, 6): face counts of each keep
    size: np.ndarray  # (n_keeps,): number of dice in each keep
    add: np.ndarray  # (n_keeps, 6): keep with one more die of face f, -1 for hands
    subs: np.ndarray  # (n_keeps, 5; 6 with 6 dice): distinct keeps one die smaller, padded; -1 for the empty keep
    weight: np.ndarray  # (n_hands,): ways to roll each hand, out of 6**n
    subkeeps: np.ndarray  # (n_hands, 2**n - 1): each hand's distinct proper sub-keeps, larger first, -1 padded
    index: dict[tuple[int, ...], int]  # face counts -> keep number

    @property
    def n_hands(self) -> int:
        return len(self.weight)

    @property
    def n_keeps(self) -> int:
        return len(self.size)

    def keep_of(self, dice: tuple[int, ...] | list[int]) -> int:
        """Keep number of a multiset of dice given by faces (1-6)."""
        c = [0] * 6
        for d in dice:
            c[d - 1] += 1
        return self.index[tuple(c)]

    @functools.cached_property
    def keep_faces(self) -> tuple[tuple[int, ...], ...]:
        """The faces of each keep, sorted."""
        return tuple(tuple(f + 1 for f in range(6) for _ in range(int(c[f]))) for c in self.counts)


def _multisets(size: int) -> list[tuple[int, ...]]:
    """Face-count vectors of all multisets of ``size`` dice, in lexicographic order of the sorted dice."""
    out = []
    for combo in itertools.combinations_with_replacement(range(6), size):
        c = [0] * 6
        for f in combo:
            c[f] += 1
        out.append(tuple(c))
    return out


@functools.cache
def tables(n: int = 5) -> DiceTables:
    """The index tables for ``n`` dice (cached)."""
    keeps = [c for size in range(n, -1, -1) for c in _multisets(size)]
    index = {c: i for i, c in enumerate(keeps)}
    counts = np.array(keeps, dtype=np.int64)
    size = counts.sum(axis=1)
    add = np.full((len(keeps), 6), -1, dtype=np.int64)
    subs = np.full((len(keeps), 6 if n >= 6 else 5), -1, dtype=np.int64)  # a keep has at most n distinct faces
    for i, c in enumerate(keeps):
        j = 0
        for f in range(6):
            if size[i] < n:
                bigger = list(c)
                bigger[f] += 1
                add[i, f] = index[tuple(bigger)]
            if c[f] > 0:
                smaller = list(c)
                smaller[f] -= 1
                subs[i, j] = index[tuple(smaller)]
                j += 1
        if j:
            subs[i, j:] = subs[i, 0]
    n_hands = math.comb(n + 5, 5)
    weight = np.array(
        [math.factorial(n) // math.prod(math.factorial(x) for x in keeps[h]) for h in range(n_hands)],
        dtype=np.int64,
    )
    subkeeps = np.full((n_hands, 2**n - 1), -1, dtype=np.int64)
    for h in range(n_hands):
        inside = {index[c] for c in itertools.product(*(range(x + 1) for x in keeps[h])) if sum(c) < n}
        subkeeps[h, : len(inside)] = sorted(inside)  # keep numbers run from larger keeps to smaller
    for a in (counts, size, add, subs, weight, subkeeps):
        a.setflags(write=False)
    return DiceTables(n, counts, size, add, subs, weight, subkeeps, index)
