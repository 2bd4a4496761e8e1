"""The exact distribution of the final score under optimal (expected-score) play, from any situation.

:func:`final_distribution` propagates probability forward over the states between turns and the points
gained (:mod:`pentadice.solver.forward`): no sampling. The policy is the advisor's first-ranked option (the
highest value, ties as :meth:`pentadice.advisor.advice.Option.tie_key`), so the distribution's mean is the
table's expected score. Results from a state between turns are cached in the process (keyed on the rule set,
the values array and the state), since live win chances ask again and again.

Kiriki is refused: a five of a kind added to a filled Kiriki box repeats the turn, so the number of turns, and
the score, have no bound; see :data:`KIRIKI_REFUSAL`.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from pentadice import rules
from pentadice import sheet as sheet_module
from pentadice.sheet import Sheet
from pentadice.situation import Situation
from pentadice.turn_inputs import turn_inputs

PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
KIRIKI_REFUSAL = (
    "the exact score distribution is not available under {title}: a five of a kind added to a filled {box} box "
    "repeats the turn, so the number of turns and the score have no bound (not implemented)"
)
CHUNK = 64  # states whose turn outcomes are held at once (memory: CHUNK x 13 x 2 x points x 64 float64)
CACHE_SIZE = 256


class DistributionError(ValueError):
    """A situation whose distribution cannot be computed (Kiriki), or a table that does not fit the rules."""


@dataclass(frozen=True)
class Distribution:
    """``probs[i]`` is the probability that the final score is ``offset + i``; ``seconds`` the time it took."""

    offset: int
    probs: np.ndarray
    seconds: float = field(default=0.0, compare=False)

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
        return Distribution(self.offset + points, self.probs, self.seconds)


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
        return Distribution(so_far, np.ones(1), time.perf_counter() - start)
    V = _padded(values, rs)
    if hand < 0:
        gained = _cached(rs, V, values, ps, open_mask, u0, threads)
    else:
        gained = _propagate(rs, V, ps, open_mask, u0, hand, stage, threads)
    return Distribution(gained.offset + so_far, gained.probs, time.perf_counter() - start)


COMPILING_MESSAGE = "Compiling the distribution kernels (first run only, a few seconds)..."


def needs_compiling() -> bool:
    """Whether the forward kernels are not in Numba's cache yet (a first run: compiling takes seconds)."""
    from pentadice.compiled import cached
    from pentadice.solver import forward

    return not all(cached(f) for f in forward.COMPILED)


def compile_kernels() -> float:
    """Compile (or load from Numba's cache) the forward kernels, on a one-box game; returns the seconds taken."""
    start = time.perf_counter()
    rs = rules.PENTA_RULES
    V = _padded(np.zeros((2, 1 << rules.N_BOXES, 64)), rs)
    _propagate(rs, V, 1, 1 << rules.BOX_INDEX["chance"], 63, -1, -1, 1)
    return time.perf_counter() - start


def check_rules(rs: rules.RuleSet) -> None:
    """:class:`DistributionError` for a rule set whose distribution is not computed (Kiriki), with the reason."""
    if rs.penta_repeat:
        raise DistributionError(KIRIKI_REFUSAL.format(title=rs.title, box=rs.box_name("penta")))


_cache: OrderedDict = OrderedDict()
_cache_lock = threading.Lock()


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
    """The values as the 64-lane kernels read them: ``(2, 8192, 64)`` float64 (a reduced game's table has only
    ``threshold + 1`` lanes; the lanes added are NaN and never read for a reachable state)."""
    shape = (2, 1 << rules.N_BOXES)
    if values.shape[:2] != shape or values.shape[2] not in (rs.upper_threshold + 1, 64):
        raise DistributionError(f"a value table of {rs.name} is shaped (2, 8192, 64), not {values.shape}")
    if values.shape[2] == 64:
        V = np.ascontiguousarray(np.asarray(values), dtype=np.float64).view()
    else:
        V = np.full((*shape, 64), np.nan)
        V[:, :, : values.shape[2]] = values
    V.setflags(write=False)  # read-only, as a loaded table is: one compiled version of the kernels for both
    return V


@functools.cache
def _max_points(rs: rules.RuleSet) -> np.ndarray:
    """The most points each box can hold (0 for boxes the game lacks)."""
    out = np.zeros(rules.N_BOXES, dtype=np.int64)
    for box, pts in sheet_module.possible_points(rs).items():
        out[rules.BOX_INDEX[box]] = max(pts)
    return out


