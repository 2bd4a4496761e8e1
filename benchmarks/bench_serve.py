"""Load benchmark of `pentadice serve`: `wrk` POSTs advise bodies at 64 connections and reports requests/s and
p50/p99 latency (median of the runs), side by side: a situation asked again (a pool of 500, answered from the
server's cache) and a new random situation every request (benchmarks/new_situations.lua: random dice, rolls left
and sheet; answered by the compiled path), for one server worker and, where `pentadice serve` takes `--workers`,
for one per core. Then, on the one-worker server, the same while a second client (8 connections) sends good
bodies (a control: on 2 cores, a third busy process alone widens the tail) and then malformed ones, counting 5xx
answers (must be 0, and every good body answered 200) and the server's memory (RSS) before and after 100,000 and
more requests. Prints figures; asserts nothing about time, exits 1 on a 5xx.

Needs `wrk` (Debian: `apt-get install wrk`). `python benchmarks/bench_serve.py [--seconds 10] [--runs 3]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import results

BENCH = Path(__file__).parent
CONNECTIONS = 64


NEW_SCRIPT = BENCH / "new_situations.lua"  # a new random situation every request
PENTADICE = Path(sys.executable).with_name("pentadice")


# The servers' games go to a database of this run's, never the user's history.
BENCH_ENV = {**os.environ, "PENTADICE_DB": os.path.join(tempfile.mkdtemp(prefix="pentadice-bench-"), "games.sqlite3")}


def start_server(data: str | None, extra: list[str] | None = None) -> tuple[subprocess.Popen, str]:
    """`pentadice serve` on a free port with ``extra`` arguments (``--workers N``), once it answers and has
    loaded its tables (a background load would take the cores from the measured runs)."""
    args = [str(PENTADICE), "serve", "--port", "0", "--rules", "penta", *(["--data", data] if data else [])]
    proc = subprocess.Popen([*args, *(extra or [])], stdout=subprocess.PIPE, text=True, env=BENCH_ENV)
    line = proc.stdout.readline()
    match = re.search(r"http://\S+/", line)
    if not match:
        proc.kill()
        sys.exit(f"the server did not start: {line!r}")
    url = match.group(0)
    for _ in range(600):
        with urllib.request.urlopen(url + "api/health", timeout=30) as answer:
            if not json.loads(answer.read()).get("preparing"):
                break
        time.sleep(0.5)
    return proc, url


def stop_server(proc: subprocess.Popen) -> None:
    proc.send_signal(2)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def takes_workers() -> bool:
    """Whether `pentadice serve` takes ``--workers`` (listed in its help)."""
    done = subprocess.run([str(PENTADICE), "serve", "--help"], capture_output=True, text=True)
    return "--workers" in done.stdout


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process and its children waited for (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def server_pids(proc: subprocess.Popen) -> list[int]:
    """The server process and its worker processes (children), whose CPU time the rows report."""
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    found = children.read_text().split() if children.exists() else []
    return [proc.pid, *map(int, found)]


def rows(extra: list[str], data: str | None, pool: Path, bodies: list[str], seconds: int, runs: int) -> dict:
    """A server started with ``extra`` arguments: the "repeated situation" row (``pool``: ``bodies`` asked
    again and again, each asked once first) and the "new random situations" row, each the median of ``runs``
    runs of ``seconds``, with the server's CPU time per request."""
    proc, url = start_server(data, extra)
    out: dict = {}
    try:
        for body in bodies:
            post(url + "api/advise", body)
        for name, script in (("repeated", pool), ("new", NEW_SCRIPT)):
            figures = []
            for _ in range(runs):
                pids = server_pids(proc)
                before = sum(cpu_seconds(p) for p in pids)
                run = wrk(url, script, seconds)
                run["cpu_us"] = (sum(cpu_seconds(p) for p in pids) - before) / max(run["requests"], 1) * 1e6
                figures.append(run)
            out[name] = median_of(figures)
            out[name]["cpu_us"] = statistics.median(f["cpu_us"] for f in figures)
            out[name]["not_ok"] = sum(f["not_ok"] for f in figures)
    finally:
        stop_server(proc)
    return out


def post(url: str, body: str) -> None:
    request = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        answer.read()


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) / 1024


def lua_pool(bodies: list[str], count: bool) -> str:
    """A wrk script POSTing a random body of the pool each request (and counting 5xx when ``count``)."""
    pool = ",\n".join("[==[" + b + "]==]" for b in bodies)
    script = f"""
local bodies = {{
{pool}
}}
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local threads = {{}}
function setup(thread) table.insert(threads, thread) end
function init(args) math.randomseed(os.time() + math.floor(os.clock() * 1e6)); fivexx = 0; answered = 0 end
function request() return wrk.format(nil, nil, nil, bodies[math.random(#bodies)]) end
"""
    if count:
        script += """
function response(status, headers, body)
  answered = answered + 1
  if status >= 500 then fivexx = fivexx + 1 end
end
function done(summary, latency, requests)
  local f, a = 0, 0
  for _, t in ipairs(threads) do f = f + t:get("fivexx"); a = a + t:get("answered") end
  io.write(string.format("FIVEXX %d ANSWERED %d\\n", f, a))
end
"""
    return script


