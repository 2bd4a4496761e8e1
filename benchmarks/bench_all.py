"""Every figure of the speed table as the user feels it: whole commands in fresh processes, the first runs with
an empty Numba cache (a fresh ``NUMBA_CACHE_DIR``), medians of several runs, and the reference yatzy-solver
measured in the same run. Prints one summary table at the end (Markdown) and saves it for the Performance page
(benchmarks/results.py); asserts nothing.

Run with ``make bench`` (about twenty minutes on two cores, the million-line batch and Maxi Yatzy's solve, second
moments and a chunk of each of its other tables included; ``--batch-lines N`` for a smaller batch, ``--no-maxi``,
``--no-maxi-moments``, ``--no-targets`` and ``--win-games 0`` to skip
the long rows, ``--family-only`` for the Yatzy family's rows alone). Then the rows of the one traversal
(``benchmarks/bench_passes.py``): this checkout against the commit before it, interleaved (``--no-passes`` skips
them, ``--passes-before COMMIT`` picks another), and those of the layer folders
(``benchmarks/bench_layout.py``: against the commit before them; ``--no-layout`` skips them), and the game
latency (``benchmarks/bench_game_latency.py``: the set-up of Penta and Yatzy from an empty table directory, the
server's start, and seeded games through the API, each request timed; ``--no-latency`` skips it). The machine's
load is printed with the table: figures taken on a busy machine are slower, the cold ones most of all.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import results

PENTADICE = [sys.executable, "-m", "pentadice"]
ROWS: list[tuple[str, str, str]] = []  # (what the user runs, figure, goal)


def row(what: str, figure: str, goal: str) -> None:
    ROWS.append((what, figure, goal))
    print(f"  {what}: {figure}", flush=True)


def run(args: list[str], env: dict | None = None, stdin=None) -> tuple[float, str]:
    """``(wall seconds, stdout)`` of one command in a fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*PENTADICE, *args],
        env=env,
        stdin=stdin or subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {err.strip()[-2000:]}")
    return wall, out


def wall_and_peak(args: list[str], env: dict | None = None, stdin=None) -> tuple[float, int]:
    """Wall seconds and peak resident KB of one command (``os.wait4``: this child's own figures)."""
    start = time.perf_counter()
    proc = subprocess.Popen([*PENTADICE, *args], env=env, stdin=stdin, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode})")
    return wall, usage.ru_maxrss


def median(fn: Callable[[], float], runs: int) -> tuple[float, list[float]]:
    times = [fn() for _ in range(runs)]
    return statistics.median(times), times


def fresh_cache_env(cache: str) -> dict:
    return dict(os.environ, NUMBA_CACHE_DIR=cache)


def cold(args: list[str], runs: int, before: list[list[str]] = ()) -> float:
    """Median wall of ``args`` with an empty Numba cache (``before``: commands run first in the same cache)."""

    def once() -> float:
        with tempfile.TemporaryDirectory() as cache:
            env = fresh_cache_env(cache)
            for b in before:
                run(b, env)
            return run(args, env)[0]

    return median(once, runs)[0]


def batch_lines(path: Path, n: int, seed: int = 1) -> None:
    """``n`` batch lines of random mid-game situations (three boxes filled)."""
    rng = np.random.default_rng(seed)
    points = {"ones": 2, "twos": 4, "threes": 9, "chance": 22, "full_house": 25, "penta": 50}
    names = list(points)
    sheets = [
        json.dumps({names[a]: points[names[a]], names[b]: points[names[b]], names[c]: points[names[c]]})
        for a in range(6)
        for b in range(6)
        for c in range(6)
        if len({a, b, c}) == 3
    ]
    dice = rng.integers(1, 7, size=(n, 5))
    rolls = rng.integers(0, 3, size=n)
    which = rng.integers(0, len(sheets), size=n)
    with open(path, "w") as fh:
        for i in range(n):
            d = dice[i]
            fh.write(
                f'{{"dice": [{d[0]}, {d[1]}, {d[2]}, {d[3]}, {d[4]}], "rolls_left": {rolls[i]}, '
                f'"sheet": {sheets[which[i]]}}}\n'
            )


