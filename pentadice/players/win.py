"""The ``win`` strategy: play each turn for the best chance of finishing first, not for the most points.

Each turn the player picks a risk parameter theta from every player's current total, the expected points
still to come (the value table) and their variance, as Delta Yatzy does for Scandinavian Yatzy:

    theta = SCALE * (E_best_opponent - E_me) / (Var_me + Var_best_opponent)

(behind: theta > 0, seek risk; ahead: theta < 0, play safe), rounded to the nearest point of a grid, and plays
the whole turn by that theta's exponential-utility table (:mod:`pentadice.solver.utility`), which maximises
``sign(theta) * E[exp(theta * R)]``. Theta 0 is the value table: the optimal (expected-score) player's moves.
The other players are assumed to play optimal. This approximates the chance of winning, it does not compute it:
how much it wins is measured by the multiplayer simulator (``docs/win.md``).

In its last turns (at most :data:`ENDGAME_BOXES` boxes open for it and every other player) it plays by the
end-game table against the other players' exact final-score distributions instead
(:mod:`pentadice.players.lastturns`). The theta tables and the end-game table are saved beside the value
table (``NAME.win.npy``, ``NAME.win-end-K.npy``, each with its metadata) and read back when they belong to
the value table in use.

The variance of the points still to come under optimal play comes from :mod:`pentadice.players.win_variance`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pentadice.game import rules
from pentadice.game.moves import Keep, Move, Score
from pentadice.game.sheet import Sheet
from pentadice.game.situation import Situation
from pentadice.players.win_variance import VARIANCE_THETA, cumulant_variance, cumulants, exact_variance, saved_variance
from pentadice.solver.turn_inputs import turn_inputs
from pentadice.tables import win_tables

# The thetas a turn may be played with (theta 0, the value table, is always the first table).
GRID = (0.002, 0.004, 0.007, 0.01, 0.015, 0.02, 0.03, 0.05)
ENDGAME_LANES = 512  # the end-game table's lanes (pentadice.solver.utility.TARGET_LANES, without importing Numba)
SCALE = 0.5  # the formula's factor: measured best among those tried (docs/win.md)
ENDGAME_BOXES = 4  # at most this many boxes open, for the player and every other: the last turns' rule


MAX_TABLE_BYTES = 2_000_000_000  # the theta tables and the end-game table together, at most (see refusal)
MAX_ENDGAME_BYTES = 2_000_000_000  # an end-game table built in memory when first needed, at most (Maxi Yatzy: 1.93 GB)


def table_bytes(rs: rules.RuleSet, grid: tuple[float, ...] = GRID, max_open: int = ENDGAME_BOXES) -> tuple[int, int]:
    """``(theta tables, end-game table)``: the bytes of float64 the win strategy holds for ``rs``."""
    flags, masks, subs = rs.n_flags, 1 << rs.n_boxes, rs.upper_threshold + 1
    thetas = 2 * len(grid)  # at most (Kiriki drops some risk-seeking ones); no Numba import for a quick check
    theta_bytes = thetas * flags * masks * rs.lanes * 8
    n = len(rs.boxes)
    end_masks = sum(math.comb(n, k) for k in range(min(max_open, n) + 1))
    return theta_bytes, end_masks * flags * subs * ENDGAME_LANES * 8


def too_large(rs: rules.RuleSet) -> str | None:
    """Why the win strategy's tables of ``rs`` are not built in memory (too large), or None."""
    theta_bytes, end_bytes = table_bytes(rs)
    if theta_bytes + end_bytes <= MAX_TABLE_BYTES:
        return None
    return (
        f"the win strategy's tables of {rs.title} are too large to build in memory ({2 * len(GRID)} theta "
        f"tables of 2**{rs.n_boxes} = {1 << rs.n_boxes:,} box masks x {rs.lanes} subtotals, "
        f"{theta_bytes / 1e9:,.1f} GB; the limit is {MAX_TABLE_BYTES / 1e9:,.0f} GB)"
    )


