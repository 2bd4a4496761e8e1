"""Simulator benchmark: optimal and greedy games per second (median of several runs), and the reference
yatzy-solver's optimal simulation of the same game (`american` for Penta and the Yahtzee conventions,
`yatzy-scandinavian` for Yatzy; none for Maxi Yatzy) measured in the same run. Prints figures; asserts nothing.

    python benchmarks/bench_simulate.py [--rules yatzy] [--games 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args()
    advisor = Advisor.load(args.rules, str(paths.data_dir()))
    print(f"simulator JIT compile (or cache load): {sim.compile_seconds():.2f} s")
    rates = {}
    for strategy in ("optimal", "greedy"):
        runs = [sim.simulate(advisor.table, args.games, seed=i, strategy=strategy).stats for i in range(args.runs)]
        rates[strategy] = statistics.median(r["games_per_second"] for r in runs)
        print(
            f"{strategy:>8}: median {rates[strategy]:,.0f} games/s over {args.runs} runs of {args.games:,} "
            f"(mean score {statistics.mean(r['mean'] for r in runs):.2f})"
        )
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