def first_answer(args: list[str], path: Path) -> float:
    """Seconds from the start of the command to its first answer line, reading the lines from ``path``."""
    start = time.perf_counter()
    with open(path, "rb") as fh:
        proc = subprocess.Popen([*PENTADICE, *args], stdin=fh, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        proc.stdout.readline()
        seconds = time.perf_counter() - start
        proc.kill()
        proc.wait()
    return seconds


def run_to_file(args: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak resident KB and stdout of one command (``os.wait4``: this child's own peak, not the
    largest of every child so far as ``RUSAGE_CHILDREN`` gives)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([*PENTADICE, *args], env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {err.read().strip()[-2000:]}")
        return wall, usage.ru_maxrss, out.read()


def compile_for(name: str) -> None:
    """Fill Numba's cache with the solver kernel for a rule set's lanes (Maxi Yatzy's 80), in a child process,
    so that the solve measured after it is warm, as a user's second solve is."""
    code = (
        "from pentadice.game import rules\nfrom pentadice.solver import induction\n"
        f"induction.compile_kernels_for(rules.get_rules({name!r}))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def peer_build_seconds(ys, variant: str, runs: int) -> float:
    """Median seconds of the peer's in-memory build of ``variant`` (all cores, f64 values)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        ys.Solver.build(ys.Variant(variant))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def extras(summaries: list[dict]) -> str:
    """The write and second-moment seconds of ``solve --json`` summaries (medians), as a row shows them."""
    parts = [f"write {statistics.median(s['write_seconds'] for s in summaries):.2f} s"]
    moments = [s["moments_seconds"] for s in summaries if s.get("moments_seconds")]
    if moments:  # a pass of their own (a reduced game); solved with the values they take no time apart
        parts.append(f"SDs {statistics.median(moments):.2f} s")
    elif any(s.get("sd") is not None for s in summaries):
        parts.append("SDs in the same pass")
    return ", ".join(parts)


def family(args: argparse.Namespace, work: Path, ys) -> None:
    """The Yatzy family's rows: Scandinavian Yatzy's solve warm beside the peer's build of the same
    game, and Maxi Yatzy's solve (one run: a minute or two) with its peak memory."""
    data = work / "family"
    d = ["--data", str(data)]
    print("the Yatzy family:", flush=True)
    solve = ["solve", "--rules", "yatzy", "--only", "values,moments", "--json", *d]
    run(solve)  # the cache of this checkout, filled; the table written once
    run([*solve, "--no-moments"])
    warm, values_only = [], []
    for _ in range(args.runs):
        wall, out_ = run(solve)
        warm.append(json.loads(out_) | {"wall": wall})
        values_only.append(json.loads(run([*solve, "--no-moments"])[1]))
    value = warm[0]["expected_score"]
    passes = statistics.median(s["seconds"] for s in values_only)  # the value pass alone, as the peer's build
    wall = statistics.median(s["wall"] for s in warm)
    theirs = peer_build_seconds(ys, "yatzy-scandinavian", max(3, args.runs // 2)) if ys is not None else None
    ref = f" (yatzy-solver `yatzy-scandinavian` {theirs:.2f} s: {theirs / passes:.1f}x)" if theirs else ""
    row(
        f"value pass of `solve --rules yatzy --no-moments`, {warm[0]['threads']} threads, warm",
        f"{passes:.3f} s{ref}, expected score {value:.10f}",
        "<= 1 s (yatzy-solver 8.5 s here); 248.4399894 published",
    )
    ref = f"; yatzy-solver {theirs:.2f} s: {theirs / wall:.1f}x" if theirs else ""
    row(
        "`pentadice solve --rules yatzy`, whole process, warm",
        f"{wall:.2f} s ({extras(warm)}{ref})",
        "values and SDs in one pass, and the write",
    )
    if not args.maxi:
        return
    compile_for("maxi-yatzy")
    wall, peak, out_ = run_to_file(["solve", "--rules", "maxi-yatzy", "--json", *d])
    summary = json.loads(out_)
    size = sum(f.stat().st_size for f in data.glob("maxi-yatzy*"))
    notes = extras([summary])
    if summary.get("moments_seconds") is None:
        notes += "; no SDs: `solve --moments` adds them"
    if summary["compile_seconds"] > 1:  # the cache was not warm after all: say so rather than hide it
        notes += f"; JIT compile {summary['compile_seconds']:.1f} s"
    row(
        "`pentadice solve --rules maxi-yatzy` (one run)",
        f"value pass {summary['seconds']:.1f} s, whole process {wall:.1f} s ({notes}), "
        f"peak {peak / 1024**2:.2f} GB, {size / 1e6:.0f} MB on disk, expected score {summary['expected_score']:.4f}",
        "<= 110 s, <= 4 GB; 383.3054 (published, float32)",
    )
    simulate = ["simulate", "--rules", "maxi-yatzy", "-n", "20000", "--seed", "7", "--json", *d]
    run_to_file(simulate)  # the simulator's kernel for 80 lanes and 6 dice compiled once, as a user's first run
    wall, peak, out_ = run_to_file(simulate)
    games = json.loads(out_)
    values = (data / "maxi-yatzy.npy").stat().st_size
    row(
        "`pentadice simulate --rules maxi-yatzy -n 20000` (one run, warm)",
        f"{games['games_per_second']:,.0f} games/s, whole process {wall:.1f} s, peak {peak / 1024**2:.2f} GB "
        f"(the value table {values / 1e9:.2f} GB), mean {games['mean']:.2f}",
        ">= 20,000 games/s; peak within the table plus a little",
    )
    if args.maxi_moments:  # the second moments' own pass (about ten minutes on two cores)
        wall, peak, out_ = run_to_file(["solve", "--rules", "maxi-yatzy", "--only", "values,moments", "--moments",
                                        "--json", *d])  # fmt: skip
        summary = json.loads(out_)
        row(
            "`pentadice solve --rules maxi-yatzy --moments` (one run)",
            f"values and second moments in one pass {summary['seconds']:.1f} s, whole process {wall:.1f} s, "
            f"peak {peak / 1024**2:.2f} GB, SD at the start {summary['sd']:.4f}",
            "587 s before the one traversal",
        )
    # Each table beyond the values, one chunk of it (benchmarks/bench_outofcore.py: docs/scale.md).
    chunk_rows = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("bench_outofcore.py")), "--runs", "3"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    for line in chunk_rows.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 2 and not cells[0].startswith(("---", "Maxi Yatzy table")):
            row(f"Maxi Yatzy {cells[0]} (one chunk, median of 3)", cells[1], "docs/scale.md")


def peer():
    try:
        import yatzy_solver as ys
    except ImportError:
        return None
    return ys


def main_rows(args: argparse.Namespace, work: Path, ys) -> None:
    """Every row of the speed table but the Yatzy family's (which it calls in their place)."""
    data = work / "data"
    out = work / "out"
    d = ["--data", str(data)]
    print("solving the penta and kiriki tables (warm cache)...", flush=True)
    run(["solve", "--only", "values,moments", *d, "--json"])
    run(["solve", "--rules", "kiriki", "--only", "values,moments", *d, "--json"])

    print("first runs, empty Numba cache:", flush=True)
    solve = ["solve", "--only", "values,moments", "--out", str(out), "--json"]
    row("first `pentadice solve` (empty cache)", f"{cold(solve, args.cold_runs):.1f} s", "<= 4 s")
    simulate = ["simulate", "-n", "2000", "--seed", "1", "--json", *d]
    row("first `pentadice simulate -n 2000` (empty cache)", f"{cold(simulate, args.cold_runs):.1f} s", "<= 5 s")
    greedy = [*simulate, "--strategy", "greedy"]
    after = cold(greedy, args.cold_runs, before=[simulate])
    row("then `simulate --strategy greedy` (same cache)", f"{after:.1f} s", "<= 5 s, nothing compiled again")
    kiriki = [*simulate, "--rules", "kiriki"]
    after = cold(kiriki, args.cold_runs, before=[simulate])
    row("then `simulate --rules kiriki` (same cache)", f"{after:.1f} s", "<= 5 s, nothing compiled again")

    print("warm:", flush=True)
    run(solve)  # the cache of this checkout, filled
    warm = [run(solve) for _ in range(args.runs)]
    wall = statistics.median(w for w, _ in warm)
    write = statistics.median(json.loads(out_)["write_seconds"] for _, out_ in warm)
    row("`pentadice solve`, whole process", f"{wall:.2f} s (write {write:.2f} s)", "<= 0.8 s")
    code = (
        "import json, time\nfrom pentadice import solver\nfrom pentadice.game import rules\n"
        "rs = rules.get_rules('penta')\n"
        "solver.solve(rs)\nprint(json.dumps([solver.solve(rs).solve_seconds for _ in range(%d)]))"
    )
    proc = subprocess.run([sys.executable, "-c", code % args.runs], capture_output=True, text=True, check=True)
    mine = statistics.median(json.loads(proc.stdout))
    theirs = peer_build_seconds(ys, "american", max(3, args.runs // 2)) if ys is not None else None
    ref = f" (yatzy-solver {theirs:.2f} s: {theirs / mine:.1f}x)" if theirs else ""
    row("solve itself (kernel, in-process)", f"{mine:.3f} s{ref}", "<= 0.25 s")

    run(["simulate", "-n", "1000", "--seed", "1", *d, "--json"])
    many = ["simulate", "-n", str(args.games), "--json", *d]
    rates = [json.loads(run([*many, "--seed", str(i)])[1])["games_per_second"] for i in range(3)]
    rate = statistics.median(rates)
    ref = ""
    if ys is not None:
        solved = ys.Solver.build(ys.Variant("american"))
        n = args.games // 4
        times = []
        for i in range(3):
            start = time.perf_counter()
            solved.simulate(n, seed=i)
            times.append(time.perf_counter() - start)
        theirs = n / statistics.median(times)
        ref = f" (yatzy-solver {theirs:,.0f}/s: {rate / theirs:.1f}x)"
    row("`pentadice simulate`, optimal, warm", f"{rate:,.0f} games/s{ref}", ">= 250,000 games/s")

    # Memory independent of the number of games: the peak of a run ten times longer is the same.
    peaks = {n: wall_and_peak(["simulate", "-n", str(n), "--seed", "1", "--json", *d])[1] for n in (200_000, 2_000_000)}
    row(
        "`pentadice simulate -n N` without `--out`, peak memory",
        ", ".join(f"{n:,} games: {peak / 1024:.0f} MB" for n, peak in peaks.items()),
        "independent of N",
    )

    lines = work / "situations.jsonl"
    batch_lines(lines, args.batch_lines)
    batch = ["advise", "--batch", "-", *d]
    with open(lines, "rb") as fh:
        wall, peak = wall_and_peak(batch, stdin=fh)
    first = statistics.median(first_answer(batch, lines) for _ in range(3))
    million = ""
    if args.batch_lines < 1_000_000:
        million = f" (1,000,000 lines at this rate: {wall * 1e6 / args.batch_lines:.0f} s)"
    row(
        f"`advise --batch` of {args.batch_lines:,} lines",
        f"{wall:.1f} s{million}, {peak / 1024:.0f} MB peak, first answer after {first:.2f} s",
        "1,000,000 lines <= 60 s, <= 300 MB, first answer <= 1 s",
    )

    advise = ["advise", "1", "1", "3", "4", "6", *d]
    run(advise)
    wall, _ = median(lambda: run(advise)[0], max(args.runs, 7))
    row("`pentadice advise 1 1 3 4 6`, whole process", f"{wall:.3f} s", "<= 0.15 s")

    if args.family:
        family(args, work, ys)

    print("playing to win:", flush=True)
    both = statistics.median(json.loads(out_)["seconds"] for _, out_ in warm)
    row("`solve`'s one pass, values and second moments (the SDs), 2 threads", f"{both:.2f} s", "solved with the values")
    dist = ["distribution", "--json", *d]
    run(dist)
    wall, _ = median(lambda: run(dist)[0], 3)
    row("`pentadice distribution` from the start, whole process", f"{wall:.1f} s", "<= 10 s")
    if args.targets:
        wall, peak = wall_and_peak(["solve", "--targets", "--json", *d])
        size = sum(f.stat().st_size for f in data.glob("penta.targets*"))
        row(
            "`pentadice solve --targets` (Penta)",
            f"{wall:.0f} s, peak {peak / 1024**2:.2f} GB, {size / 1e6:.0f} MB on disk",
            "<= 10 min, <= 8 GB, <= 1 GB on disk",
        )
        target = ["advise", "1", "1", "3", "4", "6", "--target", "300", *d]
        run(target)
        wall, _ = median(lambda: run(target)[0], 3)
        row("`pentadice advise 1 1 3 4 6 --target 300`, whole process", f"{wall:.2f} s", "")
    print("checked tables:", flush=True)
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_tables

    for what, ms, before in bench_tables.figures(data, 15):
        figure = f"{ms:.2f} ms" + (f" ({ms / before:.2f}x the unchecked or SHA-256 {before:.2f} ms)" if before else "")
        row(what, figure, "a query no slower than unchecked" if before else "")
    if args.win_games:
        sys.path.insert(0, str(Path(__file__).parent))
        import bench_win

        figures = bench_win.bench(args.win_games, args.win_games * 3 // 10)
        row("win tables (theta utility tables), built", f"{figures['build_seconds']:.1f} s", "")
        for players, goal in (("win,optimal", "> 51 % over >= 1,000,000 games"), ("win,optimal,optimal", "")):
            r = figures[players]
            row(
                f"`simulate --players {players}`, {r['games']:,} games: win's rate",
                f"{bench_win.line(r, 'win')} ({r['games'] / r['seconds']:,.0f} games/s)",
                goal,
            )


def run_stamp(started: dict) -> str:
    """What a figure quoted from this run must cite: the day (UTC), pentadice's version and the commit measured."""
    return f"make bench, {started['date']}, pentadice {started['version']}, commit {started['commit']}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="runs of each warm figure")
    parser.add_argument("--cold-runs", type=int, default=3, help="runs of each cold (empty cache) figure")
    parser.add_argument("--batch-lines", type=int, default=1_000_000, help="lines of the batch")
    parser.add_argument("--games", type=int, default=1_000_000, help="games of each warm simulation")
    parser.add_argument("--no-targets", dest="targets", action="store_false", help="skip the target table (minutes)")
    parser.add_argument("--win-games", type=int, default=1_000_000, help="head-to-head games of win (0: none)")
    parser.add_argument("--no-family", dest="family", action="store_false", help="skip Yatzy and Maxi Yatzy")
    parser.add_argument("--no-maxi", dest="maxi", action="store_false", help="skip the Maxi Yatzy solve (1-2 min)")
    parser.add_argument(
        "--no-maxi-moments", dest="maxi_moments", action="store_false", help="skip Maxi Yatzy's moments (10 min)"
    )
    parser.add_argument("--family-only", action="store_true", help="only the Yatzy family's rows")
    parser.add_argument(
        "--passes-before", default=None, help="the commit bench_passes compares with ('' for none; default its own)"
    )
    parser.add_argument("--no-passes", dest="passes", action="store_false", help="skip bench_passes' rows (old)")
    parser.add_argument("--no-layout", dest="layout", action="store_false", help="skip bench_layout's rows (old)")
    parser.add_argument(
        "--no-latency", dest="latency", action="store_false", help="skip the game latency (bench_game_latency)"
    )
    parser.add_argument(
        "--no-first-use", dest="first_use", action="store_false", help="skip a newcomer's first minutes (pip, play)"
    )
    args = parser.parse_args()
    # As a user runs them: Python's compiled modules (.pyc) written and used (start-up costs tens of ms more
    # without them).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    load = os.getloadavg()
    started = results.stamp()
    stamp = run_stamp(started)
    print(f"{stamp}; cores: {os.cpu_count()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    ys = peer()

    work = Path(tempfile.mkdtemp(prefix="pentadice-bench-"))
    try:
        if args.family_only:
            family(args, work, ys)
        else:
            main_rows(args, work, ys)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    load = os.getloadavg()
    ending = f"load average at the end {load[0]:.2f} {load[1]:.2f}"
    print(f"\nSummary ({stamp}; medians; {os.cpu_count()} cores, {ending}):\n")
    print("| what the user runs | measured | goal |")
    print("| --- | --- | --- |")
    for what, figure, goal in ROWS:
        print(f"| {what} | {figure} | {goal} |")
    saved = results.save("bench", started, ROWS, " ".join(["make bench", *sys.argv[1:]]))
    print(f"\n(saved to {saved.relative_to(results.ROOT)}; docs/performance.md shows them)", flush=True)
    if args.passes and not args.family_only:  # this checkout against an earlier commit
        import bench_passes

        print("\nOne traversal for every pass (benchmarks/bench_passes.py):", flush=True)
        before = [] if args.passes_before is None else ["--before", args.passes_before]
        bench_passes.main([*before, "--rounds", str(args.runs), "--cold-rounds", str(min(args.cold_runs, 2))])
    if args.layout and not args.family_only:  # this checkout against an earlier commit
        import bench_layout

        print("\nThe package in layer folders (benchmarks/bench_layout.py):", flush=True)
        bench_layout.main(["--rounds", str(args.runs), "--cold-rounds", str(min(args.cold_runs, 2))])
    if args.latency and not args.family_only:  # set-up from empty, the server's start, games through the API
        import bench_game_latency

        print("\nGame latency (benchmarks/bench_game_latency.py):", flush=True)
        latency = bench_game_latency.main([])
        results.save("bench", started, [*ROWS, *latency], " ".join(["make bench", *sys.argv[1:]]))
    if args.first_use and not args.family_only:  # from nothing: pip's and Numba's caches empty, no table
        import bench_first_use

        print("\nA newcomer's first minutes (benchmarks/bench_first_use.py):", flush=True)
        bench_first_use.main()


if __name__ == "__main__":
    main()
