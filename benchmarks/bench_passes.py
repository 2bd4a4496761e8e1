"""The rows of issue 22 (one traversal for every pass), this checkout against an earlier commit, interleaved.

Every figure is a whole command in a fresh process, as the user runs it, except the value pass (in-process,
after a warm-up). Cold rows have a fresh ``NUMBA_CACHE_DIR`` and a fresh table directory. The two versions run
one after the other, A B A B, and each row prints both medians and the median of the per-round ratios
(after / before): on a busy machine only that ratio is worth quoting. yatzy-solver's build of the same game is
measured in the same run where its Python package is installed. Prints figures; asserts nothing.

    python benchmarks/bench_passes.py [--before COMMIT] [--rounds N] [--cold-rounds N] [--maxi]

``--before`` (default: the commit before the traversal, 116af9c) is checked out into a temporary git worktree;
``--before ''`` measures this checkout alone. ``--maxi`` adds Maxi Yatzy's second moments (minutes each).
Ends with Numba's compile events of a first ``solve`` (``numba.core.event``): where a cold run's seconds go.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PENTADICE = [sys.executable, "-m", "pentadice"]
BEFORE = "116af9c"  # the last commit before the shared traversal (issue 22)


def command(checkout: Path, args: list[str], env: dict | None = None) -> tuple[float, str]:
    """``(wall seconds, stdout)`` of ``pentadice ARGS`` run from ``checkout``'s sources in a fresh process. A
    ``solve`` of a checkout that builds every table a game reads (issue 24) builds the values (and moments) alone,
    as the checkouts before it did: the rows compare the same work."""
    if args[:1] == ["solve"] and "--targets" not in args and (checkout / "pentadice/players/prepared.py").exists():
        args = ["solve", "--skip", "chances,win,win-end", *args[1:]]
    env = dict(env or os.environ, PYTHONPATH=str(checkout))
    start = time.perf_counter()
    proc = subprocess.run([*PENTADICE, *args], env=env, capture_output=True, text=True, cwd=checkout)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed in {checkout}: {proc.stderr.strip()[-2000:]}")
    return wall, proc.stdout


def cold_env(cache: str) -> dict:
    return dict(os.environ, NUMBA_CACHE_DIR=cache)


VALUE_PASS = """
import json, sys, time
try:
    from pentadice.game import rules
except ImportError:  # a checkout before the layer folders (issue 23)
    from pentadice import rules
from pentadice.solver import induction
rs = rules.get_rules(sys.argv[1])
induction.compile_kernels_for(rs)
induction.solve_values(rs)
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    induction.solve_values(rs)
    times.append(time.perf_counter() - start)
print(json.dumps(times))
"""


def value_pass(checkout: Path, name: str, runs: int) -> float:
    """Median seconds of the value pass of ``name`` on one thread, in one warm process of ``checkout``."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    out = subprocess.run(
        [sys.executable, "-c", VALUE_PASS, name, str(runs)], env=env, capture_output=True, text=True, check=True
    ).stdout
    return statistics.median(json.loads(out))


def rounds(versions: dict[str, Path], n: int, measure) -> dict[str, list]:
    """``measure(checkout)`` for each version in turn, ``n`` rounds (A B A B): each version's figures."""
    out: dict[str, list] = {name: [] for name in versions}
    for _ in range(n):
        for name, checkout in versions.items():
            out[name].append(measure(checkout))
    return out


def report(what: str, figures: dict[str, list[float]], unit: str = "s", goal: str = "") -> None:
    """One row: each version's median and, with two versions, the median of the per-round ratios."""
    parts = [f"{name} {statistics.median(v):.3f} {unit}" for name, v in figures.items()]
    if len(figures) == 2:
        after, before = figures["after"], figures["before"]
        ratios = [a / b for a, b in zip(after, before, strict=True) if b > 0]
        parts.append(f"after/before {statistics.median(ratios):.2f}x")
    print(f"| {what} | {'; '.join(parts)} | {goal} |", flush=True)


def peer_seconds(name: str, runs: int) -> float | None:
    """Median seconds of yatzy-solver's in-memory build of the same game (all cores), or None without it."""
    import bench_all

    ys = bench_all.peer()
    return None if ys is None else bench_all.peer_build_seconds(ys, {"penta": "american"}[name], runs)


COMPILE_EVENTS = """
import importlib.util, json, sys
from numba.core import event
try:
    from pentadice.faces.cli import main
except ImportError:  # a checkout before the layer folders (issue 23)
    from pentadice.cli import main
totals, stack = {}, []
args = ["solve", "--data", sys.argv[1], "--json"]
if importlib.util.find_spec("pentadice.players.prepared"):  # the values alone, as before issue 24
    args[1:1] = ["--skip", "chances,win,win-end"]
with event.install_recorder("numba:compile") as rec:
    try:
        main(args, standalone_mode=False)
    except SystemExit:
        pass
for ts, ev in rec.buffer:  # each function's own seconds: its compile less the compiles it triggered
    if ev.is_start:
        stack.append([ts, 0.0])
        continue
    start, inner = stack.pop()
    if stack:
        stack[-1][1] += ts - start
    name = ev.data["dispatcher"].py_func.__qualname__
    totals[name] = totals.get(name, 0.0) + ts - start - inner
print(json.dumps(sorted(totals.items(), key=lambda kv: -kv[1])))
"""