def refusal(rs: rules.RuleSet, directory: Path | str | None = None) -> str | None:
    """Why ``win`` cannot play under ``rs``, or None. Penta's tables (134 MB of theta tables, a 573 MB end-game
    table) and Yatzy's are built in memory when first needed; Maxi Yatzy's (12.7 GB) only out of core, by
    ``pentadice build`` (:mod:`pentadice.cluster`), into the table directory ``directory`` (default: the
    default one), where ``win`` then finds them."""
    reason = too_large(rs)
    if reason is None:
        return None
    from pentadice.support import paths
    from pentadice.tables import win_store as store

    where = paths.data_dir(None) if directory is None else Path(directory)
    if store.finished_meta(rs, where) is not None:
        return None
    return f"{reason}: build them out of core first with {store.build_hint(rs, where)}"


def endgame_boxes(rs: rules.RuleSet) -> int:
    """The open boxes of the last turns' rule for ``rs``: :data:`ENDGAME_BOXES`, or 0 (no end-game table) where
    the table would outgrow :data:`MAX_ENDGAME_BYTES` in memory (Maxi Yatzy's is 1.93 GB: built, in about 3
    minutes on 2 threads): its win player then plays its thetas to the end."""
    return ENDGAME_BOXES if table_bytes(rs)[1] <= MAX_ENDGAME_BYTES else 0


def padded(rs: rules.RuleSet, a: np.ndarray) -> np.ndarray:
    """A table ``(n_flags, 2**n_boxes, threshold + 1)`` (as saved) or already ``rs.lanes`` wide, as the kernels
    read it: float64, ``rs.lanes`` lanes (the lanes added are NaN, never read for a state that can occur)."""
    a = np.asarray(a, dtype=np.float64)
    shape = (rs.n_flags, 1 << rs.n_boxes)
    if a.shape[:2] != shape or a.shape[2] not in (rs.upper_threshold + 1, rs.lanes) or a.ndim != 3:
        raise ValueError(f"a table of {rs.name} has shape {(*shape, rs.upper_threshold + 1)}, not {a.shape}")
    if a.shape[2] == rs.lanes:
        return np.ascontiguousarray(a)
    out = np.full((*shape, rs.lanes), np.nan)
    out[:, :, : a.shape[2]] = a
    return out


@dataclass(frozen=True, eq=False)
class WinTables:
    """Everything the win strategy reads: ``tables[i]`` is the table of ``thetas[i]`` (index 0: theta 0, the
    value table), ``variance`` the variance of the points still to come under optimal play, per state."""

    rules: rules.RuleSet
    thetas: np.ndarray
    tables: np.ndarray  # (n, n_flags, 2**n_boxes, lanes): Penta (n, 2, 8192, 64)
    variance: np.ndarray  # (n_flags, 2**n_boxes, lanes)
    scale: float
    build_seconds: float
    variance_source: str = "second moments"
    origin: str = "built"  # "file": the theta tables were read from the table directory

    @property
    def values(self) -> np.ndarray:
        return self.tables[0]

    def pick(self, e_me: np.ndarray, var_me: np.ndarray, e_opp: np.ndarray, var_opp: np.ndarray) -> np.ndarray:
        """The table index of each player (arrays of the same shape): the grid point nearest to
        ``scale * (e_opp - e_me) / (var_me + var_opp)``."""
        spread = np.maximum(var_me + var_opp, 1e-9)
        theta = self.scale * (e_opp - e_me) / spread
        order = np.argsort(self.thetas)
        ordered = self.thetas[order]
        mids = (ordered[1:] + ordered[:-1]) / 2
        return order[np.searchsorted(mids, theta)]


_cache: dict[tuple, tuple[WinTables, np.ndarray]] = {}
_lock = threading.Lock()  # guards _key_locks only: a table's build holds its own key's lock
_key_locks: dict[tuple, threading.Lock] = {}


def _key_lock(key: tuple) -> threading.Lock:
    """The lock of one cached table: two asking for it build it once, while a game reading another rule set's
    (already cached) tables never waits for this build."""
    with _lock:
        return _key_locks.setdefault(key, threading.Lock())