def situations(n: int, seed: int = 1) -> list[str]:
    """``n`` advise bodies: random dice, rerolls and sheets (a few boxes filled)."""
    rng = np.random.default_rng(seed)
    points = {"ones": 2, "twos": 4, "threes": 9, "fours": 12, "chance": 22, "full_house": 25, "penta": 50}
    out = set()
    while len(out) < n:
        boxes = rng.choice(list(points), size=int(rng.integers(0, 5)), replace=False)
        body = {
            "dice": [int(d) for d in rng.integers(1, 7, 5)],
            "rolls_left": int(rng.integers(0, 3)),
            "sheet": {str(b): points[b] for b in boxes},
        }
        out.add(json.dumps(body))
    return sorted(out)


MALFORMED = [
    "",
    "{",
    "[]",
    "null",
    '{"dice": [1, 2, 3]}',
    '{"dice": [1, 2, 3, 4, 9]}',
    '{"dice": "12345"}',
    '{"dice": [1, 2, 3, 4, 5], "rolls_left": 7}',
    '{"dice": [1, 2, 3, 4, 5], "sheet": {"fours": 7}}',
    '{"dice": [1, 2, 3, 4, 5], "sheet": {"sevens": 1}}',
    '{"dice": [1, 2, 3, 4, 5], "dice": [1, 1, 1, 1, 1]}',
    '{"dice": [1, 2, 3, 4, 5], "rolls_left": NaN}',
    '{"dice": [1, 2, 3, 4, 5], "top": 1' + "0" * 60 + "}",
    "[" * 200 + "]" * 200,
    '{"dice": [1, 2, 3, 4, 5], "rules": "chess"}',
    '{"dice": [1, 2, 3, 4, 5], "pad": "' + "x" * 70_000 + '"}',  # over the 64 KiB limit: 413
]


def wrk(url: str, script: Path, seconds: int, connections: int = CONNECTIONS) -> dict:
    args = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url + "api/advise"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", out, flags=re.M))
    fivexx = re.search(r"FIVEXX (\d+) ANSWERED (\d+)", out)
    total = int(re.search(r"(\d+) requests in", out).group(1))
    not_ok = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": to_ms(latency["50"]),
        "p99_ms": to_ms(latency["99"]),
        "requests": total,
        "fivexx": int(fivexx.group(1)) if fivexx else None,
        "answered": int(fivexx.group(2)) if fivexx else None,
        "not_ok": int(not_ok.group(1)) if not_ok else 0,  # every good body must be answered 200
        "socket_errors": re.search(r"Socket errors:.*", out).group(0) if "Socket errors" in out else None,
    }


