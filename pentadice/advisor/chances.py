"""Live chances: each player's probability of finishing first, from the score sheets as they stand and, during a
turn, the dice showing.

The players' dice are independent, so their final scores are independent: player ``i`` wins with probability
``sum_s P(X_i = s) * E[1 / (1 + ties) ; every other X_j <= s]``, ties split evenly (two players level on top
each get half). Each ``X_i`` is the sheet's score plus the points still to come from its state between turns,
whose exact distribution under optimal (expected-score) play comes from :func:`pentadice.advisor.distribution.
final_distribution` (forward propagation over states and scores, no sampling). That distribution depends only
on the state (boxes open, upper subtotal, Penta box scored), so it is computed once per state and kept
(:class:`Chances` holds a cache; a game changes one player's state per box, so one new distribution per box).

Where the rule set's chances table is held (:func:`use_table`: ``serve`` and ``play`` load it before the first
move; :mod:`pentadice.solver.remaining`), each state's distribution is a row of it, read in well under a
millisecond, and during a turn the current player's is its turn run forward from the dice showing
(:func:`pentadice.solver.remaining.mid_turn`, about a millisecond): no computation waits. Without the table
(not built yet, or Maxi Yatzy, which has none) the forward pass below computes each state's distribution once.

Where the exact distribution is refused (Kiriki's unbounded score; Maxi Yatzy's early states, too large for
the forward pass's memory limit: :mod:`pentadice.advisor.distribution`), the chances are unavailable
(:class:`ChancesUnavailable`, with the reason): the refusal of a state is remembered, so that a front end asking
after every box hears at once that there is nothing to show (no chances, no waiting) rather than waiting again.

Assumption: every player is taken to play ``optimal``. A ``win`` computer plays a riskier or safer policy whose
final-score distribution differs a little (same states, other choices); ``benchmarks/calibration.py`` measures
how well the predictions agree with outcomes (see ``docs/chances.md``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING

import numpy as np

from pentadice.game import rules
from pentadice.game.sheet import Sheet

if TYPE_CHECKING:
    from pentadice.solver.remaining import Remaining

CACHE_STATES = 4096  # remaining-score distributions kept (a 6-player game of 20 boxes visits at most 6 x 20 + 1)

# (offset, probs): probs[k] is the probability that the score is offset + k.
Spread = tuple[int, np.ndarray]
Source = Callable[[rules.RuleSet, np.ndarray, Sheet], Spread]


class ChancesUnavailable(RuntimeError):
    """The exact distributions the chances need cannot be computed here (the distribution module is missing)."""


def state_of(rs: rules.RuleSet, sheet: Sheet) -> tuple[int, int, bool]:
    """The state between turns that ``sheet`` implies: open boxes, capped upper subtotal, Penta box scored."""
    return sheet.open_mask(rs), sheet.upper_subtotal(rs), sheet.penta_scored(rs)


def check_available(rs: rules.RuleSet) -> None:
    """ChancesUnavailable, with the reason, where the exact distributions are not computed (Kiriki: the score
    has no bound)."""
    try:
        from pentadice.advisor.distribution import DistributionError, check_rules
    except ImportError as e:
        raise ChancesUnavailable(f"win chances need pentadice.advisor.distribution: {e}") from None
    try:
        check_rules(rs)
    except DistributionError as e:
        raise ChancesUnavailable(str(e)) from None


def exact_final(rs: rules.RuleSet, values: np.ndarray, sheet: Sheet) -> Spread:
    """The exact distribution of ``sheet``'s final score under optimal play (the distribution module's)."""
    try:
        from pentadice.advisor.distribution import DistributionError, final_distribution
    except ImportError as e:
        raise ChancesUnavailable(f"win chances need pentadice.advisor.distribution: {e}") from None
    try:
        dist = final_distribution(rs, values, sheet)
    except DistributionError as e:  # Kiriki: the score has no bound
        raise ChancesUnavailable(str(e)) from None
    return int(dist.offset), np.asarray(dist.probs, dtype=np.float64)


class Chances:
    """Win chances of one rule set and value table, with the remaining-score distribution of each state seen
    kept (least recently used dropped past :data:`CACHE_STATES`). ``source``: the final-score distribution of
    a sheet (default :func:`exact_final`; tests pass a brute force). Thread-safe.

    The distributions are computed one at a time by a background worker (a daemon thread: a program that ends
    does not wait for it), the last asked first, so that a front end can ask without waiting (:meth:`known`)
    and show the chances when they are ready, or wait for them (:meth:`win_chances`). Two requests for one
    state share one computation. A state whose distribution was refused (:class:`ChancesUnavailable`) is
    remembered as refused: asked again, it raises at once."""

    def __init__(
        self, rs: rules.RuleSet, values: np.ndarray, source: Source | None = None, table: Remaining | None = None
    ) -> None:
        self.rules, self.values = rs, values
        self.source = source or exact_final
        self.table = table  # the chances table: every state's distribution a lookup
        self._padded: np.ndarray | None = None
        self._cache: OrderedDict[tuple, Spread] = OrderedDict()
        self._pending: dict[tuple, Future] = {}
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._todo: list[tuple[Sheet, tuple, Future]] = []  # the last asked is computed first
        self._refused: dict[tuple, str] = {}  # state -> why its distribution is not computed
        self._worker: threading.Thread | None = None
        self.computed = 0  # distributions computed (not found in the cache)

    def _found(self, key: tuple) -> Spread | None:
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
            return found

    def _future(self, sheet: Sheet, key: tuple) -> Future:
        """The computation of ``key``'s distribution: the one under way, or a new one queued."""
        with self._lock:
            future = self._pending.get(key)
            if future is None:
                future = self._pending[key] = Future()
                self._todo.append((sheet, key, future))
                self._wake.notify()
                if self._worker is None:
                    self._worker = threading.Thread(target=self._work, name="pentadice-chances", daemon=True)
                    self._worker.start()
            return future

    def _work(self) -> None:
        while True:
            with self._wake:
                while not self._todo:
                    self._wake.wait()
                sheet, key, future = self._todo.pop()
            try:
                offset, probs = self.source(self.rules, self.values, sheet)
                found = (offset - sheet.score(self.rules), np.asarray(probs, dtype=np.float64))
            except BaseException as e:  # handed to whoever waits
                with self._lock:
                    del self._pending[key]
                    if isinstance(e, ChancesUnavailable):
                        self._refused[key] = str(e)
                future.set_exception(e)
                continue
            with self._lock:
                self.computed += 1
                self._cache[key] = found
                while len(self._cache) > CACHE_STATES:
                    self._cache.popitem(last=False)
                del self._pending[key]
            future.set_result(found)

    def _check_refused(self, keys: list[tuple]) -> None:
        """ChancesUnavailable, with the reason, if the distribution of one of these states was refused."""
        with self._lock:
            reason = next((self._refused[k] for k in keys if k in self._refused), None)
        if reason is not None:
            raise ChancesUnavailable(reason)

    def remaining(self, sheet: Sheet, wait: bool = True) -> Spread | None:
        """The distribution of the points still to come from ``sheet``'s state; with ``wait`` false, None
        while it is being computed (it is queued)."""
        rs = self.rules
        if len(sheet.boxes) == len(rs.boxes):
            return 0, np.ones(1)
        key = state_of(rs, sheet)
        if self.table is not None:
            mask, sub, flag = key
            return self.table.row(int(flag), mask, sub)
        found = self._found(key)
        if found is not None:
            return found
        self._check_refused([key])
        future = self._future(sheet, key)
        if not wait:
            return None
        return future.result()

    def final(self, sheet: Sheet) -> Spread:
        """The distribution of ``sheet``'s final score."""
        offset, probs = self.remaining(sheet)
        return offset + sheet.score(self.rules), probs

    def win_chances(self, sheets: Sequence[Sheet]) -> list[float]:
        """Each player's probability of finishing first (ties split evenly), waiting for the distributions;
        they sum to 1. ChancesUnavailable where they cannot be computed."""
        if self.source is exact_final:
            check_available(self.rules)
        return combine([self.final(s) for s in sheets])

    def during_turn(self, sheets: Sequence[Sheet], current: int, dice: Sequence[int], rolls_left: int) -> list[float]:
        """Each player's probability of finishing first while player ``current`` has ``dice`` showing with
        ``rolls_left`` rerolls left (its sheet ``sheets[current]``, before this turn's box), the others between
        turns. Needs the chances table (:attr:`table`); ChancesUnavailable without it."""
        from pentadice.solver import remaining
        from pentadice.solver.turn_inputs import turn_inputs

        if self.table is None:
            raise ChancesUnavailable(f"no chances table of {self.rules.name} is held")
        rs = self.rules
        sheet = sheets[current]
        if self._padded is None:
            self._padded = remaining.padded_values(rs, self.values)
        hand = turn_inputs(rs).tables.keep_of(sorted(int(d) for d in dice))
        mask, sub, flag = state_of(rs, sheet)
        lo, probs = remaining.mid_turn(self.table, self._padded, int(flag), mask, sub, hand, int(rolls_left))
        spreads = [self.final(s) for s in sheets]
        spreads[current] = (lo + sheet.score(rs), probs)
        return combine(spreads)

    def known(self, sheets: Sequence[Sheet], queue: bool = True) -> list[float] | None:
        """:meth:`win_chances` if every distribution is at hand; else None, the missing ones queued unless
        ``queue`` is false (a failed computation is tried again when asked again). ChancesUnavailable where
        they cannot be computed."""
        if self.table is not None:
            return combine([self.final(s) for s in sheets])
        if self.source is exact_final:
            check_available(self.rules)
        self._check_refused([state_of(self.rules, s) for s in sheets if len(s.boxes) < len(self.rules.boxes)])
        if not queue:
            with self._lock:
                done = self._cache.keys()
                if any(len(s.boxes) < len(self.rules.boxes) and state_of(self.rules, s) not in done for s in sheets):
                    return None
        spreads = [self.remaining(s, wait=False) for s in sheets]
        if any(sp is None for sp in spreads):
            return None
        return combine([(o + s.score(self.rules), p) for (o, p), s in zip(spreads, sheets, strict=True)])


