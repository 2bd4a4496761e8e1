"""Multiplayer games between computer strategies (``optimal``, ``win``), and their win rates.

Game ``g`` of a run seats the players in the order of the list rotated by ``g`` (seat ``s`` holds player
``(s + g) % P``), so every player sits in every seat equally often. Each player of a game rolls its own dice:
the counter-based dice of :mod:`pentadice.solver.games` with game number ``g * MAX_PLAYERS + j`` for player
``j`` (``j`` its place in the list). A game's dice, and so its result, depend on the seed and its number only:
the same whatever the chunk of games and the threads.

The games are played in step, round by round and seat by seat: the players due to play form groups by (table,
state) (a win player's table is the theta it picked for the turn, from every sheet of its game as it stands
when its turn starts: the players before it in the round have played theirs), each group's turn values are
computed once for all the rule set's lanes of subtotals (``RuleSet.lanes``: 64, or 80 for Maxi Yatzy), and
each player reads its own lane, as the solitaire simulator does. Sizes (boxes, successor rows, lanes, state
keys) come from the rule set's parameters and the arrays; :func:`play_groups` is compiled once per lane count.

Win rates: each game's winners (the highest total) share the win evenly. A strategy's rate is the mean share
of a player playing it (with the same strategy twice, the mean of its players: ``optimal,optimal`` gives 0.5
each); its 95 % interval is the normal one from the per-game shares. Per player figures are in ``players``.
"""

from __future__ import annotations

import math
import time
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from pentadice.game import rules
from pentadice.players import lastturns
from pentadice.simulator.simulate import seed_key, threads
from pentadice.solver import games as kernel
from pentadice.solver import kernels as turn_kernels
from pentadice.solver import utility
from pentadice.solver.compiled import jit
from pentadice.solver.turn_inputs import turn_inputs
from pentadice.tables import table

STRATEGIES = ("optimal", "win")
MAX_PLAYERS = 6
CHUNK = 200_000  # games played together
Z95 = 1.959963984540054

die = kernel.die
final_hand = kernel.final_hand
theta_turn_values = utility.wide.theta_turn_values  # rebound per lane count (play_groups_for)
endgame_turn_values = utility.target.target_turn_values
wide_score_options = turn_kernels.wide.score_options
wide_successor_row = turn_kernels.wide.successor_row
wide_upper_bonus = turn_kernels.wide.upper_bonus
wide_box_successor = turn_kernels.wide.box_successor
lt_mixture = lastturns.mixture
lt_best_keep = lastturns.best_keep
lt_best_box = lastturns.best_box
P_ROLLS = rules.P_ROLLS
P_UPPER_THRESHOLD = rules.P_UPPER_THRESHOLD
P_N_BOXES = rules.P_N_BOXES
P_N_ROWS = rules.P_N_ROWS
W = utility.LANES  # rebound per lane count (play_groups_for)
SUB_STRIDE = 256  # end-game group keys: (open_mask * 2 + flag) * SUB_STRIDE + subtotal (thresholds up to 216)
SHARED_GROUP = 2048


def seat_player(game, seat, n_players):
    """The player (its place in the list) in ``seat`` (0: first to play) of game number ``game``: the list's
    order rotated by the game's number (works on NumPy arrays too)."""
    return (seat + game) % n_players


class PlayersError(ValueError):
    """A --players list that cannot be played."""


def parse_players(text: str, rs: rules.RuleSet | None = None) -> tuple[str, ...]:
    """The strategies of a ``--players`` list (``win,optimal``): 2 to 6 known strategy names."""
    names = tuple(w.strip().lower() for w in text.split(","))
    if not text.strip() or any(not n for n in names):
        raise PlayersError(f"--players needs strategy names separated by commas (e.g. win,optimal), not {text!r}")
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown:
        raise PlayersError(f"unknown strategy {unknown[0]!r} in --players; strategies: {', '.join(STRATEGIES)}")
    if not 2 <= len(names) <= MAX_PLAYERS:
        raise PlayersError(f"--players takes 2 to {MAX_PLAYERS} players, not {len(names)}")
    if rs is not None and "win" in names:
        from pentadice.players.win import refusal

        reason = refusal(rs)
        if reason:
            raise PlayersError(reason)
    return names


