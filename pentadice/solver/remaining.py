"""The chances table: each state's exact distribution of the points still to come under the advisor's policy.

For every state between turns ``(penta_scored, open_mask)`` and upper subtotal ``u`` it holds ``P(R = r)``, the
chance of scoring exactly ``r`` more points (box points, Penta bonuses, the upper bonus) when every later
decision is the advisor's first-ranked option. A player's final-score distribution is then a lookup (the
sheet's score plus ``R``), and the live chances a sum over a few hundred scores (:mod:`pentadice.advisor.
chances`).

The backward pass runs layer by layer of open boxes, fewest first, as the value pass does: a state's turn is
run forward under the policy (:func:`pentadice.solver.forward.chunk_outcomes`, the distribution module's own:
the same choices, ties included), giving the chance of each outcome (box, points, Penta bonus) per subtotal
lane; then its row is the mix of its successors' rows, each shifted by the points its outcome adds
(:func:`pull_rows`). Successors have one box fewer open, so a layer reads only the layer before it.

A row keeps the points from its first to its last entry above the cut: the tails whose mass is below
:data:`EPS` on each side are dropped. Each dropped tail moves a probability by at most ``EPS``, a mix of rows
never enlarges that, so a table of ``n`` layers is within ``2 n EPS`` of the exact one everywhere (Penta:
2.6e-8). The rows are held in float64 while they are computed and stored in float32 (:data:`STORED`):
a stored probability is within ``2**-24`` of itself relative, so a chance summed from a few hundred of them is
within about 1e-7 (measured; the table states 1e-6, :data:`PRECISION`; tests compare it with the exact
enumeration).

Kiriki (whose states come back to themselves) has no table; neither has Maxi Yatzy (2**20 box masks, out of
this machine's memory: its chances come from the forward pass once few boxes are open).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pentadice.game import rules
from pentadice.solver import kernels as turn_kernels
from pentadice.solver.compiled import jit

EPS = 1e-9  # the mass of each tail a row may drop (see the module's docstring)
STORED = np.float32  # the stored rows' type: within 2**-24 relative of the float64 computed
PRECISION = 1e-6  # what the chances from the table are stated to be within (measured: about 1e-7)
MAX_STATES = 4_000_000  # flags x masks x lanes above this: no table (Yatzy's 2,097,152 fit; Maxi Yatzy's 83,886,080)

CHUNK = 64  # states whose turn outcomes are held at once (the distribution module's chunk)

P_UPPER_THRESHOLD = rules.P_UPPER_THRESHOLD
P_PENTA_BONUS = rules.P_PENTA_BONUS
P_N_BOXES = rules.P_N_BOXES
wide_box_successor = turn_kernels.wide.box_successor
wide_upper_bonus = turn_kernels.wide.upper_bonus


@jit(nogil=True)
def mix(p, sid, i, u, out, tlist, ntouch, off, lo, width, rows, rows_base, scratch):
    """The row of state ``sid``, lane ``u``, before trimming: the successors' rows (``rows``, whose first entry
    is the table's entry ``rows_base``) mixed by the chances of the turn's outcomes ``out[i, ..., u]``, each
    shifted by the points its outcome adds. Written into ``scratch`` from its start; returns ``(first, n)``:
    ``scratch[k]`` is ``P(R = first + k)``, ``k < n`` (n 0: no outcome reaches the lane)."""
    cap = p[P_UPPER_THRESHOLD]
    pb = p[P_PENTA_BONUS]
    n_boxes = p[P_N_BOXES]
    n_points = out.shape[3]
    ps = sid >> n_boxes
    mask = sid & ((1 << n_boxes) - 1)
    first = 1 << 40
    last = -1
    for t in range(ntouch[i]):  # the span of the mix: each outcome's successor row, shifted
        rest, pts = divmod(tlist[i, t], n_points)  # the entry (b * 2 + bf) * n_points + pts
        b, bf = divmod(rest, 2)
        if out[i, b, bf, pts, u] == 0.0:
            continue
        nxt, nps, added = wide_box_successor(p, b, pts, mask, ps)
        t_sid = (nps << n_boxes) | nxt
        u2 = min(u + added, cap)
        gain = pts + bf * pb + wide_upper_bonus(p, u, added)
        if width[t_sid, u2] == 0:
            continue
        first = min(first, lo[t_sid, u2] + gain)
        last = max(last, lo[t_sid, u2] + gain + width[t_sid, u2] - 1)
    if last < 0:
        return 0, 0
    n = last - first + 1
    for y in range(n):
        scratch[y] = 0.0
    for t in range(ntouch[i]):
        rest, pts = divmod(tlist[i, t], n_points)
        b, bf = divmod(rest, 2)
        q = out[i, b, bf, pts, u]
        if q == 0.0:
            continue
        nxt, nps, added = wide_box_successor(p, b, pts, mask, ps)
        t_sid = (nps << n_boxes) | nxt
        u2 = min(u + added, cap)
        gain = pts + bf * pb + wide_upper_bonus(p, u, added)
        src = off[t_sid, u2] - rows_base
        at = lo[t_sid, u2] + gain - first
        for y in range(width[t_sid, u2]):
            scratch[at + y] += q * rows[src + y]
    return first, n


@jit(nogil=True)
def pull_rows(p, sids, n_chunk, out, tlist, ntouch, off, lo, width, prev, prev_base, eps, scratch, dst):
    """The rows of the chunk's states ``sids[:n_chunk]`` from their turns' outcomes ``out`` (as
    :func:`pentadice.solver.forward.chunk_outcomes` gives them; the entries read are set back to zero) and the
    rows of the layer before (``prev``, whose first entry is the table's entry ``prev_base``): :func:`mix`,
    trimmed of its tails below ``eps``, written into ``dst`` from its start unless the lane below has the very
    same row (a subtotal that cannot change the play), which is then shared. ``off[sid, u]`` (the row's start
    in ``dst``), ``lo[sid, u]`` (the points of its first entry) and ``width[sid, u]`` are set, width 0 for a
    lane no turn reaches. Returns the entries of ``dst`` used, or -1 when it is too small."""
    n_points = out.shape[3]
    lanes = out.shape[4]
    used = 0
    for i in range(n_chunk):
        sid = sids[i]
        for u in range(lanes):
            first, n = mix(p, sid, i, u, out, tlist, ntouch, off, lo, width, prev, prev_base, scratch)
            off[sid, u] = 0
            lo[sid, u] = 0
            width[sid, u] = 0
            if n == 0:
                continue
            a = 0  # trim each tail while its mass stays below eps
            mass = 0.0
            while a < n - 1 and mass + scratch[a] < eps:
                mass += scratch[a]
                a += 1
            z = n - 1
            mass = 0.0
            while z > a and mass + scratch[z] < eps:
                mass += scratch[z]
                z -= 1
            lo[sid, u] = first + a
            width[sid, u] = z - a + 1
            if u > 0 and width[sid, u - 1] == z - a + 1 and lo[sid, u - 1] == first + a:
                same = True
                o = off[sid, u - 1]
                for y in range(a, z + 1):
                    if dst[o + y - a] != scratch[y]:
                        same = False
                        break
                if same:
                    off[sid, u] = o
                    continue
            if used + z - a + 1 > dst.shape[0]:
                return -1
            for y in range(a, z + 1):
                dst[used + y - a] = scratch[y]
            off[sid, u] = used
            used += z - a + 1
        for t in range(ntouch[i]):  # the outcomes read, set back to zero for the next chunk
            rest, pts = divmod(tlist[i, t], n_points)
            b, bf = divmod(rest, 2)
            for u in range(lanes):
                out[i, b, bf, pts, u] = 0.0
    return used


@dataclass(frozen=True, eq=False)
class Remaining:
    """The chances table of a rule set: ``data[off[sid, u] : off[sid, u] + width[sid, u]]`` holds ``P(R = r)``
    for ``r = lo[sid, u], lo[sid, u] + 1, ...`` (``sid = penta_scored << n_boxes | open_mask``); width 0 for a
    state no game reaches."""

    rules: rules.RuleSet
    off: np.ndarray  # (n_flags << n_boxes, lanes) int64
    lo: np.ndarray  # (n_flags << n_boxes, lanes) int64
    width: np.ndarray  # (n_flags << n_boxes, lanes) int64
    data: np.ndarray  # (entries,) STORED
    seconds: float = 0.0
    ensure: Callable[[int, int], None] | None = None  # checks entries [a, b) before they are read (a file's chunks)

    @functools.cached_property
    def reach(self) -> int:
        """The most points any row reaches (``max(lo + width)``): a mix's span is within it plus one turn's."""
        return int((self.lo + self.width).max())

    def row(self, flag: int, mask: int, sub: int) -> tuple[int, np.ndarray]:
        """``(lo, probs)``: ``probs[k] = P(R = lo + k)`` from the state, float64. ValueError for a state no
        game reaches (a finished sheet has ``R = 0`` for sure)."""
        sid = (int(flag) << self.rules.n_boxes) | int(mask)
        u = min(int(sub), self.rules.upper_threshold)
        w = int(self.width[sid, u])
        if w == 0:
            raise ValueError(f"no game reaches the state of open boxes {mask:#x}, subtotal {sub}, flag {flag}")
        o = int(self.off[sid, u])
        if self.ensure is not None:
            self.ensure(o, o + w)
        return int(self.lo[sid, u]), np.asarray(self.data[o : o + w], dtype=np.float64)


# They compile in the rules' functions (box_successor, upper_bonus): a changed rules.py empties their cache.
turn_kernels.drop_stale_cache([mix, pull_rows])


def refusal(rs: rules.RuleSet) -> str | None:
    """Why ``rs`` has no chances table, or None."""
    if rs.unbounded:
        return f"{rs.title} has no chances table: {rs.unbounded}"
    states = (rs.n_flags << rs.n_boxes) * rs.lanes
    if states > MAX_STATES:
        return (
            f"{rs.title} has no chances table: its {states:,} states (2**{rs.n_boxes} box masks) are more than "
            f"this machine holds ({MAX_STATES:,}); its chances come from the forward pass once few boxes are open"
        )
    return None


def stages(rs: rules.RuleSet) -> int:
    """The progress steps of :func:`solve`: one per layer of open boxes."""
    return len(rs.boxes)


_local = threading.local()


@functools.cache
def points_axis(rs: rules.RuleSet) -> int:
    """The number of point values a box can take (0 to the most any box holds): the turn outcomes' points axis."""
    from pentadice.game.sheet import possible_points

    return int(max(max(max(p) for p in possible_points(rs).values()), rs.dice * 6)) + 1


def padded_values(rs: rules.RuleSet, values: np.ndarray) -> np.ndarray:
    """The value table as the turn kernels read it: ``(n_flags, 2 ** n_boxes, rs.lanes)`` float64, read-only
    (the lanes added are NaN: no game reaches them; read-only as a loaded table is, so that the kernels compile
    once for both). ValueError for a table of another shape."""
    values = np.asarray(values)
    shape = rs.table_shape
    if values.shape[:2] != shape[:2] or values.shape[2] not in (shape[2], rs.lanes):
        raise ValueError(f"a value table of {rs.name} is shaped {shape}, not {values.shape}")
    if values.shape[2] == rs.lanes:
        V = np.ascontiguousarray(values, dtype=np.float64).view()
    else:
        V = np.full((*values.shape[:2], rs.lanes), np.nan)
        V[:, :, : values.shape[2]] = values
    V.setflags(write=False)
    return V


def solve(
    rs: rules.RuleSet,
    values: np.ndarray,
    threads: int = 1,
    progress: Callable[[int, int], None] | None = None,
    eps: float = EPS,
) -> Remaining:
    """The chances table of ``rs`` under the policy of ``values`` (its value table). ValueError where
    :func:`refusal` says no. ``progress(done, total)`` after each layer, in units of work: a layer's states times
    its boxes open (its rows widen with them), so that a progress bar's rate holds from layer to layer."""
    from pentadice.solver.layers import Workers

    reason = refusal(rs)
    if reason:
        raise ValueError(reason)
    start = time.perf_counter()
    V = padded_values(rs, values)
    lanes, n = V.shape[2], rs.n_boxes
    n_sids = rs.n_flags << n
    off = np.zeros((n_sids, lanes), dtype=np.int64)
    lo = np.zeros((n_sids, lanes), dtype=np.int64)
    width = np.zeros((n_sids, lanes), dtype=np.int64)
    for ps in range(rs.n_flags):  # no box open: 0 more points for sure (one entry per flag, every subtotal)
        width[ps << n, : rs.upper_threshold + 1] = 1
        off[ps << n] = ps
    rlo, rhi = reach_bounds(V)
    prev, prev_base = np.ones(rs.n_flags), 0
    stored = [prev.astype(STORED)]

    def part(layer_sids, prev, prev_base, widest, lo_i, hi_i):
        return rows_of(rs, V, layer_sids[lo_i:hi_i], off, lo, width, rlo, rhi, prev, prev_base, widest, eps)

    base = rs.n_flags
    layers = [sids_of_layer(rs, k) for k in range(1, n + 1)]
    work = np.cumsum([len(layer) * k for k, layer in enumerate(layers, 1)])
    with Workers(threads) as workers:
        for k, layer_sids in enumerate(layers, 1):
            widest = int((lo + width).max())  # rows lie in [0, max(lo + width)): a mix spans that and a gain
            results = workers.run(part, (layer_sids, prev, prev_base, widest), len(layer_sids))
            pieces = []
            at = base
            for rows, sids_done in results:
                for r, s in zip(rows, sids_done, strict=True):
                    off[s] += at
                    at += len(r)
                    pieces.append(r)
            prev = np.concatenate(pieces) if pieces else np.zeros(0)
            prev_base = base
            base = at
            stored.append(prev.astype(STORED))
            if progress is not None:
                progress(int(work[k - 1]), int(work[-1]))
    off[width == 0] = 0  # no row: the start the pass left there depends on how the threads split the layers
    data = np.concatenate(stored)
    return Remaining(rs, off, lo, width, data, time.perf_counter() - start)


def sids_of_layer(rs: rules.RuleSet, k: int) -> np.ndarray:
    """The state ids (``flag << n_boxes | mask``) of the states with ``k`` boxes open, in the order of the pass."""
    n = rs.n_boxes
    masks = np.arange(1 << n, dtype=np.int64)
    masks = masks[((masks & ~rs.box_mask) == 0) & (np.bitwise_count(masks) == k)]
    return np.array([(ps << n) | int(m) for m in masks for ps in range(rs.n_flags)], dtype=np.int64)


def reach_bounds(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rlo, rhi)`` of :func:`pentadice.solver.forward.chunk_outcomes` for every state id: the lanes a game
    reaches (NaN in the padded value table ``V``: none)."""
    n_sids, lanes = V.shape[0] * V.shape[1], V.shape[2]
    rlo = np.zeros((n_sids, lanes), dtype=np.int64)
    rhi = np.where(np.isnan(V.reshape(n_sids, lanes)), -1, 0).astype(np.int64)
    return rlo, rhi


def rows_of(
    rs: rules.RuleSet,
    V: np.ndarray,
    sids: np.ndarray,
    off: np.ndarray,
    lo: np.ndarray,
    width: np.ndarray,
    rlo: np.ndarray,
    rhi: np.ndarray,
    prev: np.ndarray,
    prev_base: int,
    widest: int,
    eps: float = EPS,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The rows of the states ``sids`` of one layer (:data:`CHUNK` at a time: their turns run forward under the
    policy of ``V``, then :func:`pull_rows` from the layer before, ``prev``, whose first entry is the table's
    entry ``prev_base``; ``widest``: ``max(lo + width)`` of the layers before). Their ``off``, ``lo`` and
    ``width`` are set, ``off`` from the start of their group's rows; returns each group's rows and states, in
    order. The pass in memory and a task of the out-of-core build (:mod:`pentadice.tables.chances_store`) both
    run it: the same rows."""
    from pentadice.solver import forward as fw
    from pentadice.solver.turn_inputs import turn_inputs

    n, lanes = rs.n_boxes, V.shape[2]
    n_points = points_axis(rs)
    gain_max = n_points + rs.penta_bonus + rs.upper_bonus + 6 * rs.dice
    p = turn_inputs(rs).p
    buffers = getattr(_local, "buffers", None)
    shape = (CHUNK, n, 2, n_points, lanes)
    if buffers is None or buffers[0].shape != shape:
        buffers = _local.buffers = (
            np.zeros(shape),
            np.zeros((CHUNK, n * 2 * n_points), dtype=np.int64),
            np.zeros(CHUNK, dtype=np.int64),
        )
    out, tlist, ntouch = buffers
    scratch = np.empty(widest + gain_max + 1)
    rows, sids_done = [], []
    dst = np.empty(CHUNK * lanes * (widest + gain_max + 1))
    try:
        for c0 in range(0, len(sids), CHUNK):
            chunk = np.ascontiguousarray(sids[c0 : c0 + CHUNK])
            fw.chunk_outcomes(rs, V, chunk, rlo, rhi, out, tlist, ntouch)
            used = pull_rows(p, chunk, len(chunk), out, tlist, ntouch, off, lo, width, prev, prev_base, eps, scratch,
                             dst)  # fmt: skip
            if used < 0:
                raise RuntimeError("a row of the chances table overran its bound")
            rows.append(dst[:used].copy())
            sids_done.append(chunk)
    except BaseException:  # an error or an interrupt between a chunk's outcomes and their reset
        _local.buffers = None  # left part-written: never reused by a later pass on this thread
        raise
    return rows, sids_done


@functools.lru_cache(maxsize=4)
def _one_slot(n_sids: int) -> np.ndarray:
    """``slot_of`` mapping every state to slot 0 (one state's turn at a time), read-only and shared."""
    out = np.zeros(n_sids, dtype=np.int64)
    out.setflags(write=False)
    return out


def mid_turn(
    built: Remaining, values: np.ndarray, flag: int, mask: int, sub: int, hand: int, rolls_left: int
) -> tuple[int, np.ndarray]:
    """``(lo, probs)``: the distribution of the points still to come from the middle of a turn, the hand
    ``hand`` (its keep number) showing with ``rolls_left`` rerolls left, under the advisor's policy: the turn
    run forward from that hand (:func:`pentadice.solver.forward.chunk_outcomes`), its outcomes mixed with the
    successors' rows of the table (:func:`mix`), untrimmed. ``values``: the value table, padded
    (:func:`padded_values`)."""
    from pentadice.solver import forward as fw
    from pentadice.solver.turn_inputs import turn_inputs

    rs = built.rules
    n, lanes = rs.n_boxes, values.shape[2]
    p = turn_inputs(rs).p
    n_points = points_axis(rs)
    sid = (int(flag) << n) | int(mask)
    u = min(int(sub), rs.upper_threshold)
    rlo = np.zeros((1, lanes), dtype=np.int64)
    rhi = np.full((1, lanes), -1, dtype=np.int64)
    rhi[0, u] = 0
    out = np.zeros((1, n, 2, n_points, lanes))
    tlist = np.zeros((1, n * 2 * n_points), dtype=np.int64)
    ntouch = np.zeros(1, dtype=np.int64)
    sids = np.array([sid], dtype=np.int64)
    slots = _one_slot(rs.n_flags << n)
    fw.chunk_outcomes(rs, values, sids, rlo, rhi, out, tlist, ntouch, int(hand), int(rolls_left), slots)
    if built.ensure is not None:
        built.ensure(0, built.data.size)  # the successors' rows, wherever they lie: every chunk checked once
    scratch = np.empty(built.reach + n_points + rs.penta_bonus + rs.upper_bonus + 1)
    first, count = mix(p, sid, 0, u, out, tlist, ntouch, built.off, built.lo, built.width, built.data, 0,
                       scratch)  # fmt: skip
    if count == 0:
        raise ValueError("no turn reaches this situation's state")
    return int(first), scratch[:count].copy()