_instances: dict[tuple[str, int], Chances] = {}
_instances_lock = threading.Lock()
_tables: dict[tuple[str, int], tuple[Remaining, np.ndarray]] = {}


def use_table(rs: rules.RuleSet, values: np.ndarray, table: Remaining) -> None:
    """From now on, the chances of ``rs`` under the value table ``values`` are read from its chances ``table``."""
    key = (rs.name, id(values))
    with _instances_lock:
        _tables[key] = (table, values)  # holding ``values`` keeps its id from being reused
        _instances.pop(key, None)


def table_of(rs: rules.RuleSet, values: np.ndarray) -> Remaining | None:
    """The chances table held for ``rs`` and ``values`` (:func:`use_table`), or None."""
    with _instances_lock:
        return _held_table((rs.name, id(values)), values)


def _held_table(key: tuple[str, int], values: np.ndarray) -> Remaining | None:
    """:func:`table_of`, the lock held by the caller."""
    found = _tables.get(key)
    return found[0] if found is not None and found[1] is values else None


def chances_of(rs: rules.RuleSet, values: np.ndarray) -> Chances:
    """The shared :class:`Chances` of a rule set and table (one cache per table, for every game), reading the
    chances table where one is held."""
    key = (rs.name, id(values))
    with _instances_lock:
        found = _instances.get(key)
        if found is None or found.values is not values or found.rules != rs:
            found = _instances[key] = Chances(rs, values, table=_held_table(key, values))
    return found