def play_groups(
    T, thetas, p, n_dice, counts, scores, size, add, subs, subkeeps, key, t, n_keys,
    order, group_starts, group_keys, stream, masks, flags, subtotals, totals, scores_out, bonus_out, part, parts,
):  # fmt: skip
    """One turn of the players ``order[group_starts[i]:group_starts[i + 1]]`` of each group ``i`` (key
    ``table * n_keys + open_mask * 2 + penta_scored``): group values computed once (the table of
    ``thetas[table]``, ``W`` lanes), each player its own lane; groups shared among ``parts`` threads as in the
    solitaire simulator. Plain Python compiled once per lane count (:func:`play_groups_for`)."""
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    cap = p[P_UPPER_THRESHOLD]
    n_boxes = p[P_N_BOXES]
    K = np.empty((n_keeps, W))
    B = np.empty((n_keeps, W))
    L = np.empty((n_rolls, n_keeps, W))
    rows = np.zeros((p[P_N_ROWS], W))
    points = np.empty(n_boxes, dtype=np.int64)
    n_groups = group_keys.shape[0]
    small = -1
    for gi in range(n_groups):
        lo = group_starts[gi]
        hi = group_starts[gi + 1]
        if hi - lo >= SHARED_GROUP:
            first_entry = lo + (hi - lo) * part // parts
            last_entry = lo + (hi - lo) * (part + 1) // parts
        else:
            small += 1
            if small % parts != part:
                continue
            first_entry, last_entry = lo, hi
        gkey = group_keys[gi]
        ti = gkey // n_keys
        k = gkey % n_keys
        open_mask = k >> 1
        penta_scored = k & 1
        theta = thetas[ti]
        theta_turn_values(T[ti], theta, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, L, rows, K, B)
        for i in range(first_entry, last_entry):
            e = order[i]
            game = stream[e]
            sub = subtotals[e]
            hand = final_hand(L, n_dice, n_rolls, size, add, subkeeps, key, game, t, sub)
            bonus = wide_score_options(p, counts[hand], open_mask, penta_scored, points)
            box = -1
            best = 0.0
            for b in range(n_boxes):
                pts = points[b]
                if pts < 0:
                    continue
                row = wide_successor_row(p, b, pts)
                gain = float(pts + bonus)
                # theta 0: points plus the next state's value (the solver's sums); else utility times exp
                value = rows[row, sub] + gain if theta == 0.0 else rows[row, sub] * math.exp(theta * gain)
                if box < 0 or value > best:
                    box = b
                    best = value
            pts = points[box]
            bonus_out[e] += bonus
            totals[e] += pts + bonus
            if (open_mask >> box) & 1 == 1:
                scores_out[e, box] = pts
            else:
                scores_out[e, box] += pts
            nxt, flag, added = wide_box_successor(p, box, pts, open_mask, penta_scored)
            totals[e] += wide_upper_bonus(p, sub, added)
            masks[e] = nxt
            flags[e] = flag
            subtotals[e] = min(sub + added, cap)


_PLAY_GROUPS: dict[int, object] = {}


def play_groups_for(lanes: int):
    """:func:`play_groups` compiled for ``lanes`` lanes (``RuleSet.lanes``), calling the utility kernels
    compiled for those lanes (:func:`pentadice.solver.utility.wide_for`); made once per lane count."""
    if lanes not in _PLAY_GROUPS:
        scope = dict(play_groups.__globals__)
        scope.update(W=lanes, theta_turn_values=utility.wide_for(lanes).theta_turn_values)
        fn = play_groups
        clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
        clone.__qualname__ = f"{fn.__qualname__}_w{lanes}"  # one cache entry per lane count
        clone.__module__ = fn.__module__
        clone.__doc__ = fn.__doc__
        compiled = jit(clone, nogil=True)
        turn_kernels.drop_stale_cache([compiled], extra=[utility, lastturns])
        _PLAY_GROUPS[lanes] = compiled
    return _PLAY_GROUPS[lanes]