_endgames: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def endgame(
    rs: rules.RuleSet,
    max_open: int = ENDGAME_BOXES,
    threads: int = 1,
    directory: Path | str | None = None,
    values: np.ndarray | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The exact end-game tables (:func:`pentadice.solver.utility.solve_endgame`, ``progress`` called after each
    layer), cached in memory; read from the table directory when saved there for these ``values``, else built
    and saved there (when writable)."""
    from pentadice.players import lastturns
    from pentadice.solver import utility

    key = (rs, max_open)
    found = _endgames.get(key)
    if found is not None:
        return found
    with _key_lock(("endgame", *key)):
        if key not in _endgames:
            found = None
            params = {"max_open": int(max_open), "lanes": utility.TARGET_LANES}
            use_files = directory is not None and values is not None
            if use_files:
                saved = win_tables.load_saved(rs, directory, win_tables.ENDGAME_KIND, values, params)
                if saved is not None:
                    rowix = lastturns.endgame_rows(rs, max_open)
                    want = (int((rowix >= 0).sum()), rs.n_flags, rs.upper_threshold + 1, utility.TARGET_LANES)
                    if saved.shape == want:
                        found = (saved, rowix)
            if found is None:
                found = utility.solve_endgame(rs, max_open, threads, progress)
                if use_files:
                    win_tables.save_quietly(rs, directory, win_tables.ENDGAME_KIND, found[0], values, params)
            _endgames[key] = found
        return _endgames[key]


def stored_thetas(rs: rules.RuleSet) -> tuple[float, ...]:
    """The thetas of the tables built out of core (:mod:`pentadice.tables.win_store`), slot by slot: 0 (the
    value table), the grid (:func:`grid_thetas`), then ``+h`` and ``-h`` of the variance (:func:`cumulant_variance`)."""
    return (*(float(t) for t in grid_thetas(rs)), VARIANCE_THETA, -VARIANCE_THETA)


def grid_thetas(rs: rules.RuleSet, grid: tuple[float, ...] = GRID) -> np.ndarray:
    """Theta 0 then +- each grid point (Kiriki: the risk-seeking side capped where its fixed point exists)."""
    from pentadice.solver.utility import MAX_KIRIKI_THETA

    positive = [t for t in grid if not rs.penta_repeat or t <= MAX_KIRIKI_THETA]
    return np.array([0.0, *positive, *(-t for t in grid)])


def build(
    rs: rules.RuleSet,
    values: np.ndarray,
    grid: tuple[float, ...] = GRID,
    scale: float = SCALE,
    threads: int = 1,
    directory: Path | str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> WinTables:
    """The win strategy's tables for ``rs`` and its value table (each theta one backward solve, ``progress``
    called after each), cached in memory per rule set, value table and grid. The variances come from the
    second moments saved beside the table in ``directory`` when they are there, else are computed."""
    key = (rs, id(values), tuple(grid), scale)
    found = _cache.get(key)
    if found is not None:
        return found[0]
    with _key_lock(key):
        found = _cache.get(key)
        if found is not None:
            return found[0]
        from pentadice.solver import utility

        start = time.perf_counter()
        reason = too_large(rs)
        if reason:  # built out of core beforehand (pentadice build), or not at all
            stored = _from_store(rs, values, grid, scale, directory, start)
            if stored is None:
                raise ValueError(refusal(rs, directory) or reason)
            _cache[key] = (stored, values)
            return stored
        V = padded(rs, values)
        thetas = grid_thetas(rs, grid)
        tables = np.empty((len(thetas), *V.shape))
        tables[0] = V
        params = {"thetas": [float(x) for x in thetas[1:]]}
        saved = (
            win_tables.load_saved(rs, directory, win_tables.THETA_KIND, V, params) if directory is not None else None
        )
        if saved is not None and saved.shape == (len(thetas) - 1, *V.shape):
            tables[1:] = saved
            origin = "file"
        else:
            for i, theta in enumerate(thetas[1:], 1):
                tables[i] = utility.solve_theta(rs, float(theta), threads)
                if progress is not None:
                    progress(i, len(thetas) - 1)
            origin = "built"
            if directory is not None:
                win_tables.save_quietly(rs, directory, win_tables.THETA_KIND, tables[1:], V, params)
        variance = saved_variance(rs, values, directory) if directory is not None else None
        source = "second moments"
        if variance is None:
            variance = exact_variance(rs, values, threads, directory)
        if variance is None:
            variance, source = cumulant_variance(rs, threads), "cumulants"
        variance = np.where(np.isnan(V), np.nan, padded(rs, variance))
        found = WinTables(rs, thetas, tables, variance, scale, time.perf_counter() - start, source, origin)
        _cache[key] = (found, values)  # holding ``values`` keeps its id from being reused
        return found


def _from_store(
    rs: rules.RuleSet, values: np.ndarray, grid: tuple[float, ...], scale: float, directory, start: float
) -> WinTables | None:
    """The win tables built out of core (``pentadice build``) in ``directory`` for ``values``, memory-mapped and
    checked whole (for the rule sets whose tables are too large to build in memory: :func:`too_large`), or None
    where there are none (or of another grid). StoreError (a TableError) when damaged.
    The variance: from the second moments when saved, else from the store's two tables of ``+-h``."""
    if directory is None:
        return None
    from pentadice.tables import win_store as store

    opened = store.open_win(rs, directory, values)
    thetas = grid_thetas(rs, grid)
    n = len(thetas)
    if opened is None or len(opened.thetas) != n + 2 or not np.array_equal(opened.thetas[:n], thetas):
        return None
    tables = opened.array[:n]
    variance, source = saved_variance(rs, values, directory), "second moments"
    if variance is None:
        variance, source = cumulants(opened.array[n], opened.array[n + 1], float(opened.thetas[n])), "cumulants"
    variance = np.where(np.isnan(tables[0]), np.nan, padded(rs, variance))
    return WinTables(rs, thetas, tables, variance, scale, time.perf_counter() - start, source, "store")


