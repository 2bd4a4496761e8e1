"""Win strategy benchmark: the theta and end-game tables' build (or load) time, the multiplayer simulator's
speed, and the win rates of ``win`` against ``optimal`` (head to head and three players) with their 95 %
intervals. Prints figures; asserts nothing (``make bench`` calls :func:`bench`).
"""

from __future__ import annotations

import argparse
import time

from pentadice.game import rules
from pentadice.players import lastturns, win
from pentadice.simulator import multiplayer as mp
from pentadice.support import paths
from pentadice.tables import table


def line(result: dict, strategy: str) -> str:
    w = result["win_rates"][strategy]
    lo, hi = w["ci95"]
    return f"{w['rate']:.4%} [{lo:.4%}, {hi:.4%}], mean score {w['mean_score']:.2f}"


def bench(
    games: int = 1_000_000, three_player_games: int = 300_000, seed: int = 2026, rules_name: str = "penta"
) -> dict:
    """Print and return the figures: table build seconds, games per second, win rates (``rules_name``: any rule
    set whose win tables fit, e.g. ``yatzy``; its value table must be solved)."""
    rs = rules.get_rules(rules_name)
    reason = win.refusal(rs)
    if reason:
        print(reason)
        return {"refused": reason}
    tbl = table.load(rs, paths.data_dir())
    print(f"{rs.title}: multiplayer simulator JIT compile (or cache load): {mp.compile_seconds(rs):.2f} s")
    start = time.perf_counter()
    tables = win.build(tbl.rules, tbl.values, threads=mp.threads(), directory=tbl.files.directory)
    build = time.perf_counter() - start
    print(
        f"win tables: {len(tables.thetas)} thetas ({len(tables.thetas) - 1} utility solves) + variance "
        f"({tables.variance_source}): {build:.1f} s (JIT compile included on a first run)"
    )
    where = "read from the table directory" if tables.origin == "file" else "built, then saved"
    print(f"  ({where})")
    start = time.perf_counter()
    win.endgame(tbl.rules, win.ENDGAME_BOXES, mp.threads(), tbl.files.directory, tbl.values)
    end_build = time.perf_counter() - start
    print(f"end-game table (at most {win.ENDGAME_BOXES} boxes open): {end_build:.1f} s")
    start = time.perf_counter()
    lastturns.opponents(tbl.rules, tbl.values, win.ENDGAME_BOXES)
    print(f"the other players' distributions of the points to come: {time.perf_counter() - start:.1f} s")
    out = {"build_seconds": build, "endgame_seconds": end_build}
    for players, n in ((("win", "optimal"), games), (("win", "optimal", "optimal"), three_player_games)):
        r = mp.simulate_players(tbl, players, n, seed)
        print(f"{','.join(players)}: {n:,} games in {r['seconds']:.1f} s ({n / r['seconds']:,.0f} games/s)")
        for strategy in r["win_rates"]:
            print(f"  {strategy:>8}: win rate {line(r, strategy)}")
        if len(players) == 3:
            print(f"  (a fair share is {1 / 3:.4%})")
        out[",".join(players)] = r
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1_000_000, help="head-to-head games")
    parser.add_argument("--three", type=int, default=300_000, help="three-player games")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rules", default="penta", help="rule set (penta, yahtzee, yatzy, ...)")
    args = parser.parse_args()
    bench(args.games, args.three, args.seed, args.rules)


if __name__ == "__main__":
    main()