@jit(nogil=True)
def play_endgame_groups(
    Wt, rowix, p, n_dice, counts, scores, size, add, subs, subkeeps, key, t,
    order, group_starts, group_keys, C, opp_rows, opp_shift, stream, masks, flags, subtotals, totals, scores_out,
    bonus_out, part, parts,
):  # fmt: skip
    """One turn of win players in their last turns (:mod:`pentadice.players.lastturns`), by the end-game
    table: groups of key ``(open_mask * 2 + penta_scored) * SUB_STRIDE + subtotal``, each player weighing the lanes
    by the distribution of the points it must beat (``C``'s rows ``opp_rows[e]`` of the other players, shifted
    by ``opp_shift[e]``). Otherwise as :func:`play_groups`."""
    n_keeps = counts.shape[0]
    n_rolls = p[P_ROLLS]
    cap = p[P_UPPER_THRESHOLD]
    n_lanes = Wt.shape[3]
    n_opp = opp_rows.shape[1]
    K = np.empty((n_keeps, n_lanes))
    B = np.empty((n_keeps, n_lanes))
    L = np.empty((n_rolls, n_keeps, n_lanes))
    q = np.empty(n_lanes)
    points = np.empty(p[P_N_BOXES], dtype=np.int64)
    small = -1
    for gi in range(group_keys.shape[0]):
        lo = group_starts[gi]
        hi = group_starts[gi + 1]
        small += 1
        if small % parts != part:
            continue
        gkey = group_keys[gi]
        sub = gkey % SUB_STRIDE
        k = gkey // SUB_STRIDE
        open_mask = k >> 1
        penta_scored = k & 1
        endgame_turn_values(
            Wt, rowix, p, n_dice, counts, scores, add, subs, open_mask, penta_scored, sub, L, K, B, points
        )
        for i in range(lo, hi):
            e = order[i]
            game = stream[e]
            lt_mixture(C, opp_rows[e], opp_shift[e], n_opp, q)
            hand = n_keeps - 1
            for j in range(n_dice):
                hand = add[hand, die(key, game, t, 0, j) - 1]
            for r in range(n_rolls - 1, 0, -1):
                choice = lt_best_keep(L, q, hand, r, subkeeps)
                if choice < 0:
                    break
                hand = choice
                for j in range(n_dice - size[choice]):
                    hand = add[hand, die(key, game, t, n_rolls - r, j) - 1]
            box = lt_best_box(Wt, rowix, p, counts[hand], open_mask, penta_scored, sub, q, points)
            bonus = wide_score_options(p, counts[hand], open_mask, penta_scored, points)
            pts = points[box]
            bonus_out[e] += bonus
            totals[e] += pts + bonus
            scores_out[e, box] = pts
            nxt, flag, added = wide_box_successor(p, box, pts, open_mask, penta_scored)
            totals[e] += wide_upper_bonus(p, sub, added)
            masks[e] = nxt
            flags[e] = flag
            subtotals[e] = min(sub + added, cap)


turn_kernels.drop_stale_cache([play_endgame_groups], extra=[utility, lastturns])


