"""What checking the tables costs (pentadice.tables.chunks): loading each kind with its chunks checked against the way
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


def figures(d: Path, runs: int) -> list[tuple[str, float, float | None]]:
    """``(what, milliseconds, the previous version's milliseconds or None)`` of each figure, Penta's tables in
    ``d``; the target rows only where its target table is."""
    from pentadice.advisor import Advisor, reach
    from pentadice.game import rules
    from pentadice.tables import chunks, moment_files, table, targets

    rs = rules.get_rules("penta")
    out: list[tuple[str, float, float | None]] = []
    values = (median_ms(lambda: table.load(rs, d), runs), median_ms(lambda: sha_load(d / "penta.npy"), runs))
    out.append(("load Penta's value table (8 MB), every chunk checked", *values))
    if (d / "penta.m2.npy").exists():
        m2 = (
            median_ms(lambda: moment_files.load_moments(rs, d), runs),
            median_ms(lambda: sha_load(d / "penta.m2.npy"), runs),
        )
        out.append(("load its second moments (8 MB), every chunk checked", *m2))
    chunks.use_private_copies(True)
    out.append(
        ("load the value table as a private copy (the server)", median_ms(lambda: table.load(rs, d), runs), None)
    )
    chunks.use_private_copies(False)
    if not targets.TargetFiles(d, "penta").meta.exists():
        return out
    out.append(("load the target table (index checked, data lazily)", median_ms(lambda: targets.load(rs, d), 5), None))
    out.append(
        ("load the target table, every chunk checked (`verify`)", median_ms(lambda: targets.load(rs, d, True), 3), None)
    )
    advisor = Advisor.load("penta", str(d), solve_missing=False, compiled=False)
    questions = [(advisor.advise(s), 150 + s.sheet.totals(rs)["total"]) for s in situations(rs, 200)]

    def ask(tt, checked: bool) -> list[float]:
        if not checked:
            tt.checked.ensure = lambda first, stop: None
        times = []
        for advice, target in questions:
            start = time.perf_counter()
            reach.option_probabilities(tt, advice, target)
            times.append(1000 * (time.perf_counter() - start))
        return times

    checked = ask(targets.load(rs, d), True)  # a fresh table: each chunk a question reads is checked once
    unchecked = ask(targets.load(rs, d), False)
    n = len(questions)
    out.append(
        (
            f"a target question's probabilities, median of {n} on a fresh table",
            statistics.median(checked),
            statistics.median(unchecked),
        )
    )
    out.append((f"{n} target questions on a fresh table, in all", sum(checked), sum(unchecked)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="data", help="table directory holding Penta's tables [data]")
    parser.add_argument("--runs", type=int, default=15, help="runs per figure (the median is printed) [15]")
    args = parser.parse_args()
    print(f"Checked tables, Penta's in {args.data} (medians; before: memory-mapped, SHA-256 of the whole array):")
    for what, new, old in figures(Path(args.data), args.runs):
        before = f"  (before {old:.2f} ms: {new / old:.2f}x)" if old else ""
        print(f"  {what:<66}{new:9.2f} ms{before}", flush=True)


def situations(rs, n: int) -> list:
    """``n`` random situations of games in progress (sheets that can occur)."""
    from pentadice.game.sheet import Sheet, possible_points
    from pentadice.game.situation import Situation

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