def with_side(url: str, main: Path, side: Path, seconds: int) -> tuple[dict, int, int]:
    """A run of ``main`` at 64 connections while ``side`` runs at 8: the main figures, and the side's 5xx and
    answers. (The main client counts no answers in Lua: that would slow wrk, not the server.)"""
    args = ["wrk", "-t1", "-c8", f"-d{seconds}s", "-s", str(side), url + "api/advise"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    good = wrk(url, main, seconds)
    found = re.search(r"FIVEXX (\d+) ANSWERED (\d+)", proc.communicate()[0])
    return good, int(found.group(1)), int(found.group(2))


def to_ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[unit]


def median_of(runs: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50_ms", "p99_ms")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10, help="Seconds a run.")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pool", type=int, default=500, help="Distinct situations asked again and again.")
    parser.add_argument("--total", type=int, default=100_000, help="Requests at least, with the malformed client.")
    parser.add_argument("--data", default=None, help="Table directory (default: as the commands choose).")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install wrk)")
    cores = os.cpu_count() or 1
    started = results.stamp()
    report: dict = {"connections": CONNECTIONS, "seconds": args.seconds, "runs": args.runs}
    with tempfile.TemporaryDirectory() as tmp:
        pool = Path(tmp) / "pool.lua"
        bodies = situations(args.pool)
        pool.write_text(lua_pool(bodies, count=False))
        workers = [1, cores] if takes_workers() and cores > 1 else [1]
        report["workers"] = {}
        for n in workers:
            extra = [] if n == 1 else ["--workers", str(n)]
            report["workers"][n] = rows(extra, args.data, pool, bodies, args.seconds, args.runs)
        if len(workers) == 1:
            report["workers_note"] = "`pentadice serve --help` lists no --workers: one worker measured"
        proc, url = start_server(args.data)
        try:
            bad = Path(tmp) / "bad.lua"
            bad.write_text(lua_pool(MALFORMED, count=True))
            for body in bodies:  # warm-up: every situation of the pool asked once
                post(url + "api/advise", body)
            report["rss_start_mb"] = rss_mb(proc.pid)
            # A second client of 8 connections alongside the 64: first sending good bodies (a control: a third
            # process on the cores), then malformed ones, until 100,000 requests or more were answered.
            control = Path(tmp) / "control.lua"
            control.write_text(lua_pool(bodies, count=True))
            report["with_good_side"] = median_of(
                [with_side(url, pool, control, args.seconds)[0] for _ in range(args.runs)]
            )
            total = fivexx = 0
            mixed = []
            rss_before = rss_mb(proc.pid)
            while total < args.total:
                good, side_fivexx, side_answered = with_side(url, pool, bad, args.seconds)
                mixed.append(good)
                total += good["requests"] + side_answered
                fivexx += good["not_ok"] + side_fivexx
                report["malformed_answered"] = report.get("malformed_answered", 0) + side_answered
            report["with_malformed"] = median_of(mixed)
            report["with_malformed"].update(requests=total, fivexx=fivexx, runs=len(mixed))
            report["rss_before_mb"], report["rss_after_mb"] = rss_before, rss_mb(proc.pid)
        finally:
            stop_server(proc)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        m, c = report["with_malformed"], report["with_good_side"]
        runs = f"median of {args.runs}"
        print(f"pentadice serve, POST /api/advise, {CONNECTIONS} connections, wrk, {cores} cores, {runs}")
        print(f"  {'':44}{'req/s':>8}  {'p50':>8}  {'p99':>8}  {'server CPU/req':>14}")
        for n, figures in report["workers"].items():
            for name, label in (
                ("repeated", f"repeated situation ({args.pool:,}, cached)"),
                ("new", "new random situations"),
            ):
                f = figures[name]
                print(f"  {label + (f', {n} workers' if n > 1 else ''):44}{f['rps']:8,.0f}  {f['p50_ms']:6.1f}ms  "
                      f"{f['p99_ms']:6.1f}ms  {f['cpu_us']:11.0f} us"
                      + (f"  ({f['not_ok']} not 200)" if f["not_ok"] else ""))  # fmt: skip
        if "workers_note" in report:
            print(f"  ({report['workers_note']})")
        print(f"  with a second client sending good bodies: {c['rps']:4,.0f} req/s  "
              f"p50 {c['p50_ms']:.1f} ms  p99 {c['p99_ms']:.1f} ms (control)")  # fmt: skip
        print(f"  with a client sending malformed bodies: {m['rps']:6,.0f} req/s  "
              f"p50 {m['p50_ms']:.1f} ms  p99 {m['p99_ms']:.1f} ms; {m['requests']:,} requests "
              f"({report['malformed_answered']:,} malformed), 5xx: {m['fivexx']}")  # fmt: skip
        print(f"  server memory (RSS): {report['rss_before_mb']:.0f} MB before, {report['rss_after_mb']:.0f} MB after")
        print(f"  (at start of the measured runs: {report['rss_start_mb']:.0f} MB)")
    saved = results.save("serve-advice", started, summary_rows(report, args.pool),
                          " ".join(["make bench-serve", *sys.argv[1:]]))  # fmt: skip
    print(f"(saved to {saved.relative_to(results.ROOT)}; docs/performance.md shows them)")
    if report["with_malformed"]["fivexx"]:
        sys.exit(1)


def summary_rows(report: dict, pool: int) -> list[tuple[str, str, str]]:
    """The Performance page's rows of a run: (what the user runs, figure, goal)."""
    out = []
    base = f"`POST /api/advise`, {report['connections']} connections"
    for n, figures in report["workers"].items():
        for name, label in (("repeated", f"a situation asked again (pool of {pool:,}, cached)"),
                            ("new", "a new random situation each request")):  # fmt: skip
            f = figures[name]
            workers = f"{n} worker" + ("s" if int(n) > 1 else "")
            out.append((f"{base}, {label}, {workers}",
                        f"{f['rps']:,.0f} req/s, p50 {f['p50_ms']:.1f} ms, p99 {f['p99_ms']:.1f} ms", ""))  # fmt: skip
    m = report["with_malformed"]
    out.append((f"{base} while a second client sends malformed bodies, 1 worker",
                f"{m['rps']:,.0f} req/s, p99 {m['p99_ms']:.1f} ms; {m['requests']:,} requests, {m['fivexx']} 5xx",
                "0 5xx"))  # fmt: skip
    out.append(("server memory (RSS) before and after those requests",
                f"{report['rss_before_mb']:.0f} MB, {report['rss_after_mb']:.0f} MB", ""))  # fmt: skip
    return out


if __name__ == "__main__":
    main()