@dataclass
class WinTally:
    """Per player (the list's order): games, sum and sum of squares of its per-game win share, sum of its
    final scores; per strategy the same of the mean share of its players in each game."""

    players: tuple[str, ...]
    games: int = 0
    share: np.ndarray = field(init=False)
    share_sq: np.ndarray = field(init=False)
    score_sum: np.ndarray = field(init=False)
    strategy_share: dict = field(init=False)
    seat_share: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.players)
        self.share = np.zeros(n)
        self.share_sq = np.zeros(n)
        self.score_sum = np.zeros(n)
        self.seat_share = np.zeros(n)
        self.strategy_share = {s: [0.0, 0.0] for s in dict.fromkeys(self.players)}

    def add(self, totals: np.ndarray, first: int) -> None:
        """Add games ``first, first + 1, ...`` whose final scores are ``totals[g, j]`` (player ``j``)."""
        best = totals.max(axis=1, keepdims=True)
        winners = totals == best
        shares = winners / winners.sum(axis=1, keepdims=True)
        self.games += len(totals)
        self.share += shares.sum(axis=0)
        self.share_sq += (shares**2).sum(axis=0)
        self.score_sum += totals.sum(axis=0)
        n = len(self.players)
        g = np.arange(first, first + len(totals))
        for s in range(n):
            self.seat_share[s] += shares[np.arange(len(totals)), seat_player(g, s, n)].sum()
        for strategy, acc in self.strategy_share.items():
            cols = [j for j, name in enumerate(self.players) if name == strategy]
            x = shares[:, cols].mean(axis=1)
            acc[0] += x.sum()
            acc[1] += (x**2).sum()

    def summary(self) -> dict:
        """``win_rates`` per strategy, ``players`` per player, ``seats``: the win rate of each seat."""
        n = self.games

        def rate(total: float, total_sq: float) -> tuple[float, list[float]]:
            mean = total / n
            var = max(total_sq / n - mean * mean, 0.0) * n / max(n - 1, 1)
            half = Z95 * math.sqrt(var / n)
            # A rate lies in [0, 1]: the normal interval is cut there (it matters only for a few games).
            return float(mean), [float(max(mean - half, 0.0)), float(min(mean + half, 1.0))]

        win_rates = {}
        for strategy, (s, sq) in self.strategy_share.items():
            r, ci = rate(s, sq)
            cols = [j for j, name in enumerate(self.players) if name == strategy]
            win_rates[strategy] = {
                "rate": float(r),
                "ci95": ci,
                "mean_score": float(self.score_sum[cols].sum() / (n * len(cols))),
                "players": len(cols),
            }
        players = []
        for j, strategy in enumerate(self.players):
            r, ci = rate(self.share[j], self.share_sq[j])
            players.append({"strategy": strategy, "rate": r, "ci95": ci, "mean_score": float(self.score_sum[j] / n)})
        return {"win_rates": win_rates, "players": players, "seat_rates": [float(x / n) for x in self.seat_share]}