def sheet_outlook(rs: rules.RuleSet, tables: WinTables, sheet: Sheet) -> tuple[float, float]:
    """``(expected final score, variance)`` of a player's sheet under optimal play from now."""
    mask = sheet.open_mask(rs)
    flag = int(sheet.penta_scored(rs))
    sub = sheet.upper_subtotal(rs)
    return sheet.score(rs) + float(tables.values[flag, mask, sub]), float(tables.variance[flag, mask, sub])


class WinStrategy:
    """The ``win`` player's decisions, one at a time (interactive play): ``choose(situation, my_sheet, others)``.

    ``directory`` (the table directory): the tables are read from it when saved there for these values, else
    built on first use (about one value solve per theta) and saved there when it can be written."""

    def __init__(self, rs: rules.RuleSet, values: np.ndarray, directory: Path | str | None = None) -> None:
        self.rules = rs
        self.values = values
        self.directory = directory
        self.max_open = endgame_boxes(rs)
        self._tables: WinTables | None = None

    @property
    def tables(self) -> WinTables:
        if self._tables is None:
            import numba

            threads = numba.get_num_threads()
            self._tables = build(self.rules, self.values, threads=threads, directory=self.directory)
        return self._tables

    def theta(self, my_sheet: Sheet, others: list[Sheet]) -> float:
        """The theta this turn is played with."""
        return float(self.tables.thetas[self._index(my_sheet, others)])

    def _endgame_move(self, situation: Situation, my_sheet: Sheet, others: list[Sheet]) -> Move | None:
        """The last turns' move (:mod:`pentadice.players.lastturns`), or None where that rule does not apply."""
        from pentadice.players import lastturns

        weights = last_turns_weights(self.rules, self.values, my_sheet, others, self.max_open)
        if weights is None:
            return None
        import numba

        Wt, rowix = endgame(self.rules, self.max_open, numba.get_num_threads(), self.directory, self.values)
        ti = turn_inputs(self.rules)
        tab = ti.tables
        p, n_dice, _, counts, scores, add, subs = ti.turn()
        mask, flag = my_sheet.open_mask(self.rules), int(my_sheet.penta_scored(self.rules))
        sub = my_sheet.upper_subtotal(self.rules)
        lanes = Wt.shape[3]
        L = np.empty((self.rules.rolls, tab.n_keeps, lanes))
        K = np.empty((tab.n_keeps, lanes))
        B = np.empty((tab.n_keeps, lanes))
        points = np.empty(self.rules.n_boxes, dtype=np.int64)
        from pentadice.solver import utility

        utility.target.target_turn_values(
            Wt, rowix, p, n_dice, counts, scores, add, subs, mask, flag, sub, L, K, B, points
        )
        hand = tab.keep_of(situation.dice)
        if situation.rolls_left > 0:
            choice = lastturns.best_keep(L, weights, hand, situation.rolls_left, tab.subkeeps)
            if choice >= 0:
                return Keep(tab.keep_faces[choice])
        box = lastturns.best_box(Wt, rowix, p, counts[hand], mask, flag, sub, weights, points)
        return Score(self.rules.box_ids[box])

    def _index(self, my_sheet: Sheet, others: list[Sheet]) -> int:
        rs, t = self.rules, self.tables
        if not others:
            return 0
        e_me, var_me = sheet_outlook(rs, t, my_sheet)
        outlooks = [sheet_outlook(rs, t, s) for s in others]
        e_opp, var_opp = max(outlooks, key=lambda o: o[0])
        return int(t.pick(np.array([e_me]), np.array([var_me]), np.array([e_opp]), np.array([var_opp]))[0])

    def choose(self, situation: Situation, my_sheet: Sheet, others: list[Sheet]) -> Move:
        """The move of the win player in ``situation`` (its dice and rerolls; ``my_sheet`` its sheet),
        against the other players' sheets ``others``."""
        from pentadice.solver import utility

        rs, t = self.rules, self.tables
        move = self._endgame_move(situation, my_sheet, others)
        if move is not None:
            return move
        i = self._index(my_sheet, others)
        theta = float(t.thetas[i])
        ti = turn_inputs(rs)
        tab = ti.tables
        p, n_dice, _, counts, scores, add, subs = ti.turn()
        mask = my_sheet.open_mask(rs)
        flag = int(my_sheet.penta_scored(rs))
        sub = my_sheet.upper_subtotal(rs)
        L = np.empty((rs.rolls, tab.n_keeps, rs.lanes))
        rows = np.zeros((rs.n_rows, rs.lanes))
        K = np.empty((tab.n_keeps, rs.lanes))
        B = np.empty((tab.n_keeps, rs.lanes))
        points = np.empty(rs.n_boxes, dtype=np.int64)
        utility.wide_for(rs.lanes).theta_turn_values(
            t.tables[i], theta, p, n_dice, counts, scores, add, subs, mask, flag, L, rows, K, B
        )
        hand = tab.keep_of(situation.dice)
        r = situation.rolls_left
        if r > 0:  # as the simulator: keep the best sub-keep if it beats scoring now
            best, choice = L[0, hand, sub], -1
            for kept in tab.subkeeps[hand]:
                if kept < 0:
                    break
                if L[r, kept, sub] > best:
                    best, choice = L[r, kept, sub], int(kept)
            if choice >= 0:
                return Keep(tab.keep_faces[choice])
        return Score(rs.box_ids[best_box(p, counts[hand], mask, flag, theta, rows, sub, points)])


