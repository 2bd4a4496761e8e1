"""What checking the tables costs (pentadice.chunks): loading each kind with its chunks checked against the way
the previous version loaded it (memory-mapped, then the SHA-256 of the whole array), and a target question
(`advise --target`'s probabilities) on a freshly loaded target table with its chunks checked as they are read
against the same question with the checks switched off. Medians of several runs, in one process, files in the
page cache. Prints figures; asserts nothing.

    python benchmarks/bench_tables.py [--data DIR] [--runs N]

The target rows need ``pentadice solve --targets`` in DIR first (skipped without it).
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def sha_load(path: Path) -> None:
    """The previous version's load: memory-mapped, then the SHA-256 of the values."""
    a = np.load(path, mmap_mode="r", allow_pickle=False)
    hashlib.sha256(np.ascontiguousarray(a).data).hexdigest()


def line(what: str, new: float, old: float | None = None, old_what: str = "") -> None:
    ratio = f"  ({new / old:.2f}x {old_what}, {old:.2f} ms)" if old else ""
    print(f"  {what:<58}{new:8.2f} ms{ratio}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="data", help="table directory holding Penta's tables [data]")
    parser.add_argument("--runs", type=int, default=15, help="runs per figure (the median is printed) [15]")
    args = parser.parse_args()

    from pentadice import chunks, rules, table, targets

    rs = rules.get_rules("penta")
    d = Path(args.data)
    print(f"Loading Penta's tables from {d}, checked (median of {args.runs}):")
    line(
        "value table (8 MB), every chunk's CRC",
        median_ms(lambda: table.load(rs, d), args.runs),
        median_ms(lambda: sha_load(d / "penta.npy"), args.runs),
        "the previous SHA-256 load",
    )
    if (d / "penta.m2.npy").exists():
        line(
            "second moments (8 MB), every chunk's CRC",
            median_ms(lambda: table.load_moments(rs, d), args.runs),
            median_ms(lambda: sha_load(d / "penta.m2.npy"), args.runs),
            "the previous SHA-256 load",
        )
    chunks.use_private_copies(True)
    line("value table, a private copy read into memory (the server)", median_ms(lambda: table.load(rs, d), args.runs))
    chunks.use_private_copies(False)

    files = targets.TargetFiles(d, "penta")
    if not files.meta.exists():
        print(f"  (no target table in {d}: `pentadice solve --targets --data {d}` builds it)")
        return
    size = files.data.stat().st_size
    line(
        f"target table ({size / 1e6:.0f} MB data): index checked, data lazily",
        median_ms(lambda: targets.load(rs, d), 5),
    )
    line(
        "target table, every chunk checked (`verify`)",
        median_ms(lambda: targets.load(rs, d, verify=True), 3),
    )
    from pentadice.advisor import Advisor

    advisor = Advisor.load("penta", str(d), solve_missing=False, compiled=False)
    questions = [(advisor.advise(s), 150 + s.sheet.totals(rs)["total"]) for s in situations(rs, 200)]

    def ask(tt, checked: bool) -> list[float]:
        if not checked:
            tt.checked.ensure = lambda first, stop: None
        out = []
        for advice, target in questions:
            start = time.perf_counter()
            targets.option_probabilities(tt, advice, target)
            out.append(1000 * (time.perf_counter() - start))
        return out

    with_checks = ask(targets.load(rs, d), True)  # a fresh table: every chunk a question reads is checked once
    without = ask(targets.load(rs, d), False)
    n = len(questions)
    line(f"{n} target questions, chunks checked as read: median", statistics.median(with_checks))
    line(f"{n} target questions, unchecked (the previous reads): median", statistics.median(without))
    line(f"{n} target questions, checked: total", sum(with_checks), sum(without), "unchecked")


def situations(rs, n: int) -> list:
    """``n`` random situations of games in progress (sheets that can occur)."""
    from pentadice.sheet import Sheet, possible_points
    from pentadice.situation import Situation

    rng = np.random.default_rng(7)
    possible = possible_points(rs)
    out = []
    while len(out) < n:
        boxes = rng.choice(list(rs.boxes), size=int(rng.integers(0, len(rs.boxes))), replace=False)
        sheet = Sheet({str(b): int(rng.choice(sorted(possible[str(b)]))) for b in boxes}, 0)
        dice = [int(x) for x in rng.integers(1, 7, size=rs.dice)]
        out.append(Situation.make(rs, dice, int(rng.integers(0, rs.rolls)), sheet))
    return out


if __name__ == "__main__":
    main()