def win_chances(
    rs: rules.RuleSet, values: np.ndarray, sheets: Sequence[Sheet], source: Source | None = None
) -> list[float]:
    """Each player's probability of finishing first from ``sheets`` (between turns), every player playing
    optimal and ties split evenly; the distributions are cached per state (see :class:`Chances`)."""
    chances = chances_of(rs, values) if source is None else Chances(rs, values, source)
    return chances.win_chances(sheets)


def known_chances(
    rs: rules.RuleSet, values: np.ndarray, sheets: Sequence[Sheet], queue: bool = True
) -> list[float] | None:
    """:func:`win_chances` if every distribution is at hand, else None (the missing ones computed in the
    background unless ``queue`` is false: ask again). ChancesUnavailable where they cannot be computed."""
    return chances_of(rs, values).known(sheets, queue)


def combine(spreads: Sequence[Spread]) -> list[float]:
    """P(each wins) from independent final-score distributions ``(offset, probs)``, ties split evenly: for
    each score ``s`` of player ``i``, the product over the others of ``P(X_j < s) + P(X_j = s) z`` counts
    the ways ``k`` others tie on ``s`` (coefficient of ``z**k``), each worth ``1 / (k + 1)``."""
    n = len(spreads)
    if n == 0:
        return []
    lo = min(o for o, _ in spreads)
    hi = max(o + len(p) for o, p in spreads)
    grid = np.zeros((n, hi - lo))
    for i, (offset, probs) in enumerate(spreads):
        grid[i, offset - lo : offset - lo + len(probs)] = probs
    grid /= grid.sum(axis=1, keepdims=True)
    below = np.cumsum(grid, axis=1) - grid  # P(X_j < s)
    out = []
    for i in range(n):
        poly = [np.ones(hi - lo)]  # coefficients of z**0, z**1, ... as functions of s
        for j in range(n):
            if j == i:
                continue
            nxt = [poly[0] * below[j]]
            for k in range(1, len(poly)):
                nxt.append(poly[k] * below[j] + poly[k - 1] * grid[j])
            nxt.append(poly[-1] * grid[j])
            poly = nxt
        share = sum(c / (k + 1) for k, c in enumerate(poly))
        out.append(float(np.dot(grid[i], share)))
    return out
