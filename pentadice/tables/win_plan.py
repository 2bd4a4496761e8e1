"""What an out-of-core build of the win strategy's tables computes (:mod:`pentadice.cluster`; its files:
:mod:`pentadice.tables.win_store`).

The tables are one array ``(slots, n_flags, 2**n_boxes, lanes)`` of float64: slot 0 the value table (copied, not
built), then one utility table per theta (the win player's grid, then the variance's ``+-h``:
:func:`pentadice.players.win.stored_thetas`). Every slot but the first is built layer after layer
(:func:`pentadice.game.states.layers`); a layer's box masks are cut into chunks of at most :func:`chunk_masks`
masks, each chunk of each slot one task (:class:`Plan`, :class:`Task`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from pentadice.game import rules, states

KIND = "win"  # the one table kind built out of core so far: the win strategy's theta tables
MIN_CHUNK = 256  # masks: a smaller chunk costs more in scheduling than it computes
MAX_CHUNK = 4096  # masks: a task of Maxi Yatzy's widest layer then takes a few seconds (progress, retries)
PAGE = 4096  # a chunk's rows in the table's copy-on-write mapping: at most a page of the process's memory a row
DEFAULT_MEMORY = 4 << 30  # bytes the workers may use together, unless told (--memory)


def chunk_masks(rs: rules.RuleSet, memory: int, workers: int) -> int:
    """How many box masks a chunk holds: each worker runs one task at a time and holds its chunk's rows twice
    (the rows it writes into its private mapping of the table, and the copy it saves), within half of its
    share of ``memory`` (the rest: the mapped layers below, the kernel, the interpreter)."""
    per_task = memory // max(workers, 1) // 2
    row = rs.n_flags * (rs.lanes * 8 + PAGE)
    return int(min(MAX_CHUNK, max(MIN_CHUNK, per_task // row)))


@dataclasses.dataclass(frozen=True)
class Task:
    """One chunk of one slot: the masks ``lo <= i < hi`` of layer ``layer``
    (``states.layers(rs)[layer]``)."""

    slot: int
    theta: float
    layer: int
    chunk: int
    lo: int
    hi: int

    @property
    def key(self) -> str:
        return f"s{self.slot:02d}-L{self.layer:02d}-c{self.chunk:05d}"


@dataclasses.dataclass(frozen=True)
class Plan:
    """An out-of-core build: the rule set, the thetas of its slots, and the chunk boundaries of each layer
    (``cuts[layer]``: increasing, from 0 to the layer's number of states)."""

    rules: rules.RuleSet
    thetas: tuple[float, ...]
    cuts: tuple[tuple[int, ...], ...]
    chunk: int

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return (len(self.thetas), self.rules.n_flags, 1 << self.rules.n_boxes, self.rules.lanes)

    @property
    def bytes(self) -> int:
        return 8 * math.prod(self.shape)

    @property
    def built_slots(self) -> range:
        return range(1, len(self.thetas))

    def tasks(self, layer: int) -> list[Task]:
        """The tasks of one layer: every built slot, every chunk."""
        cuts = self.cuts[layer]
        return [
            Task(s, self.thetas[s], layer, c, lo, hi)
            for s in self.built_slots
            for c, (lo, hi) in enumerate(itertools.pairwise(cuts))
        ]

    @property
    def n_tasks(self) -> int:
        return sum(len(c) - 1 for c in self.cuts) * len(self.built_slots)

    def layer_bytes(self, layer: int) -> int:
        """The bytes of one layer's chunk files, every built slot (the disk a layer needs before it is merged)."""
        return (self.cuts[layer][-1]) * self.rules.lanes * 8 * len(self.built_slots)

    def as_json(self) -> dict:
        return {"thetas": list(self.thetas), "chunk_masks": self.chunk, "cuts": [list(c) for c in self.cuts]}


def make(
    rs: rules.RuleSet,
    thetas: tuple[float, ...],
    memory: int = DEFAULT_MEMORY,
    workers: int = 2,
    chunk: int | None = None,
) -> Plan:
    """The plan of the tables of ``thetas`` (slot 0: theta 0, the value table) of ``rs``, chunks of ``chunk``
    masks (default: sized for ``memory`` bytes shared by ``workers``)."""
    if chunk is not None and chunk < 1:
        raise ValueError(f"a chunk holds at least 1 box mask, not {chunk}")
    chunk = chunk or chunk_masks(rs, memory, workers)
    cuts = tuple((*range(0, len(masks), chunk), len(masks)) for masks, _ in states.layers(rs))
    return Plan(rs, tuple(thetas), cuts, chunk)


def from_json(rs: rules.RuleSet, data: object, thetas: tuple[float, ...]) -> Plan | None:
    """The plan saved by a build (to resume it with the same chunks), or None when it is not a valid plan of
    ``rs`` and ``thetas``."""
    try:
        saved = tuple(float(t) for t in data["thetas"])
        cuts = tuple(tuple(int(x) for x in c) for c in data["cuts"])
        chunk = int(data["chunk_masks"])
    except (KeyError, TypeError, ValueError):
        return None
    layers = states.layers(rs)
    if len(cuts) != len(layers) or saved != tuple(thetas) or chunk < 1:
        return None
    for c, (masks, _) in zip(cuts, layers, strict=True):
        if not c or c[0] != 0 or c[-1] != len(masks) or any(b <= a for a, b in itertools.pairwise(c)):
            return None
    return Plan(rs, saved, cuts, chunk)


def computed(rs: rules.RuleSet) -> np.ndarray:
    """Boolean ``(n_flags, 2**n_boxes)``: the rows a build computes or sets (every layer's, and the game's end);
    the others are NaN, as in the tables solved in memory."""
    out = np.zeros((rs.n_flags, 1 << rs.n_boxes), dtype=bool)
    out[:, 0] = True
    for masks, flags in states.layers(rs):
        out[flags, masks] = True
    return out