def play_chunks(
    tbl: table.Table,
    players: tuple[str, ...],
    games: int,
    seed: int,
    chunk: int | None = None,
    grid: tuple[float, ...] | None = None,
    scale: float | None = None,
    endgame: int | None = None,
):
    """``(first, totals, scores, bonus)`` of each run of at most ``chunk`` games: ``totals[g, j]`` the final
    score of player ``j`` of game ``first + g``, ``scores[g, j, b]`` its box scores, ``bonus[g, j]`` its Penta
    bonuses."""
    from pentadice.players import win

    if games < 1:
        raise ValueError(f"the number of games must be at least 1, not {games}")
    rs = tbl.rules
    n_players = len(players)
    chunk = chunk or CHUNK
    V = win.padded(rs, tbl.values).copy()
    if "win" in players:
        files = getattr(tbl, "files", None)
        wt = win.build(
            rs,
            tbl.values,
            directory=getattr(files, "directory", None),
            grid=win.GRID if grid is None else grid,
            scale=win.SCALE if scale is None else scale,
            threads=threads(),
        )
        T, thetas, variance = wt.tables, wt.thetas, wt.variance
        V = wt.values
    else:
        wt = None
        T, thetas, variance = V[None], np.zeros(1), None
    opp = None
    endgame_tables, max_open = None, win.ENDGAME_BOXES if endgame is None else endgame
    if "win" in players and max_open > 0 and not rs.penta_repeat:
        files = getattr(tbl, "files", None)
        endgame_tables = win.endgame(rs, max_open, threads(), getattr(files, "directory", None), tbl.values)
        opp = lastturns.opponents(rs, tbl.values, max_open)
    popcount = np.bitwise_count(np.arange(1 << rs.n_boxes, dtype=np.int64))
    n_keys = 2 << rs.n_boxes  # open_mask * 2 + penta_scored
    groups_kernel = play_groups_for(rs.lanes)
    args = turn_inputs(rs).games()
    p, n_dice, counts, scores_t, size, add, subs, subkeeps = args
    key = seed_key(seed)
    is_win = np.array([s == "win" for s in players])
    parts = threads()
    pool = ThreadPoolExecutor(parts) if parts > 1 else None
    try:
        for lo in range(0, games, chunk):
            n = min(games, lo + chunk) - lo
            m = n * n_players
            masks = np.full(m, rs.box_mask, dtype=np.int64)
            flags = np.zeros(m, dtype=np.int64)
            subtotals = np.zeros(m, dtype=np.int64)
            totals = np.zeros(m, dtype=np.int64)
            sc = np.full((m, rs.n_boxes), -1, dtype=np.int16)
            bonus = np.zeros(m, dtype=np.int64)
            g = np.arange(n, dtype=np.int64)
            opp_rows = np.zeros((m, n_players - 1), dtype=np.int64)
            opp_shift = np.zeros((m, n_players - 1), dtype=np.int64)
            stream = ((lo + np.repeat(g, n_players)) * MAX_PLAYERS + np.tile(np.arange(n_players), n)).astype(np.int64)
            for t in range(kernel.MAX_TURNS):
                if not masks.any():
                    break
                for s in range(n_players):
                    j = seat_player(lo + g, s, n_players)
                    entries = g * n_players + j
                    entries = entries[masks[entries] != 0]
                    if len(entries) == 0:
                        continue
                    tix = np.zeros(len(entries), dtype=np.int64)
                    wins = is_win[entries % n_players]
                    if endgame_tables is not None and wins.any():  # the last turns (strategy.lastturns)
                        late = _last_turns(
                            entries,
                            wins,
                            n_players,
                            max_open,
                            popcount,
                            masks,
                            flags,
                            subtotals,
                            totals,
                            opp,
                            opp_rows,
                            opp_shift,
                        )
                        if late.any():
                            ends = entries[late]
                            ekeys = (masks[ends] * 2 + flags[ends]) * SUB_STRIDE + subtotals[ends]
                            order, group_starts, group_keys = _groups(ends, ekeys)
                            _run(
                                play_endgame_groups,
                                (*endgame_tables, p, n_dice, counts, scores_t, size, add, subs, subkeeps, key, t),
                                (
                                    order,
                                    group_starts,
                                    group_keys,
                                    opp.C,
                                    opp_rows,
                                    opp_shift,
                                    stream,
                                    masks,
                                    flags,
                                    subtotals,
                                    totals,
                                    sc,
                                ),
                                bonus,
                                pool,
                                parts,
                            )
                            entries, wins = entries[~late], wins[~late]
                            tix = tix[~late]
                    if wins.any():
                        tix[wins] = _pick(wt, entries[wins], n_players, V, variance, masks, flags, subtotals, totals)
                    if len(entries) == 0:
                        continue
                    order, group_starts, group_keys = _groups(
                        entries, tix * n_keys + masks[entries] * 2 + flags[entries]
                    )
                    _run(
                        groups_kernel,
                        (T, thetas, p, n_dice, counts, scores_t, size, add, subs, subkeeps, key, t, n_keys),
                        (order, group_starts, group_keys, stream, masks, flags, subtotals, totals, sc),
                        bonus,
                        pool,
                        parts,
                    )
            else:
                raise RuntimeError(f"a game needed more than {kernel.MAX_TURNS} turns")
            yield (
                lo,
                totals.reshape(n, n_players),
                sc.reshape(n, n_players, rs.n_boxes),
                bonus.reshape(n, n_players),
            )
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _groups(entries: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, group_starts, group_keys)``: ``entries`` sorted by key (stably), where each key's run starts."""
    o = np.argsort(keys, kind="stable")
    ks = keys[o]
    cuts = np.flatnonzero(np.diff(ks)) + 1
    group_starts = np.concatenate(([0], cuts, [len(ks)])).astype(np.int64)
    return entries[o], group_starts, ks[group_starts[:-1]]


