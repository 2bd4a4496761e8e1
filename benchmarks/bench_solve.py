"""Solver benchmark: cold JIT compile, warm solve (median of several runs), peak memory, and the ratio to the
independent Rust solver yatzy-solver measured in the same run, on the peer's variant of the same game
(``american`` for Penta and the Yahtzee conventions, ``yatzy-scandinavian`` for Scandinavian Yatzy; the peer
has no Maxi Yatzy).

    python benchmarks/bench_solve.py [--rules yatzy] [--variant yatzy-scandinavian] [--runs 5]

Run with `make bench`. Prints figures; asserts nothing about time. Maxi Yatzy's solve takes a minute or two
and about 1.5 GB: give it ``--runs 1``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from pentadice import solver
from pentadice.game import rules
from pentadice.solver import induction

# The peer's variant of the same game, where it has one (its ids: yatzy_solver.builtin_variants()).
PEER_VARIANTS = {
    "penta": "american",
    "yahtzee": "american",
    "yahtzee+forced-joker": "american+forced-joker",
    "yahtzee+no-joker": "american+no-joker",
    "yahtzee+no-bonus": "american+no-bonus",
    "yatzy": "yatzy-scandinavian",
}


def solve_command(name: str, out: str) -> list[str]:
    return [sys.executable, "-m", "pentadice", "solve", "--rules", name, "--out", out, "--json"]


def cold_compile_seconds(name: str) -> float:
    """JIT compile time of a first run: a fresh process with an empty Numba cache."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        proc = subprocess.run(solve_command(name, out), env=env, capture_output=True, text=True, check=True)
        return json.loads(proc.stdout)["compile_seconds"]


def peak_memory_mb(name: str) -> float:
    """Peak resident memory of a whole `pentadice solve` (solve and write), in MB: this child's own
    (``os.wait4``), not the largest of every child so far."""
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.Popen(solve_command(name, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"pentadice solve --rules {name} failed")
    return usage.ru_maxrss / 1024


def warm_solves(name: str, runs: int) -> list[float]:
    rs = rules.get_rules(name)
    induction.compile_kernels_for(rs)
    return [solver.solve(rs).solve_seconds for _ in range(runs)]


def reference_solves(variant: str, runs: int) -> list[float] | None:
    try:
        import yatzy_solver as ys
    except ImportError:
        return None
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        ys.Solver.build(ys.Variant(variant))
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each solver")
    parser.add_argument("--rules", default="penta", choices=list(rules.REGISTRY), help="the rule set solved")
    parser.add_argument(
        "--variant", default=None, help="the peer's variant to compare with [default: the same game's, if any]"
    )
    args = parser.parse_args()
    variant = args.variant or PEER_VARIANTS.get(args.rules)

    print(f"cores: {os.cpu_count()}, numba threads: {__import__('numba').get_num_threads()}")
    print(f"JIT compile, cold cache (first run): {cold_compile_seconds(args.rules):.2f} s")
    print(f"peak memory of `pentadice solve --rules {args.rules}`: {peak_memory_mb(args.rules):.0f} MB")
    ours = warm_solves(args.rules, args.runs)
    mine = statistics.median(ours)
    print(
        f"pentadice solve --rules {args.rules}, warm: median {mine:.3f} s (runs: {', '.join(f'{t:.3f}' for t in ours)})"
    )
    if rules.get_rules(args.rules).n_boxes == 13:  # the games of the same size, for scale
        if args.rules != "yahtzee":
            same = statistics.median(warm_solves("yahtzee", args.runs))
            print(f"pentadice solve --rules yahtzee, warm: median {same:.3f} s")
        kiriki = statistics.median(warm_solves("kiriki", args.runs))
        print(
            f"pentadice solve --rules kiriki, warm: median {kiriki:.3f} s ({kiriki / mine:.2f}x the {args.rules} solve)"
        )
    if variant is None:
        print(f"reference: yatzy-solver has no variant of {args.rules} (--variant names one); no ratio")
        return
    ref = reference_solves(variant, max(3, args.runs // 2))
    if ref is None:
        print("reference: yatzy-solver is not installed (pip install -e '.[dev]'); no ratio")
        return
    theirs = statistics.median(ref)
    print(f"reference yatzy-solver 1.0 `{variant}`: median {theirs:.3f} s (runs: {', '.join(f'{t:.3f}' for t in ref)})")
    print(f"ratio: pentadice is {theirs / mine:.2f}x faster than the reference")


if __name__ == "__main__":
    main()
