"""Advisor benchmark: one situation from Python, many in a batch, and the `pentadice advise` command's wall
time with a warm table. Prints figures (medians); asserts nothing about time.

Run with `make bench` (after `make table`, or it solves the table first).
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

import numpy as np

from pentadice.advisor import Advisor
from pentadice.game import rules
from pentadice.game.sheet import Sheet, possible_points
from pentadice.solver import batch as batch_kernel
from pentadice.support import paths


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def random_situations(advisor: Advisor, n: int, seed: int = 1) -> list:
    """``n`` mid-game situations of the advisor's rule set: three boxes filled with points they can hold."""
    rs = advisor.rules
    rng = np.random.default_rng(seed)
    possible = {b: sorted(p) for b, p in possible_points(rs).items()}
    out = []
    for _ in range(n):
        boxes = rng.choice(list(rs.boxes), size=3, replace=False)
        sheet = Sheet({str(b): int(rng.choice(possible[str(b)])) for b in boxes})
        out.append(advisor.situation([int(x) for x in rng.integers(1, 7, rs.dice)], int(rng.integers(0, 3)), sheet))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rules", default="penta", choices=list(rules.REGISTRY), help="the rule set advised")
    args = parser.parse_args()
    data = str(paths.data_dir())
    advisor = Advisor.load(args.rules, data)
    situations = random_situations(advisor, 10_000)

    advisor.advise(situations[0])  # compile or load the cache
    single = median_time(lambda: [advisor.advise(s) for s in situations[:1000]], args.runs) / 1000
    print(f"library, one call from Python (compiled, options as objects): {single * 1e6:.1f} us")
    plain = Advisor(advisor.table, compiled=False)
    slow = median_time(lambda: [plain.advise(s) for s in situations[:50]], 3) / 50
    print(f"library, one call as plain Python (the command's path):      {slow * 1e6:.0f} us")
    batch_kernel.evaluate(advisor, situations[:10])
    raw = median_time(lambda: batch_kernel.evaluate(advisor, situations), args.runs) / len(situations)
    print(f"batch of {len(situations):,}, option values (Numba, parallel):         {raw * 1e6:.2f} us per situation")
    full = median_time(lambda: advisor.advise_many(situations), 3) / len(situations)
    print(f"batch of {len(situations):,}, as Advice objects:                        {full * 1e6:.1f} us per situation")

    exe = os.path.join(os.path.dirname(sys.executable), "pentadice")
    cmd = [exe, "advise", *"1 1 3 4 6 6"[: 2 * advisor.rules.dice - 1].split(), "--rules", args.rules, "--data", data]
    subprocess.run(cmd, capture_output=True, check=True)
    wall = median_time(lambda: subprocess.run(cmd, capture_output=True, check=True), args.runs)
    print(f"`pentadice {' '.join(cmd[1:-2])}`, wall, warm table:               {wall:.3f} s")
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        for s in situations:
            fh.write(json.dumps({"dice": list(s.dice), "rolls_left": s.rolls_left, "sheet": s.sheet.as_dict()}) + "\n")
    batch_cmd = [exe, "advise", "--batch", fh.name, "--rules", args.rules, "--data", data]
    batch_wall = median_time(lambda: subprocess.run(batch_cmd, capture_output=True, check=True), 3)
    os.unlink(fh.name)
    print(f"`pentadice advise --batch` of {len(situations):,} lines, wall:             {batch_wall:.2f} s")


if __name__ == "__main__":
    main()
