"""Multiplayer games between computer strategies (``optimal``, ``win``), and their win rates.

Game ``g`` of a run seats the players in the order of the list rotated by ``g`` (seat ``s`` holds player
``(s + g) % P``), so every player sits in every seat equally often. Each player of a game rolls its own dice:
the counter-based dice of :mod:`pentadice.solver.games` with game number ``g * MAX_PLAYERS + j`` for player
``j`` (``j`` its place in the list). A game's dice, and so its result, depend on the seed and its number only:
the same whatever the chunk of games and the threads.

The games are played in step, round by round and seat by seat: the players due to play form groups by (table,
state) (a win player's table is the theta it picked for the turn, from every sheet of its game as it stands
when its turn starts: the players before it in the round have played theirs), each group's turn values are
computed once for all the rule set's lanes of subtotals, and each player reads its own lane, as the solitaire
simulator does. This module is the Python driver (:func:`play_chunks`, :func:`simulate_players`); the compiled
kernels are :mod:`pentadice.simulator.multiplayer_kernels`'s, and the win rates (each game's winners share the
win evenly; a strategy's rate with its 95 % interval, per player and per seat) :mod:`pentadice.simulator.win_rates`'s.
Their names used elsewhere are importable from here as well.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from pentadice.game import rules
from pentadice.players import lastturns
from pentadice.simulator.multiplayer_kernels import (
    SUB_STRIDE,
    compile_seconds,
    needs_compiling,
    play_endgame_groups,
    play_groups,
    play_groups_for,
)
from pentadice.simulator.simulate import seed_key, threads
from pentadice.simulator.win_rates import WinTally, seat_player, summary_lines
from pentadice.solver import games as kernel
from pentadice.solver import utility
from pentadice.solver.turn_inputs import turn_inputs
from pentadice.tables import table

__all__ = [  # the simulator's names, those of its kernels and win rates included (imported from here)
    "CHUNK",
    "MAX_PLAYERS",
    "STRATEGIES",
    "PlayersError",
    "WinTally",
    "compile_seconds",
    "needs_compiling",
    "parse_players",
    "play_chunks",
    "play_endgame_groups",
    "play_groups",
    "play_groups_for",
    "seat_player",
    "simulate_players",
    "summary_lines",
    "threads",
]

STRATEGIES = ("optimal", "win")
MAX_PLAYERS = 6
CHUNK = 200_000  # games played together


class PlayersError(ValueError):
    """A --players list that cannot be played."""


def parse_players(text: str, rs: rules.RuleSet | None = None, tables=None) -> tuple[str, ...]:
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

        reason = refusal(rs, tables)
        if reason:
            raise PlayersError(reason)
    return names


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
    endgame_tables, max_open = None, win.endgame_boxes(rs) if endgame is None else endgame
    if "win" in players and max_open > 0 and not rs.unbounded:
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
        max_open = win.endgame_boxes(tbl.rules) if endgame is None else endgame
        if max_open > 0 and not tbl.rules.unbounded:
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