def last_turns_weights(
    rs: rules.RuleSet, values: np.ndarray, my_sheet: Sheet, others: list[Sheet], max_open: int = ENDGAME_BOXES
) -> np.ndarray | None:
    """``q[d]``, the probability that the best other final total is ``d`` points above this player's total
    (:func:`pentadice.players.lastturns.mixture`), when the last turns' rule applies: not Kiriki, at most
    ``max_open`` boxes open for this player (at least one) and every other player, the best other final total
    still within reach and less than the end-game table's lanes ahead. Else None."""
    from pentadice.players import lastturns
    from pentadice.solver.utility import TARGET_LANES

    if rs.unbounded or not others or max_open < 1:
        return None
    if not 0 < bin(my_sheet.open_mask(rs)).count("1") <= max_open:
        return None
    if any(bin(s.open_mask(rs)).count("1") > max_open for s in others):
        return None
    opp = lastturns.opponents(rs, values, max_open)
    rows = opp.rows(
        np.array([int(s.penta_scored(rs)) for s in others]),
        np.array([s.open_mask(rs) for s in others]),
        np.array([s.upper_subtotal(rs) for s in others]),
    )
    mine = my_sheet.score(rs)
    totals = np.array([s.score(rs) for s in others], dtype=np.int64)
    if (totals + opp.top[rows]).max() < mine or totals.max() - mine >= TARGET_LANES:
        return None
    q = np.empty(TARGET_LANES)
    lastturns.mixture(opp.C, rows, mine - totals, len(others), q)
    return q


def best_box(p, hand_counts, mask: int, flag: int, theta: float, rows: np.ndarray, sub: int, points) -> int:
    """The box the win player fills (the simulator's rule, first best box on ties)."""
    from pentadice.solver import kernels

    bonus = kernels.wide.score_options(p, hand_counts, mask, flag, points)
    box, best = -1, 0.0
    for b in range(int(p[rules.P_N_BOXES])):
        pts = int(points[b])
        if pts < 0:
            continue
        row = rules.successor_row(p, b, pts)
        g = float(pts + bonus)
        value = rows[row, sub] + g if theta == 0.0 else rows[row, sub] * math.exp(theta * g)
        if box < 0 or value > best:
            box, best = b, value
    return box