def _run(fn, call: tuple, state: tuple, bonus: np.ndarray, pool, parts: int) -> None:
    """``fn`` over the groups, shared among ``parts`` threads (each its own share of the groups)."""
    if pool is None:
        fn(*call, *state, bonus, 0, 1)
        return
    for f in [pool.submit(fn, *call, *state, bonus, part, parts) for part in range(parts)]:
        f.result()


def _last_turns(
    entries, wins, n_players, max_open, popcount, masks, flags, subtotals, totals, opp, opp_rows, opp_shift
) -> np.ndarray:
    """Which players of ``entries`` play their last turns' rule (:mod:`pentadice.players.lastturns`): win
    players with at most ``max_open`` boxes open, every other player too (or finished), who may still reach
    the best other final total and are less than the end-game table's lanes behind the best other total.
    Fills ``opp_rows`` and ``opp_shift`` of those players (the other players' distribution rows and
    ``my total - theirs``)."""
    late = wins & (popcount[masks[entries]] <= max_open)
    if not late.any():
        return late
    cand = entries[late]
    games = cand // n_players
    me = cand % n_players
    others = games[:, None] * n_players + (me[:, None] + 1 + np.arange(n_players - 1)[None, :]) % n_players
    ok = (popcount[masks[others]] <= max_open).all(axis=1)
    rows = np.zeros(others.shape, dtype=np.int64)
    if ok.any():
        o = others[ok]
        rows[ok] = opp.rows(flags[o], masks[o], subtotals[o])
    behind = totals[others].max(axis=1) - totals[cand]
    reach = (totals[others] + opp.top[rows]).max(axis=1) - totals[cand]
    ok &= (reach >= 0) & (behind < utility.TARGET_LANES)
    opp_rows[cand[ok]] = rows[ok]
    opp_shift[cand[ok]] = totals[cand[ok], None] - totals[others[ok]]
    late[np.flatnonzero(late)[~ok]] = False
    return late


def _pick(wt, entries, n_players, V, variance, masks, flags, subtotals, totals) -> np.ndarray:
    """The table index of each win player in ``entries``, from every sheet of its game."""
    games = entries // n_players
    all_entries = games[:, None] * n_players + np.arange(n_players)[None, :]
    f, mk, sb = flags[all_entries], masks[all_entries], subtotals[all_entries]
    expect = totals[all_entries] + V[f, mk, sb]
    var = variance[f, mk, sb]
    me = entries % n_players
    rows = np.arange(len(entries))
    e_me, var_me = expect[rows, me], var[rows, me]
    others = expect.copy()
    others[rows, me] = -np.inf
    best = others.argmax(axis=1)
    return wt.pick(e_me, var_me, others[rows, best], var[rows, best])


