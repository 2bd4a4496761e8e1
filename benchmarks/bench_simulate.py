"""Simulator benchmark: optimal and greedy games per second (median of several runs), and the reference
yatzy-solver's optimal simulation of the same game (`american` for Penta and the Yahtzee conventions,
`yatzy-scandinavian` for Yatzy; none for Maxi Yatzy) measured in the same run; the peak memory of the process
beside the table's size. Prints figures; asserts nothing.

    python benchmarks/bench_simulate.py [--rules yatzy] [--games 100000] [--runs 5] [--data DIR] [--wide-from N]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from bench_solve import PEER_VARIANTS

from pentadice.advisor import Advisor
from pentadice.game import rules
from pentadice.simulator import simulate as sim
from pentadice.support import paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rules", default="penta", choices=list(rules.REGISTRY), help="the rule set played")
    parser.add_argument("--data", default=None, help="the tables' directory (default: the one pentadice uses)")
    parser.add_argument("--wide-from", type=int, default=None, help="games of a state computed for every lane")
    args = parser.parse_args()
    advisor = Advisor.load(args.rules, args.data or str(paths.data_dir()))
    print(f"simulator JIT compile (or cache load): {sim.compile_seconds(advisor.rules):.2f} s")
    rates = {}
    for strategy in ("optimal", "greedy"):
        runs = []
        for i in range(args.runs):
            start = time.perf_counter()
            n = 0
            for _, bonus in sim.play_chunks(advisor.table, args.games, i, strategy, wide_from=args.wide_from):
                n += len(bonus)
            runs.append(n / (time.perf_counter() - start))
        rates[strategy] = statistics.median(runs)
        print(f"{strategy:>8}: median {rates[strategy]:,.0f} games/s over {args.runs} runs of {args.games:,}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"peak memory: {peak:,.0f} MiB, of which the value table {advisor.table.values.nbytes / 2**20:,.0f} MiB")
    variant = PEER_VARIANTS.get(args.rules)
    if variant is None:
        print(f"reference: yatzy-solver has no variant of {args.rules}; no ratio")
        return
    try:
        import yatzy_solver as ys
    except ImportError:
        print("reference: yatzy-solver is not installed (pip install -e '.[dev]'); no ratio")
        return
    peer = ys.Solver.build(ys.Variant(variant))
    ref = []
    for i in range(args.runs):
        start = time.perf_counter()
        peer.simulate(args.games // 4, seed=i)
        ref.append((args.games // 4) / (time.perf_counter() - start))
    theirs = statistics.median(ref)
    print(f"reference yatzy-solver 1.0 `{variant}`, optimal: median {theirs:,.0f} games/s")
    print(f"ratio: pentadice simulates {rates['optimal'] / theirs:.2f}x as many optimal games per second")


if __name__ == "__main__":
    main()