def _threads(threads: int | None) -> int:
    import numba

    return max(1, threads or numba.get_num_threads())


def _propagate(
    rs: rules.RuleSet, V: np.ndarray, ps: int, mask: int, u0: int, hand: int, stage: int, threads: int | None
) -> Distribution:
    """The distribution of the points gained from state ``(ps, mask)`` at subtotal ``u0`` (mid-turn if
    ``hand >= 0``), by forward propagation layer by layer."""
    from pentadice.solver import forward as fw

    n = rules.N_BOXES
    inputs = turn_inputs(rs)
    t = inputs.tables
    p = inputs.p
    n_threads = _threads(threads)
    max_points = _max_points(rs)
    n_points = int(max(max_points.max(), rs.dice * 6)) + 1
    start_sid = (ps << n) | mask
    hi = np.empty(2 << n, dtype=np.int64)
    lane_bits = np.empty(2 << n, dtype=np.uint64)
    fw.plan(p, rs.dice, max_points, start_sid, u0, hi, lane_bits)
    width = hi + 1
    # Lanes of each slot as a boolean matrix, and each state's layer (open boxes).
    bits = ((lane_bits[:, None] >> np.arange(64, dtype=np.uint64)[None, :]) & np.uint64(1)).astype(bool)
    sids = np.arange(2 << n)
    open_count = np.array([bin(m).count("1") for m in range(1 << n)] * 2)
    row_off = np.full((2 << n, 64), -1, dtype=np.int64)
    rlo = np.full((2 << n, 64), np.iinfo(np.int64).max // 4, dtype=np.int64)
    rhi = np.full((2 << n, 64), -1, dtype=np.int64)
    part = ((sids * 2654435761) >> 7) % n_threads
    part = part.astype(np.int64)
    k0 = bin(mask).count("1")
    layer_sids = {}
    pools = {}
    for k in range(k0, -1, -1):
        in_layer = sids[(open_count == k) & (lane_bits != 0)]
        layer_sids[k] = in_layer
    for k in range(k0, -1, -1):
        # Row offsets of the layer's slots in one flat pool.
        members = layer_sids[k]
        counts = bits[members].sum(axis=1) * width[members]
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(members) else np.zeros(0, dtype=np.int64)
        for s, base in zip(members, starts, strict=True):
            lanes_here = np.flatnonzero(bits[s])
            row_off[s, lanes_here] = base + np.arange(len(lanes_here)) * width[s]
    pools[k0] = np.zeros(int(row_off[layer_sids[k0]].max()) + int(width[layer_sids[k0]].max()) + 1)
    pools[k0][row_off[start_sid, u0]] = 1.0
    rlo[start_sid, u0] = 0
    rhi[start_sid, u0] = 0

    errors = np.zeros(1, dtype=np.int64)
    out = np.zeros((CHUNK, n, 2, n_points, 64))
    tlist = np.zeros((CHUNK, n * 2 * n_points), dtype=np.int64)
    ntouch = np.zeros(CHUNK, dtype=np.int64)
    pool = ThreadPoolExecutor(n_threads) if n_threads > 1 else None
    try:
        for k in range(k0, 0, -1):
            nxt = layer_sids[k - 1]
            size = int(row_off[nxt].max() + width[nxt].max() + 1) if len(nxt) else 1
            pools[k - 1] = np.zeros(size)
            src, dst = pools[k], pools[k - 1]
            members = layer_sids[k]
            for c0 in range(0, len(members), CHUNK):
                chunk = np.ascontiguousarray(members[c0 : c0 + CHUNK])
                m = len(chunk)
                mid = hand if (hand >= 0 and k == k0) else -1

                def outcomes(lo: int, hi_: int, chunk=chunk, mid=mid) -> None:
                    fw.chunk_outcomes(
                        V, p, rs.dice, t.counts, inputs.scores, t.add, t.subs, t.weight, t.subkeeps, chunk,
                        lo, hi_, rlo, rhi, mid, stage, out, tlist, ntouch, errors,
                    )  # fmt: skip

                def push(me: int, chunk=chunk, m=m, src=src, dst=dst) -> None:
                    fw.chunk_push(p, chunk, m, out, tlist, ntouch, src, dst, row_off, width, rlo, rhi, part, me, errors)

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
    # The end of the game: final = points gained = u - u0 + y.
    top = int(hi[layer_sids[0]].max()) + 64 if len(layer_sids[0]) else 1
    gained = np.zeros(top + 64 + 1)
    last = pools[0]
    for s in layer_sids[0]:
        for u in np.flatnonzero(bits[s]):
            if rhi[s, u] < rlo[s, u]:
                continue
            lo, hi_ = int(rlo[s, u]), int(rhi[s, u])
            o = int(row_off[s, u])
            gained[u + lo : u + hi_ + 1] += last[o + lo : o + hi_ + 1]
    nz = np.flatnonzero(gained)
    first, final = int(nz[0]), int(nz[-1])
    return Distribution(first - u0, gained[first : final + 1].copy())


def summary(dist: Distribution) -> dict:
    """``mean``, ``sd``, ``percentiles`` and ``tail`` as JSON data (see docs/distribution.md)."""
    return {
        "mean": dist.mean(),
        "sd": dist.sd(),
        "min": dist.min_score,
        "max": dist.max_score,
        "percentiles": dist.percentiles(),
        "tail": dist.tail(),
    }


FILE_FORMAT = "pentadice-distribution"


def report(
    rs: rules.RuleSet,
    dist: Distribution,
    sheet: Sheet,
    dice: Sequence[int] | None = None,
    rolls_left: int | None = None,
) -> dict:
    """The distribution as the JSON object of ``pentadice distribution --json``: ``rules``, ``sheet``,
    ``score_so_far``, (``dice``, ``rolls_left`` mid-turn), ``mean``, ``sd``, ``min``, ``max``, ``percentiles``
    (an object ``{"1": score, ...}``), ``tail`` (``[t, P(final >= t)]`` for every ``t`` from 0 to ``max``)."""
    out: dict = {"rules": rs.name, "sheet": sheet.as_dict(), "score_so_far": sheet.score(rs)}
    if dice is not None:
        out["dice"] = sorted(dice)
        out["rolls_left"] = rolls_left
    out.update(summary(dist))
    out["seconds"] = dist.seconds
    return out


def is_distribution_file(path) -> bool:
    """Whether ``path`` holds a distribution written by :func:`write` (which may then replace it)."""
    from pathlib import Path

    try:
        with open(Path(path), "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if head.startswith(b"PAR1"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            meta = pq.read_schema(path).metadata or {}
        except (OSError, ValueError, pa.ArrowException):
            return False
        return FILE_FORMAT.encode() in meta.get(b"pentadice", b"")
    return head.lstrip().startswith(b"{") and f'"format": "{FILE_FORMAT}"'.encode() in head


def file_kind(path: str) -> str:
    """``"parquet"`` or ``"json"`` from the file name's ending; ValueError for any other."""
    lower = path.lower()
    if lower.endswith((".parquet", ".pq")):
        return "parquet"
    if lower.endswith(".json"):
        return "json"
    raise ValueError(f"--out {path}: the file name must end in .parquet (Parquet) or .json (JSON)")


def write(target, rs: rules.RuleSet, dist: Distribution, meta: dict, kind: str) -> None:
    """Write the whole distribution to ``target`` (a checked :class:`pentadice.atomic.Target`) atomically: one row
    per score from the lowest to the highest possible, with ``score``, ``probability`` and ``p_at_least``
    (``P(final >= score)``); ``meta`` (the report without its tail) goes into the file's metadata."""
    from pentadice import atomic

    surv = np.cumsum(dist.probs[::-1])[::-1] / dist.total()
    head = {"format": FILE_FORMAT, **meta}
    if kind == "json":
        data = {
            **head,
            "offset": dist.offset,
            "scores": dist.scores.tolist(),
            "probability": dist.probs.tolist(),
            "p_at_least": np.minimum(surv, 1.0).tolist(),
        }
        text = json.dumps(data).encode()
        atomic.write_file(target, lambda fh: fh.write(text))
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pa.table(
        {
            "score": pa.array(dist.scores.astype(np.int32)),
            "probability": pa.array(dist.probs),
            "p_at_least": pa.array(np.minimum(surv, 1.0)),
        }
    ).replace_schema_metadata({"pentadice": json.dumps(head)})
    atomic.write_file(target, lambda fh: pq.write_table(arrow, fh, write_page_checksum=True))