def simulate_players(
    tbl: table.Table,
    players: tuple[str, ...],
    games: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
    chunk: int | None = None,
    grid: tuple[float, ...] | None = None,
    scale: float | None = None,
    endgame: int | None = None,
) -> dict:
    """Play ``games`` games between ``players`` (strategy names); the summary (see the module's docstring),
    with ``games``, ``seed``, ``rules``, ``strategies``, ``seconds`` (the games) and ``tables_seconds`` (building
    the win strategy's tables first, when not in memory yet)."""
    from pentadice.players import win

    start = time.perf_counter()
    if "win" in players:  # built (or found in memory) before the clock of the games starts
        files = getattr(tbl, "files", None)
        directory = getattr(files, "directory", None)
        grid = win.GRID if grid is None else grid
        scale = win.SCALE if scale is None else scale
        win.build(tbl.rules, tbl.values, grid, scale, threads(), directory)
        max_open = win.ENDGAME_BOXES if endgame is None else endgame
        if max_open > 0 and not tbl.rules.penta_repeat:
            win.endgame(tbl.rules, max_open, threads(), directory, tbl.values)
            lastturns.opponents(tbl.rules, tbl.values, max_open)
    tables_seconds = time.perf_counter() - start
    start = time.perf_counter()
    tally = WinTally(tuple(players))
    for first, totals, _, _ in play_chunks(tbl, tuple(players), games, seed, chunk, grid, scale, endgame):
        tally.add(totals, first)
        if progress is not None:
            progress(len(totals))
    out = tally.summary()
    return {
        "rules": tbl.rules.name,
        "games": tally.games,
        "seed": seed,
        "strategies": list(players),
        **out,
        "seconds": time.perf_counter() - start,
        "tables_seconds": tables_seconds,
    }


def compile_seconds(rs: rules.RuleSet = rules.PENTA_RULES) -> float:
    """Compile (or load from Numba's cache) the multiplayer kernel for ``rs``'s lanes; returns the seconds it
    took."""
    start = time.perf_counter()
    none = np.zeros(0, dtype=np.int64)
    V = np.zeros((1, rs.n_flags, 1 << rs.n_boxes, rs.lanes))
    p, n_dice, counts, scores_t, size, add, subs, subkeeps = turn_inputs(rs).games()
    sc = np.empty((0, rs.n_boxes), np.int16)
    play_groups_for(rs.lanes)(
        V, np.zeros(1), p, n_dice, counts, scores_t, size, add, subs, subkeeps, seed_key(0), 0, 2 << rs.n_boxes,
        none, np.zeros(1, dtype=np.int64), none, none, none, none, none, none, sc, none, 0, 1,
    )  # fmt: skip
    return time.perf_counter() - start


def needs_compiling(rs: rules.RuleSet = rules.PENTA_RULES) -> bool:
    """Whether the multiplayer kernel for ``rs``'s lanes is not in Numba's cache yet (a first run)."""
    from pentadice.solver.compiled import cached

    return not cached(play_groups_for(rs.lanes))


def summary_lines(result: dict, rs: rules.RuleSet) -> list[str]:
    """The human summary of :func:`simulate_players`."""
    lines = [
        f"{rs.title}, {len(result['strategies'])} players ({', '.join(result['strategies'])}), "
        f"{result['games']:,} games (seed {result['seed']}), seats rotated game by game"
    ]
    lines.append(f"{'strategy':<10}{'players':>8}{'win rate':>10}   {'95 % interval':<18}{'mean score':>11}")
    for name, w in result["win_rates"].items():
        lo, hi = w["ci95"]
        lines.append(
            f"{name:<10}{w['players']:>8}{w['rate']:>10.2%}   [{lo:.2%}, {hi:.2%}]{'':<2}{w['mean_score']:>11.2f}"
        )
    if len(result["win_rates"]) < len(result["strategies"]):
        lines.append("Per player (a strategy played twice: each player's own figures):")
        for j, pl in enumerate(result["players"]):
            lo, hi = pl["ci95"]
            figures = f"{pl['rate']:>10.2%}   [{lo:.2%}, {hi:.2%}]  {pl['mean_score']:>9.2f}"
            lines.append(f"  player {j + 1} {pl['strategy']:<8}{figures}")
    seats = ", ".join(f"{r:.2%}" for r in result["seat_rates"])
    lines.append(f"Win rate by seat (first to play first): {seats}")
    rate = result["games"] / result["seconds"] if result["seconds"] > 0 else float("inf")
    lines.append(f"Speed: {rate:,.0f} games/s ({result['seconds']:.2f} s)")
    if result.get("tables_seconds", 0) >= 0.01:
        lines.append(f"Win strategy's tables read or built in {result['tables_seconds']:.1f} s")
    return lines
