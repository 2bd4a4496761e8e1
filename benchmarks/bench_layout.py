"""The rows a reorganisation of the package could slow (issue 23: the layer folders, the command line one module
per command, the web API in routers), this checkout against the commit before it, interleaved A B A B.

Each row prints both medians and the median of the per-round ratios (after / before); a row more than 10 %
slower by that ratio is marked. Whole commands run in fresh processes as the user runs them; cold rows have a
fresh ``NUMBA_CACHE_DIR``; the web row answers new situations through the application in one process (no
network: the routers' cost, not the socket's). Prints figures; asserts nothing.

    python benchmarks/bench_layout.py [--before COMMIT] [--rounds N] [--cold-rounds N]
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
from collections.abc import Callable
from pathlib import Path

import bench_all
import bench_passes
from bench_passes import ROOT, cold_env, command, rounds

BEFORE = "61b4319"  # the last commit before the layer folders (issue 23)
SLOWER = 1.10  # a row whose median ratio is above this is marked

WEB = """
import json, random, sys, time
try:
    from pentadice.faces.web.api import create_app
except ImportError:  # a checkout before the layer folders
    from pentadice.web.api import create_app
from pentadice.advisor import Advisor
from fastapi.testclient import TestClient

advisor = Advisor.load("penta", sys.argv[1], solve_missing=False)
client = TestClient(create_app({"penta": advisor}, static_dir=None), base_url="http://localhost")
points = {"ones": 2, "twos": 4, "threes": 9, "chance": 22, "full_house": 25, "penta": 50}
rng = random.Random(1)
bodies = []
for _ in range(int(sys.argv[2])):
    sheet = {b: points[b] for b in rng.sample(sorted(points), 3)}
    bodies.append({"dice": [rng.randint(1, 6) for _ in range(5)], "rolls_left": rng.randint(0, 2), "sheet": sheet})
client.post("/api/advise", json=bodies[0])  # the first answer compiles nothing: the advisor is loaded
start = time.perf_counter()
for body in bodies:
    assert client.post("/api/advise", json=body).status_code == 200
print(json.dumps((time.perf_counter() - start) / len(bodies)))
"""


def web_seconds(checkout: Path, data: Path, n: int) -> float:
    """Seconds per ``POST /api/advise`` of a new situation, in one process of ``checkout``."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    out = subprocess.run(
        [sys.executable, "-c", WEB, str(data), str(n)], env=env, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def report(what: str, figures: dict[str, list[float]], unit: str = "s") -> None:
    """One row: each version's median and the median of the per-round ratios, marked when over SLOWER."""
    after, before = figures["after"], figures["before"]
    ratio = statistics.median(a / b for a, b in zip(after, before, strict=True) if b > 0)
    mark = " (slower by more than 10 %)" if ratio > SLOWER else ""
    medians = f"after {statistics.median(after):.4g} {unit}; before {statistics.median(before):.4g} {unit}"
    print(f"| {what} | {medians} | {ratio:.2f}x{mark} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each warm figure")
    parser.add_argument("--cold-rounds", type=int, default=2, help="rounds of each cold (empty cache) figure")
    args = parser.parse_args(argv)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    load = os.getloadavg()
    print(f"cores: {os.cpu_count()}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="pentadice-layout-"))
    versions = {"after": ROOT, "before": bench_passes.checkout_before(args.before, work / "before")}
    try:
        data = {name: work / f"data-{name}" for name in versions}
        lines = work / "batch.jsonl"
        bench_all.batch_lines(lines, 20_000)
        for name, checkout in versions.items():  # the tables, and every kernel in each checkout's cache
            command(checkout, ["solve", "--data", str(data[name]), "--json"])
            command(checkout, ["simulate", "-n", "1000", "--data", str(data[name]), "--json"])

        def name_of(checkout: Path) -> str:
            return "after" if checkout == ROOT else "before"

        def timed(args_of) -> Callable[[Path], float]:
            return lambda checkout: command(checkout, args_of(data[name_of(checkout)]))[0]

        print("| what the user runs | medians | after/before |\n| --- | --- | --- |", flush=True)
        advise = ["advise", "1", "1", "3", "4", "6", "--sheet", "ones=3", "--data"]
        simulate = ["simulate", "-n", "200000", "--seed", "1", "--json", "--data"]
        distribution = ["distribution", "--sheet", "ones=3 twos=6 chance=20", "--json", "--data"]
        warm = [
            ("`pentadice --help`", lambda d: ["--help"]),
            ("`pentadice advise 1 1 3 4 6`, one question", lambda d: [*advise, str(d)]),
            ("`pentadice advise 1 1 3 4 6 --json`", lambda d: [*advise, str(d), "--json"]),
            ("`pentadice solve`, warm", lambda d: ["solve", "--data", str(d), "--json"]),
            ("`pentadice simulate -n 200000`, warm", lambda d: [*simulate, str(d)]),
            ("`pentadice distribution --sheet ...`, warm", lambda d: [*distribution, str(d)]),
        ]
        for what, args_of in warm:
            report(what, rounds(versions, args.rounds, timed(args_of)))

        def batch(checkout: Path) -> float:
            env = dict(os.environ, PYTHONPATH=str(checkout))
            batch_args = ["advise", "--batch", "-", "--data", str(data[name_of(checkout)])]
            with open(lines, "rb") as fh:
                start = time.perf_counter()
                subprocess.run([*bench_passes.PENTADICE, *batch_args], stdin=fh, stdout=subprocess.DEVNULL, env=env,
                               check=True, cwd=checkout)  # fmt: skip
                return time.perf_counter() - start

        report("`pentadice advise --batch -` of 20,000 lines", rounds(versions, args.rounds, batch))
        passes = rounds(versions, args.rounds, lambda c: bench_passes.value_pass(c, "penta", 3))
        report("the value pass (Penta, one thread, in one process)", passes)
        web = rounds(versions, args.rounds, lambda c: web_seconds(c, data[name_of(c)], 300))
        report("`POST /api/advise` of a new situation, in process", web)

        def cold(args_of) -> Callable[[Path], float]:
            def measure(checkout: Path) -> float:
                with tempfile.TemporaryDirectory() as cache:
                    return command(checkout, args_of(data[name_of(checkout)]), cold_env(cache))[0]

            return measure

        first_solve = cold(lambda d: ["solve", "--data", str(d), "--json"])
        report("first `pentadice solve` (empty cache)", rounds(versions, args.cold_rounds, first_solve))
        first_simulate = cold(lambda d: ["simulate", "-n", "2000", "--json", "--data", str(d)])
        report("first `pentadice simulate -n 2000` (empty cache)", rounds(versions, args.cold_rounds, first_simulate))
    finally:
        bench_passes.clean_up(work, worktree=True)


if __name__ == "__main__":
    main()
