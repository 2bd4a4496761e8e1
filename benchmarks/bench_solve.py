"""Solver benchmark: cold JIT compile, warm solve (median of several runs), peak memory, and the ratio to the
independent Rust solver yatzy-solver (variant `american`, the same size of table) measured in the same run.

Run with `make bench`. Prints figures; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from pentadice import rules, solver


def cold_compile_seconds() -> float:
    """JIT compile time of a first run: a fresh process with an empty Numba cache."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cmd = [sys.executable, "-m", "pentadice.cli", "solve", "--out", out, "--json"]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        return json.loads(proc.stdout)["compile_seconds"]


def peak_memory_mb() -> float:
    """Peak resident memory of a whole `pentadice solve` (solve and write), in MB."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "pentadice.cli", "solve", "--out", out, "--json"]
        subprocess.run(cmd, capture_output=True, check=True)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def warm_solves(name: str, runs: int) -> list[float]:
    rs = rules.get_rules(name)
    solver.compile_kernels()
    return [solver.solve(rs).solve_seconds for _ in range(runs)]


def reference_solves(runs: int) -> list[float] | None:
    try:
        import yatzy_solver as ys
    except ImportError:
        return None
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        ys.Solver.build(ys.Variant("american"))
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each solver")
    parser.add_argument("--rules", default="penta")
    args = parser.parse_args()

    print(f"cores: {os.cpu_count()}, numba threads: {__import__('numba').get_num_threads()}")
    print(f"JIT compile, cold cache (first run): {cold_compile_seconds():.2f} s")
    print(f"peak memory of `pentadice solve`:     {peak_memory_mb():.0f} MB")
    ours = warm_solves(args.rules, args.runs)
    mine = statistics.median(ours)
    print(
        f"pentadice solve --rules {args.rules}, warm: median {mine:.3f} s (runs: {', '.join(f'{t:.3f}' for t in ours)})"
    )
    if args.rules != "yahtzee":
        same = statistics.median(warm_solves("yahtzee", args.runs))
        print(f"pentadice solve --rules yahtzee, warm: median {same:.3f} s")
    kiriki = statistics.median(warm_solves("kiriki", args.runs))
    print(f"pentadice solve --rules kiriki, warm: median {kiriki:.3f} s ({kiriki / mine:.2f}x the {args.rules} solve)")
    ref = reference_solves(max(3, args.runs // 2))
    if ref is None:
        print("reference: yatzy-solver is not installed (pip install -e '.[dev]'); no ratio")
        return
    theirs = statistics.median(ref)
    print(f"reference yatzy-solver 1.0 `american`: median {theirs:.3f} s (runs: {', '.join(f'{t:.3f}' for t in ref)})")
    print(f"ratio: pentadice is {theirs / mine:.2f}x faster than the reference")


if __name__ == "__main__":
    main()
