"""The ``win`` strategy: play each turn for the best chance of finishing first, not for the most points.

Each turn the player picks a risk parameter theta from every player's current total, the expected points
still to come (the value table) and their variance, as Delta Yatzy does for Scandinavian Yatzy:

    theta = SCALE * (E_best_opponent - E_me) / (Var_me + Var_best_opponent)

(behind: theta > 0, seek risk; ahead: theta < 0, play safe), rounded to the nearest point of a grid, and plays
the whole turn by that theta's exponential-utility table (:mod:`pentadice.solver.utility`), which maximises
``sign(theta) * E[exp(theta * R)]``. Theta 0 is the value table: the optimal (expected-score) player's moves.
The other players are assumed to play optimal. This approximates the chance of winning, it does not compute it:
how much it wins is measured by the multiplayer simulator (``docs/win.md``).

The variance of the points still to come under optimal play is read from the cumulant generating function of
two utility tables of a very small theta ``h``: ``log E[exp(hR)] + log E[exp(-hR)] = h^2 Var(R) + O(h^4)``.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pentadice import rules
from pentadice.moves import Keep, Move, Score
from pentadice.sheet import Sheet
from pentadice.situation import Situation
from pentadice.turn_inputs import turn_inputs

# The thetas a turn may be played with (theta 0, the value table, is always the first table).
GRID = (0.002, 0.004, 0.007, 0.01, 0.015, 0.02, 0.03, 0.05)
SCALE = 0.5  # the formula's factor: measured best among those tried (docs/win.md)
ENDGAME_BOXES = 1  # with every opponent finished and at most this many boxes open: the exact end game
VARIANCE_THETA = 0.0005  # h of the variance's cumulant estimate


def refusal(rs: rules.RuleSet) -> str | None:
    """Why ``win`` cannot play under ``rs``, or None (every rule set is supported)."""
    return None


@dataclass(frozen=True, eq=False)
class WinTables:
    """Everything the win strategy reads: ``tables[i]`` is the table of ``thetas[i]`` (index 0: theta 0, the
    value table), ``variance`` the variance of the points still to come under optimal play, per state."""

    rules: rules.RuleSet
    thetas: np.ndarray
    tables: np.ndarray  # (n, 2, 2**13, 64)
    variance: np.ndarray  # (2, 2**13, 64)
    scale: float
    build_seconds: float
    variance_source: str = "second moments"

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
_lock = threading.Lock()


_endgames: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def endgame(rs: rules.RuleSet, max_open: int = ENDGAME_BOXES, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The exact end-game tables (:func:`pentadice.solver.utility.solve_endgame`), cached in memory."""
    from pentadice.solver import utility

    key = (rs, max_open)
    with _lock:
        if key not in _endgames:
            _endgames[key] = utility.solve_endgame(rs, max_open, threads)
        return _endgames[key]


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
) -> WinTables:
    """The win strategy's tables for ``rs`` and its value table (each theta one backward solve), cached in
    memory per rule set, value table and grid. The variances come from the second moments saved beside the
    table in ``directory`` when they are there, else are computed."""
    key = (rs, id(values), tuple(grid), scale)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            return found[0]
        from pentadice.solver import utility

        start = time.perf_counter()
        V = np.ascontiguousarray(values, dtype=np.float64)
        if V.shape != (2, 1 << rules.N_BOXES, utility.LANES):
            raise ValueError(f"a value table has shape (2, {1 << rules.N_BOXES}, {utility.LANES}), not {V.shape}")
        thetas = grid_thetas(rs, grid)
        tables = np.empty((len(thetas), *V.shape))
        tables[0] = V
        for i, theta in enumerate(thetas[1:], 1):
            tables[i] = utility.solve_theta(rs, float(theta), threads)
        variance = saved_variance(rs, V, directory) if directory is not None else None
        source = "second moments"
        if variance is None:
            variance = exact_variance(rs, V, threads)
        if variance is None:
            variance, source = cumulant_variance(rs, threads), "cumulants"
        variance = np.where(np.isnan(V), np.nan, variance)
        found = WinTables(rs, thetas, tables, variance, scale, time.perf_counter() - start, source)
        _cache[key] = (found, values)  # holding ``values`` keeps its id from being reused
        return found


def saved_variance(rs: rules.RuleSet, values: np.ndarray, directory: Path | str) -> np.ndarray | None:
    """Var(R) from the second moments saved beside the table (``pentadice solve``), or None."""
    from pentadice import table

    try:
        m2 = np.asarray(table.load_moments(rs, Path(directory), values))
    except (AttributeError, ImportError, table.TableError):
        return None
    with np.errstate(invalid="ignore"):
        return np.maximum(m2 - values * values, 0.0)


def exact_variance(rs: rules.RuleSet, values: np.ndarray, threads: int = 1) -> np.ndarray | None:
    """Var(R) under the advisor's policy from the second-moment table (:mod:`pentadice.solver.moments`), or
    None where that module is not available."""
    try:
        from pentadice.solver.moments import second_moments
    except ImportError:
        return None
    m2 = second_moments(rs, values, threads=threads, check=False)
    if m2.shape != values.shape:
        return None
    with np.errstate(invalid="ignore"):
        return np.maximum(m2 - values * values, 0.0)


def cumulant_variance(rs: rules.RuleSet, threads: int = 1, h: float = VARIANCE_THETA) -> np.ndarray:
    """Var(R) from two utility tables: ``(log E[exp(hR)] + log E[exp(-hR)]) / h^2`` (exact to O(h^2); their
    policies differ from the optimal one by O(h))."""
    from pentadice.solver import utility

    with np.errstate(invalid="ignore", divide="ignore"):
        up = utility.solve_theta(rs, h, threads)
        down = utility.solve_theta(rs, -h, threads)
        return np.maximum((np.log(up) + np.log(-down)) / (h * h), 0.0)


