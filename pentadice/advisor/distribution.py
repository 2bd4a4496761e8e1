"""The exact distribution of the final score under optimal (expected-score) play, from any situation.

:func:`final_distribution` propagates probability forward over the states between turns and the points
gained (:mod:`pentadice.solver.forward`): no sampling. The policy is the advisor's first-ranked option (the
highest value, ties as :meth:`pentadice.advisor.advice.Option.tie_key`), so the distribution's mean is the
table's expected score. Results from a state between turns are cached in the process (keyed on the rule set,
the values array and the state), since live win chances ask again and again.

Kiriki is refused: a five of a kind added to a filled Kiriki box repeats the turn, so the number of turns, and
the score, have no bound; see :data:`UNBOUNDED_REFUSAL`. So is a situation whose probability vectors would not fit
in :data:`MEMORY_LIMIT` (Maxi Yatzy from its first turns: a million states between turns of 80 subtotals, each
with hundreds of scores); see :class:`DistributionTooLarge`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from pentadice.game import rules
from pentadice.game import sheet as sheet_module
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.solver.turn_inputs import turn_inputs

PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
UNBOUNDED_REFUSAL = "the exact score distribution is not available under {title}: {why} (not implemented)"
CHUNK = 64  # states whose turn outcomes are held at once (memory: CHUNK x boxes x 2 x points x lanes float64)
CACHE_SIZE = 256
# The most memory the process may take for a distribution (the value table and its padded copy, the probability
# vectors of two layers at once, the per-slot bookkeeping, a chunk's turn outcomes, and the process itself):
# beyond it the distribution is refused rather than the machine driven into swap.
MEMORY_LIMIT = 4 * 1024**3
# The process beside the forward pass's arrays: Python, NumPy, Numba and the compiled code (0.35 GB measured).
PROCESS_MEMORY = 400 * 1024**2
TOO_LARGE = (
    "the exact score distribution of {title} from this sheet is not computed: it needs about {need:.1f} GB "
    "({states:,} states between turns x up to {lanes} upper subtotals x up to {points:,} scores), more than the "
    "{limit:.0f} GB allowed; it is computed once fewer boxes are open"
)


class DistributionError(ValueError):
    """A situation whose distribution cannot be computed (Kiriki), or a table that does not fit the rules."""


class DistributionTooLarge(DistributionError):
    """A situation whose forward pass would need more than :data:`MEMORY_LIMIT` (the message gives the sizes)."""


@dataclass(frozen=True)
class Distribution:
    """``probs[i]`` is the probability that the final score is ``offset + i``; ``seconds`` the time it took.
    ``p_upper_bonus``: the chance that the upper boxes end at the threshold or above (the upper bonus earned);
    ``p_penta``: the chance that the Penta box ends holding its points (None without a Penta box)."""

    offset: int
    probs: np.ndarray
    seconds: float = field(default=0.0, compare=False)
    p_upper_bonus: float = field(default=math.nan, compare=False)
    p_penta: float | None = field(default=None, compare=False)

    @property
    def scores(self) -> np.ndarray:
        """The scores ``offset .. offset + len(probs) - 1``."""
        return np.arange(self.offset, self.offset + len(self.probs))

    @property
    def max_score(self) -> int:
        """The highest score with a positive probability."""
        return self.offset + int(np.flatnonzero(self.probs)[-1])

    @property
    def min_score(self) -> int:
        """The lowest score with a positive probability."""
        return self.offset + int(np.flatnonzero(self.probs)[0])

    def total(self) -> float:
        """The sum of the probabilities (1 up to rounding)."""
        return float(math.fsum(self.probs))

    def mean(self) -> float:
        """The expected final score."""
        return float(math.fsum(self.probs * self.scores)) / self.total()

    def sd(self) -> float:
        """The standard deviation of the final score (about the mean, so no cancellation of large squares)."""
        centred = self.scores - self.mean()
        return math.sqrt(max(math.fsum(self.probs * centred * centred) / self.total(), 0.0))

    def cdf(self) -> np.ndarray:
        """``P(final <= offset + i)`` for each ``i``."""
        return np.cumsum(self.probs) / self.total()

    def percentile(self, q: float) -> int:
        """The ``q``-th percentile (0 < q <= 100): the smallest score ``s`` with ``P(final <= s) >= q / 100``."""
        if not 0 < q <= 100:
            raise ValueError(f"a percentile is between 0 (excluded) and 100, not {q}")
        cdf = self.cdf()
        i = int(np.searchsorted(cdf, q / 100 - 1e-12, side="left"))
        return self.offset + min(i, len(self.probs) - 1)

    def percentiles(self, qs: Sequence[float] = PERCENTILES) -> dict[str, int]:
        """The percentiles ``qs`` as ``{"1": s, "5": s, ...}``."""
        return {f"{q:g}": self.percentile(q) for q in qs}

    def at_least(self, t: int) -> float:
        """``P(final >= t)``."""
        i = t - self.offset
        if i <= 0:
            return 1.0
        if i >= len(self.probs):
            return 0.0
        return float(min(math.fsum(self.probs[i:]) / self.total(), 1.0))

    def tail(self) -> list[list[float]]:
        """``[t, P(final >= t)]`` for every ``t`` from 0 to the highest score with a positive probability."""
        top = self.max_score
        surv = np.cumsum(self.probs[::-1])[::-1] / self.total()  # P(final >= offset + i)
        out = []
        for t in range(0, top + 1):
            i = t - self.offset
            p = 1.0 if i <= 0 else float(surv[i])
            out.append([t, min(p, 1.0)])
        return out

    def shifted(self, points: int) -> Distribution:
        """The same distribution with ``points`` more to every score."""
        return dataclasses.replace(self, offset=self.offset + points)


def final_distribution(
    rs: rules.RuleSet,
    values: np.ndarray,
    sheet: Sheet | None = None,
    dice: Sequence[int] | None = None,
    rolls_left: int | None = None,
    threads: int | None = None,
) -> Distribution:
    """The exact distribution of the final score from ``sheet`` (default: the start of a game) between turns,
    or mid-turn with ``dice`` showing and ``rolls_left`` rerolls left (default: the first roll's), under the
    advisor's policy.

    ``values`` is the rule set's value table (``Table.values`` or ``Solution.values``). Raises
    :class:`DistributionError` under Kiriki, and ValueError (a SheetError or SituationError) for a sheet or dice
    that cannot occur.
    """
    check_rules(rs)
    sheet = sheet if sheet is not None else Sheet()
    start = time.perf_counter()
    if dice is not None:
        situation = Situation.make(rs, list(dice), rs.rolls - 1 if rolls_left is None else rolls_left, sheet)
        sheet = situation.sheet
        hand = turn_inputs(rs).tables.keep_of(situation.dice)
        stage = situation.rolls_left
    else:
        sheet.validate(rs, finished_ok=True)  # a finished sheet: its score, with probability 1
        hand, stage = -1, -1
    so_far = sheet.score(rs)
    open_mask = sheet.open_mask(rs)
    u0 = sheet.upper_subtotal(rs)
    ps = int(sheet.penta_scored(rs))
    if open_mask == 0:
        ended = float(u0 >= rs.upper_threshold), float(ps) if rs.penta_box >= 0 else None
        return Distribution(so_far, np.ones(1), time.perf_counter() - start, *ended)
    V = _padded(values, rs)
    if hand < 0:
        gained = _cached(rs, V, values, ps, open_mask, u0, threads)
    else:
        gained = _propagate(rs, V, ps, open_mask, u0, hand, stage, threads)
    return dataclasses.replace(gained.shifted(so_far), seconds=time.perf_counter() - start)


COMPILING_MESSAGE = "Compiling the distribution kernels (first run only)..."


def needs_compiling(rs: rules.RuleSet | None = None) -> bool:
    """Whether the forward kernels (for ``rs``'s lanes; default 64) are not in Numba's cache yet (a first run:
    compiling takes seconds)."""
    from pentadice.solver import forward
    from pentadice.solver.compiled import cached

    build = forward.compiled(forward.LANES if rs is None else rs.lanes)
    return not all(cached(f) for f in vars(build).values())


def check_rules(rs: rules.RuleSet) -> None:
    """:class:`DistributionError` for a rule set whose distribution is not computed (Kiriki), with the reason."""
    if rs.unbounded:
        raise DistributionError(UNBOUNDED_REFUSAL.format(title=rs.title, why=rs.unbounded))


_cache: OrderedDict = OrderedDict()
_cache_lock = threading.Lock()
_refused: dict = {}  # (rules, state, subtotal) -> the message of a refusal (DistributionTooLarge)


def _cached(rs: rules.RuleSet, V: np.ndarray, values: np.ndarray, ps: int, mask: int, u0: int, threads) -> Distribution:
    """The points gained from a state between turns, from the process's cache when asked before."""
    key = (rs, id(values), ps, mask, u0)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] is values:
            _cache.move_to_end(key)
            return hit[1]
    result = _propagate(rs, V, ps, mask, u0, -1, -1, threads)
    with _cache_lock:
        _cache[key] = (values, result)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return result


def _padded(values: np.ndarray, rs: rules.RuleSet) -> np.ndarray:
    """The values as the kernels read them (:func:`pentadice.solver.remaining.padded_values`); DistributionError
    for a table of another shape."""
    from pentadice.solver.remaining import padded_values

    try:
        return padded_values(rs, values)
    except ValueError as e:
        raise DistributionError(str(e)) from None


@functools.cache
def _max_points(rs: rules.RuleSet) -> np.ndarray:
    """The most points each box can hold (0 for boxes the game lacks)."""
    out = np.zeros(rs.n_boxes, dtype=np.int64)
    for box, pts in sheet_module.possible_points(rs).items():
        out[rs.box_index[box]] = max(pts)
    return out


def _threads(threads: int | None) -> int:
    import numba

    return max(1, threads or numba.get_num_threads())


def _n_points(rs: rules.RuleSet) -> int:
    """The number of point values a box can take (0 to the most any box holds): the turn outcomes' points axis
    (:func:`pentadice.solver.remaining.points_axis`)."""
    from pentadice.solver.remaining import points_axis

    return points_axis(rs)


def check_size(rs: rules.RuleSet, sheet: Sheet | None = None) -> None:
    """:class:`DistributionTooLarge` (with the sizes) if the distribution from ``sheet`` (between turns, or
    mid-turn: the same states follow) would need more than :data:`MEMORY_LIMIT`, and :class:`DistributionError`
    under Kiriki; nothing otherwise. Needs no value table: a front end asks this first, before loading or
    solving one (Maxi Yatzy's is 608 MB, half a minute to solve) for an answer that is then refused."""
    check_rules(rs)
    sheet = sheet if sheet is not None else Sheet()
    mask = sheet.open_mask(rs)
    if mask:
        _plan(rs, int(sheet.penta_scored(rs)), mask, sheet.upper_subtotal(rs))


@functools.lru_cache(maxsize=1)  # the plan of the state last checked: check_size, then the pass, plan it once
def _plan_cached(rs: rules.RuleSet, ps: int, mask: int, u0: int) -> tuple[np.ndarray, np.ndarray]:
    from pentadice.solver import forward as fw

    n_sids = rs.n_flags << rs.n_boxes
    hi = np.empty(n_sids, dtype=np.int64)
    bits = np.empty((n_sids, rs.lanes), dtype=np.uint8)
    p = turn_inputs(rs).p
    fw.compiled(rs.lanes).plan_slots(p, rs.dice, _max_points(rs), (ps << rs.n_boxes) | mask, u0, hi, bits)
    hi.setflags(write=False)
    bits = bits.view(bool)
    bits.setflags(write=False)
    return hi, bits


def _plan(rs: rules.RuleSet, ps: int, mask: int, u0: int) -> tuple[np.ndarray, np.ndarray]:
    """The slots reached from state ``(ps, mask)`` at subtotal ``u0``: each state's highest score gained
    (``-1``: not reached) and its upper subtotals reached; :class:`DistributionTooLarge` (remembered) if the
    forward pass from there would need more than :data:`MEMORY_LIMIT`."""
    n, L = rs.n_boxes, rs.lanes
    key = (rs, (ps << n) | mask, u0)
    refused = _refused.get(key)
    if refused is not None:
        raise DistributionTooLarge(refused)
    hi, bits = _plan_cached(rs, ps, mask, u0)
    reached = np.flatnonzero(hi >= 0)
    width = hi[reached] + 1
    rbits = bits[reached]
    open_count = np.bitwise_count(reached & ((1 << n) - 1))
    layers = {k: np.flatnonzero(open_count == k) for k in range(mask.bit_count(), -1, -1)}
    totals = {k: int(rbits[r].sum(axis=1) @ width[r]) + 1 for k, r in layers.items()}  # each layer's vectors
    chunk_rows = min(CHUNK, max((len(r) for k, r in layers.items() if k > 0), default=1))
    out_shape = (chunk_rows, n, 2, _n_points(rs), L)
    padded = 0 if rs.upper_threshold + 1 == L else (rs.n_flags << n) * L  # the value table's copy, lanes added
    need = PROCESS_MEMORY + 8 * (
        max(totals[k] + totals.get(k - 1, 0) for k in totals)  # two layers' vectors at once
        + math.prod(rs.table_shape)  # the value table itself (read whole)
        + padded
        + 3 * len(reached) * L  # row offsets, lowest and highest score held, per slot
        + math.prod(out_shape) * (L + 1) // L  # a chunk's outcomes and their list
    )
    if need > MEMORY_LIMIT:
        message = TOO_LARGE.format(
            title=rs.title,
            need=need / 1024**3,
            states=len(reached),
            lanes=rs.upper_threshold + 1,
            points=int(width.max()),
            limit=MEMORY_LIMIT / 1024**3,
        )
        _refused[key] = message
        _plan_cached.cache_clear()  # a refused plan is not kept (Maxi Yatzy's takes over 100 MB)
        raise DistributionTooLarge(message)
    return hi, bits


def _propagate(
    rs: rules.RuleSet, V: np.ndarray, ps: int, mask: int, u0: int, hand: int, stage: int, threads: int | None
) -> Distribution:
    """The distribution of the points gained from state ``(ps, mask)`` at subtotal ``u0`` (mid-turn if
    ``hand >= 0``), by forward propagation layer by layer."""
    from pentadice.solver import forward as fw

    n = rs.n_boxes
    L = rs.lanes
    n_sids = rs.n_flags << n
    inputs = turn_inputs(rs)
    t = inputs.tables
    p = inputs.p
    n_threads = _threads(threads)
    n_points = _n_points(rs)
    start_sid = (ps << n) | mask
    build = fw.compiled(L)
    hi, bits = _plan(rs, ps, mask, u0)
    _plan_cached.cache_clear()  # kept only from check_size to here: not for the life of the process
    width = hi + 1
    # The states reached, each with a row of the slots' arrays (``slot_of``), by layer (open boxes); the slots'
    # sizes: refused before anything large is allocated.
    reached = np.flatnonzero(hi >= 0)
    n_reached = len(reached)
    slot_of = np.full(n_sids, -1, dtype=np.int64)
    slot_of[reached] = np.arange(n_reached)
    slot_of.setflags(write=False)
    bits = bits[reached]
    width = width[reached]
    open_count = np.bitwise_count(reached & ((1 << n) - 1))
    k0 = mask.bit_count()
    layers = {k: np.flatnonzero(open_count == k) for k in range(k0, -1, -1)}  # slots of each layer
    totals = {k: int(bits[r].sum(axis=1) @ width[r]) + 1 for k, r in layers.items()}  # each layer's vectors
    chunk_rows = min(CHUNK, max((len(r) for k, r in layers.items() if k > 0), default=1))
    out_shape = (chunk_rows, n, 2, n_points, L)
    row_off = np.full((n_reached, L), -1, dtype=np.int64)
    rlo = np.full((n_reached, L), np.iinfo(np.int64).max // 4, dtype=np.int64)
    rhi = np.full((n_reached, L), -1, dtype=np.int64)
    part = (((reached * 2654435761) >> 7) % n_threads).astype(np.int64)
    pools = {}
    for r in layers.values():
        # Row offsets of the layer's slots in one flat pool: the states in order, each one's lanes in order.
        sizes = bits[r] * width[r, None]
        flat = sizes.ravel()
        starts = (np.cumsum(flat) - flat).reshape(sizes.shape)
        row_off[r] = np.where(bits[r], starts, -1)
    s0 = slot_of[start_sid]
    pools[k0] = np.zeros(totals[k0])
    pools[k0][row_off[s0, u0]] = 1.0
    rlo[s0, u0] = 0
    rhi[s0, u0] = 0

    errors = np.zeros(1, dtype=np.int64)
    out = np.zeros(out_shape)
    tlist = np.zeros((chunk_rows, n * 2 * n_points), dtype=np.int64)
    ntouch = np.zeros(chunk_rows, dtype=np.int64)
    pool = ThreadPoolExecutor(n_threads) if n_threads > 1 else None
    try:
        for k in range(k0, 0, -1):
            pools[k - 1] = np.zeros(totals[k - 1])
            src, dst = pools[k], pools[k - 1]
            members = reached[layers[k]]  # the layer's state ids
            for c0 in range(0, len(members), chunk_rows):
                chunk = np.ascontiguousarray(members[c0 : c0 + chunk_rows])
                m = len(chunk)
                mid = hand if (hand >= 0 and k == k0) else -1

                def outcomes(lo: int, hi_: int, chunk=chunk, mid=mid) -> None:
                    build.turn_outcomes(
                        V, p, rs.dice, t.counts, inputs.scores, t.add, t.subs, t.weight, t.subkeeps, chunk,
                        lo, hi_, rlo, rhi, slot_of, mid, stage, out, tlist, ntouch, errors,
                    )  # fmt: skip

                def push(me: int, chunk=chunk, m=m, src=src, dst=dst) -> None:
                    build.push_outcomes(
                        p, chunk, m, out, tlist, ntouch, src, dst, row_off, width, rlo, rhi, part, slot_of, me, errors
                    )

                if pool is None or m == 1:
                    outcomes(0, m)
                else:
                    cuts = np.linspace(0, m, n_threads + 1).astype(int)
                    for f in [pool.submit(outcomes, a, b) for a, b in itertools.pairwise(cuts) if b > a]:
                        f.result()
                if pool is None:
                    for me in range(n_threads):
                        push(me)
                else:
                    for f in [pool.submit(push, me) for me in range(n_threads)]:
                        f.result()
            del pools[k]
            if errors[0]:
                raise RuntimeError(f"the forward pass failed (code {errors[0]}): the table does not fit the rules")
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    # The end of the game: final = points gained = u - u0 + y; each final state's mass says how the sheet ended
    # (its lane: the capped upper subtotal; its flag: whether the Penta box holds its points).
    top = int(width[layers[0]].max()) - 1 + L if len(layers[0]) else 1
    gained = np.zeros(top + L + 1)
    last = pools[0]
    ended = np.zeros((2, 2))  # [Penta box with its points, upper bonus earned]: their chances together
    for s in layers[0]:
        for u in np.flatnonzero(bits[s]):
            if rhi[s, u] < rlo[s, u]:
                continue
            lo, hi_ = int(rlo[s, u]), int(rhi[s, u])
            o = int(row_off[s, u])
            gained[u + lo : u + hi_ + 1] += last[o + lo : o + hi_ + 1]
            ended[reached[s] >> n, int(u >= rs.upper_threshold)] += math.fsum(last[o + lo : o + hi_ + 1])
    nz = np.flatnonzero(gained)
    first, final = int(nz[0]), int(nz[-1])
    total = ended.sum()
    p_penta = float(ended[1].sum() / total) if rs.penta_box >= 0 else None
    return Distribution(first - u0, gained[first : final + 1].copy(), 0.0, float(ended[:, 1].sum() / total), p_penta)