def compile_breakdown(checkout: Path) -> list[tuple[str, float]]:
    """Seconds of each function's own compile in a first ``solve`` (empty cache), from Numba's compile events
    (the compiles it triggered not counted in it): where a cold run's seconds go."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as data:
        env = dict(cold_env(cache), PYTHONPATH=str(checkout))
        out = subprocess.run(
            [sys.executable, "-c", COMPILE_EVENTS, data], env=env, capture_output=True, text=True, check=True
        ).stdout
    return json.loads(out.strip().splitlines()[-1])


def checkout_before(commit: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), commit], check=True,
                   capture_output=True)  # fmt: skip
    return where


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with ('' for none)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each warm figure")
    parser.add_argument("--cold-rounds", type=int, default=2, help="rounds of each cold (empty cache) figure")
    parser.add_argument("--maxi", action="store_true", help="also Maxi Yatzy's second moments (minutes each)")
    args = parser.parse_args(argv)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    load = os.getloadavg()
    print(f"cores: {os.cpu_count()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="pentadice-passes-"))
    versions = {"after": ROOT}
    if args.before:
        versions["before"] = checkout_before(args.before, work / "before")
    try:
        data = {name: work / f"data-{name}" for name in versions}
        for name, checkout in versions.items():  # tables for simulate, and every kernel in the checkout's cache
            command(checkout, ["solve", "--data", str(data[name]), "--json"])
            command(checkout, ["solve", "--rules", "yatzy", "--data", str(data[name]), "--json"])
        print("| what the user runs | measured | goal |\n| --- | --- | --- |", flush=True)

        def cold_solve(checkout: Path) -> float:
            with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
                return command(checkout, ["solve", "--data", out, "--json"], cold_env(cache))[0]

        report("first `pentadice solve` (empty cache and table directory, SDs included)",
               rounds(versions, args.cold_rounds, cold_solve), goal="<= 4 s")  # fmt: skip
        summaries: dict[str, list[dict]] = {name: [] for name in versions}

        values_only: dict[str, list[dict]] = {name: [] for name in versions}

        def warm_solve(checkout: Path) -> float:
            name = "after" if checkout == ROOT else "before"
            d = ["--data", str(data[name]), "--json"]
            wall, out = command(checkout, ["solve", *d])
            summaries[name].append(json.loads(out))
            values_only[name].append(json.loads(command(checkout, ["solve", "--no-moments", *d])[1]))
            return wall

        report("`pentadice solve`, warm, whole process", rounds(versions, args.rounds, warm_solve), goal="<= 1.0 s")
        # The passes of a solve with the SDs (before: the value pass and the second-moment pass; after: one pass)
        # against the value pass alone (`--no-moments`), each round's pair.
        ratio = {
            n: [
                (s["seconds"] + s["moments_seconds"]) / v["seconds"]
                for s, v in zip(summaries[n], values_only[n], strict=True)
            ]
            for n in versions
        }
        report("the passes of `solve` (values and SDs) against the value pass alone", ratio, unit="x",
               goal="<= 1.3x")  # fmt: skip

        def warm_yatzy(checkout: Path) -> float:
            name = "after" if checkout == ROOT else "before"
            return command(checkout, ["solve", "--rules", "yatzy", "--data", str(data[name]), "--json"])[0]

        report("`pentadice solve --rules yatzy`, warm, whole process", rounds(versions, args.rounds, warm_yatzy),
               goal="<= 1.0 s")  # fmt: skip

        def cold_simulate(checkout: Path) -> float:
            name = "after" if checkout == ROOT else "before"
            simulate = ["simulate", "-n", "2000", "--seed", "1", "--json", "--data", str(data[name])]
            with tempfile.TemporaryDirectory() as cache:
                return command(checkout, simulate, cold_env(cache))[0]

        report("first `pentadice simulate -n 2000` (empty cache)", rounds(versions, args.cold_rounds, cold_simulate),
               goal="<= 3 s")  # fmt: skip
        passes = rounds(versions, args.rounds, lambda c: value_pass(c, "penta", 5))
        report("the value pass itself (Penta, one thread, warm)", passes, goal="within 5 % of before")
        peer = peer_seconds("penta", 3)
        if peer is not None:
            mine = statistics.median(passes["after"])
            print(f"| yatzy-solver's build of Yahtzee (all cores) | {peer:.3f} s: {peer / mine:.1f}x the value pass "
                  "above | |", flush=True)  # fmt: skip
        if args.maxi:

            def maxi(checkout: Path) -> float:
                name = "after" if checkout == ROOT else "before"
                d = ["--rules", "maxi-yatzy", "--data", str(data[name]), "--json"]
                alone = json.loads(command(checkout, ["solve", "--no-moments", *d])[1])
                both = json.loads(command(checkout, ["solve", "--moments", *d])[1])
                return (both["seconds"] + both["moments_seconds"]) / alone["seconds"]

            report("Maxi Yatzy: the passes with the SDs against the value pass alone", rounds(versions, 1, maxi),
                   unit="x", goal="<= 1.3x")  # fmt: skip
        print("\nCompile events of a first `pentadice solve` (seconds, top-level compiles):")
        for name, checkout in versions.items():
            events = compile_breakdown(checkout)
            total = sum(s for _, s in events)
            shown = ", ".join(f"{fn} {s:.1f}" for fn, s in events[:10])
            print(f"  {name}: {total:.1f} s in all: {shown}", flush=True)
    finally:
        clean_up(work, bool(args.before))


def clean_up(work: Path, worktree: bool) -> None:
    """Remove the work directory (and its git worktree ``before``); say the machine's load at the end."""
    if worktree:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / "before")],
                       capture_output=True)  # fmt: skip
    subprocess.run(["rm", "-rf", str(work)], check=False)
    load = os.getloadavg()
    print(f"load average at the end {load[0]:.2f} {load[1]:.2f}")


if __name__ == "__main__":
    main()