def sheet_outlook(rs: rules.RuleSet, tables: WinTables, sheet: Sheet) -> tuple[float, float]:
    """``(expected final score, variance)`` of a player's sheet under optimal play from now."""
    mask = sheet.open_mask(rs)
    flag = int(sheet.penta_scored(rs))
    sub = sheet.upper_subtotal(rs)
    return sheet.score(rs) + float(tables.values[flag, mask, sub]), float(tables.variance[flag, mask, sub])


class WinStrategy:
    """The ``win`` player's decisions, one at a time (interactive play): ``choose(situation, my_sheet, others)``.

    ``directory`` (the table directory) is accepted for the engine's sake; the tables are built in memory on
    first use (about one value solve per theta)."""

    def __init__(self, rs: rules.RuleSet, values: np.ndarray, directory: Path | str | None = None) -> None:
        self.rules = rs
        self.values = values
        self.directory = directory
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
        need = endgame_need(self.rules, my_sheet, others)
        if need is None:
            return None
        import numba

        Wt, rowix = endgame(self.rules, ENDGAME_BOXES, numba.get_num_threads())
        return endgame_choice(self.rules, Wt, rowix, situation, my_sheet, need)

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
        L = np.empty((rs.rolls, tab.n_keeps, utility.LANES))
        rows = np.zeros((utility.N_ROWS, utility.LANES))
        K = np.empty((tab.n_keeps, utility.LANES))
        B = np.empty((tab.n_keeps, utility.LANES))
        points = np.empty(rules.N_BOXES, dtype=np.int64)
        utility.wide.theta_turn_values(
            t.tables[i], theta, p, n_dice, counts, scores, add, subs, mask, flag, L, rows, K, B, points
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
        return Score(rules.BOX_IDS[best_box(p, counts[hand], mask, flag, theta, rows, sub, points)])


def endgame_need(rs: rules.RuleSet, my_sheet: Sheet, others: list[Sheet]) -> int | None:
    """The points to beat when every other player has finished and this one has at most
    :data:`ENDGAME_BOXES` boxes open (the exact end game applies), else None."""
    if rs.penta_repeat or not others or any(s.open_mask(rs) for s in others):
        return None
    if not 0 < bin(my_sheet.open_mask(rs)).count("1") <= ENDGAME_BOXES:
        return None
    from pentadice.solver.utility import TARGET_LANES

    need = max(s.score(rs) for s in others) - my_sheet.score(rs)
    return need if 0 <= need < TARGET_LANES else None


def endgame_choice(rs, Wt, rowix, situation: Situation, my_sheet: Sheet, need: int) -> Move:
    """The move with the highest chance of beating a final score ``need`` points ahead (ties half)."""
    from pentadice.solver import kernels, utility

    ti = turn_inputs(rs)
    tab = ti.tables
    p, n_dice, _, counts, scores, add, subs = ti.turn()
    mask, flag, sub = my_sheet.open_mask(rs), int(my_sheet.penta_scored(rs)), my_sheet.upper_subtotal(rs)
    lanes = utility.TARGET_LANES
    L = np.empty((rs.rolls, tab.n_keeps, lanes))
    K = np.empty((tab.n_keeps, lanes))
    B = np.empty((tab.n_keeps, lanes))
    points = np.empty(rules.N_BOXES, dtype=np.int64)
    utility.target.target_turn_values(Wt, rowix, p, n_dice, counts, scores, add, subs, mask, flag, sub, L, K, B, points)
    hand = tab.keep_of(situation.dice)
    r = situation.rolls_left
    if r > 0:
        best, choice = L[0, hand, need], -1
        for kept in tab.subkeeps[hand]:
            if kept < 0:
                break
            if L[r, kept, need] > best:
                best, choice = L[r, kept, need], int(kept)
        if choice >= 0:
            return Keep(tab.keep_faces[choice])
    bonus = kernels.wide.score_options(p, counts[hand], mask, flag, points)
    box, best = -1, 0.0
    for b in range(rules.N_BOXES):
        pts = int(points[b])
        if pts < 0:
            continue
        added = pts if b < 6 else 0
        gain = pts + bonus + rules.upper_bonus_earned(rs, sub, added)
        nflag = flag if b != rules.PENTA else int(pts > 0)
        x = need - gain
        value = 1.0 if x < 0 else Wt[rowix[mask & ~(1 << b)], nflag, min(sub + added, rs.upper_threshold), x]
        if box < 0 or value > best:
            box, best = b, value
    return Score(rules.BOX_IDS[box])


def best_box(p, hand_counts, mask: int, flag: int, theta: float, rows: np.ndarray, sub: int, points) -> int:
    """The box the win player fills (the simulator's rule, first best box on ties)."""
    from pentadice.solver import kernels

    bonus = kernels.wide.score_options(p, hand_counts, mask, flag, points)
    box, best = -1, 0.0
    for b in range(rules.N_BOXES):
        pts = int(points[b])
        if pts < 0:
            continue
        if b < 6:
            row = b * 6 + pts // (b + 1)
        elif b < rules.PENTA:
            row = 36 + b - 6
        else:
            row = 42 + (1 if pts > 0 else 0)
        g = float(pts + bonus)
        value = rows[row, sub] + g if theta == 0.0 else rows[row, sub] * math.exp(theta * g)
        if box < 0 or value > best:
            box, best = b, value
    return box
