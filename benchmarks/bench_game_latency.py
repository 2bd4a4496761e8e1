"""Game latency as a player of `pentadice serve` feels it: the set-up from an empty table directory (`pentadice
solve --rules penta` and `--rules yatzy`, every table a game reads: values and second moments, the chances table,
the win player's tables), the server's start until `/api/health` answers and until every table is held, then
seeded games played through the API with every request timed by kind (new game, roll, score, computer step,
chances, view, advice, review): per kind the count, p50, p99 and max, the slowest request of a kind that took
over 500 ms named, and the server's peak memory (VmHWM). Prints figures; asserts nothing about time.

The person ("Ana") plays the advisor's best option as the view's `advice` gives it, asks for the view and the
chances at the start of each of her turns and for the advice (`POST /api/advise`) after each of her rolls, as the
page would; the computers are stepped one request at a time (`POST .../computer`). Each rule set: 2-player games
(Ana against `cpu:win`) and 6-player games (Ana and five computers, `win` and `optimal` in turn).

`python benchmarks/bench_game_latency.py [--data DIR] [--two N] [--six N]`: `--data DIR` uses (and fills) a
prepared table directory instead of the set-up from an empty one (for quick reruns).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

PENTADICE = [sys.executable, "-m", "pentadice"]
RULES = ("penta", "yatzy")
SLOW_MS = 500.0  # a request slower than this is named
KINDS = ("new game", "roll", "score", "computer step", "chances", "view", "advice", "review")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def set_up(data: Path) -> list[tuple[str, str, str]]:
    """``pentadice solve --rules R --data DATA --json`` for each rule set, each timed (wall), and what its JSON
    says each table cost in seconds and bytes on disk; returns the wall times as the Performance page's rows."""
    rows = []
    for name in RULES:
        start = time.perf_counter()
        proc = subprocess.run(
            [*PENTADICE, "solve", "--rules", name, "--data", str(data), "--json"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"solve --rules {name} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
        summary = json.loads(proc.stdout)
        files = [f for f in summary["files"].values() if f]
        values_bytes = sum(size_of(Path(f)) for f in files)
        moments = "values and second moments" if summary["files"].get("m2") else "values (no second moments)"
        print(f"  `pentadice solve --rules {name} --json`: {wall:.1f} s wall", flush=True)
        rows.append((f"`pentadice solve --rules {name}` into an empty table directory, every table a game reads",
                     f"{wall:.1f} s (JIT compile {summary['compile_seconds']:.1f} s)", ""))  # fmt: skip
        print(
            f"    {moments:<28} {summary['seconds']:7.1f} s  {values_bytes / 1e6:7.1f} MB  "
            f"(JIT compile {summary['compile_seconds']:.1f} s, write {summary['write_seconds']:.1f} s)"
        )
        for table, built in summary.get("tables", {}).items():
            how = f"{built['seconds']:7.1f} s" if built["built"] else "   kept  "
            print(f"    {table:<28} {how}  {built['bytes'] / 1e6:7.1f} MB")
    return rows


class Client:
    """One kept-alive HTTP connection to the server (opened again if the server closed it), every request timed
    and filed under its kind."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None
        self.times: dict[str, list[float]] = defaultdict(list)
        self.slowest: dict[str, tuple[float, str]] = {}

    def _connection(self) -> http.client.HTTPConnection:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            self.conn.connect()
        return self.conn

    def request(self, kind: str, method: str, path: str, body: dict | None, where: str) -> dict:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        for attempt in (0, 1):
            conn = self._connection()  # connected before the clock starts: a request's own time only
            try:
                start = time.perf_counter()
                conn.request(method, path, data, headers)
                answer = conn.getresponse()
                raw = answer.read()
                ms = (time.perf_counter() - start) * 1e3
                break
            except (http.client.RemoteDisconnected, ConnectionError, BrokenPipeError):
                conn.close()
                self.conn = None  # closed while idle: once more on a new connection
                if attempt:
                    raise
        if answer.getheader("connection", "").lower() == "close":
            conn.close()
            self.conn = None
        if answer.status >= 400:
            raise RuntimeError(f"{method} {path} ({where}): {answer.status} {raw[:500]!r}")
        self.times[kind].append(ms)
        if ms > self.slowest.get(kind, (-1.0, ""))[0]:
            self.slowest[kind] = (ms, f"{method} {re.sub(r'/games/[^/]+', '/games/{id}', path)}, {where}")
        return json.loads(raw)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def health(port: int) -> dict | None:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/api/health")
        answer = conn.getresponse()
        out = json.loads(answer.read()) if answer.status == 200 else None
        conn.close()
        return out
    except (OSError, http.client.HTTPException, ValueError):
        return None


# The servers' games go to a database of this run's, never the user's history.
BENCH_ENV = {**os.environ, "PENTADICE_DB": os.path.join(tempfile.mkdtemp(prefix="pentadice-bench-"), "games.sqlite3")}


def start_server(data: Path, log: Path, limit: float) -> tuple[subprocess.Popen, int, float, float]:
    """``pentadice serve`` on ``data`` and a free port: the process, the port, and the seconds from its start until
    ``/api/health`` answers and until it says ``"preparing": false`` (every table held)."""
    port = free_port()
    args = [*PENTADICE, "serve", "--data", str(data), "--port", str(port)]
    for name in RULES:
        args += ["--rules", name]
    with open(log, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=BENCH_ENV)
    answered = None
    while True:
        if proc.poll() is not None:
            sys.exit(f"pentadice serve ended ({proc.returncode}):\n{log.read_text()[-3000:]}")
        state = health(port)
        now = time.perf_counter() - start
        if state is not None:
            answered = now if answered is None else answered
            if not state.get("preparing"):
                return proc, port, answered, now
        if now > limit:
            proc.kill()
            sys.exit(f"pentadice serve not ready after {limit:.0f} s (health: {state}):\n{log.read_text()[-3000:]}")
        time.sleep(0.05)


def play(client: Client, rules: str, players: str, seed: int) -> int:
    """One seeded game through the API; the number of requests it took."""
    label = f"{rules}, {len(players.split(','))} players, seed {seed}"
    view = client.request("new game", "POST", "/api/games", {"players": players, "rules": rules, "seed": seed}, label)
    game = f"/api/games/{view['id']}"
    requests = 1
    ana_turn = None  # the turn whose view and chances Ana asked for

    while not view["over"]:
        player = view["players"][view["current"]]
        where = f"{label}, turn {view['turn']}, {player['name']}"
        if player["computer"]:
            where += f" ({player['strategy']})"
            view = client.request("computer step", "POST", game + "/computer", None, where)["game"]
            requests += 1
            continue
        if ana_turn != view["turn"]:  # the start of her turn: the page's view and the live chances
            ana_turn = view["turn"]
            client.request("view", "GET", game, None, where)
            client.request("chances", "GET", game + "/chances", None, where)
            requests += 2
        if view["dice"] is None:
            view = client.request("roll", "POST", game + "/roll", {"keep": []}, where)["game"]
            requests += 1
            continue
        asked = {"rules": rules, "dice": view["dice"], "rolls_left": view["rolls_left"], "sheet": player["sheet"]}
        client.request("advice", "POST", "/api/advise", asked, where)
        best = view["advice"]["best"]
        if best["action"] == "keep":
            view = client.request("roll", "POST", game + "/roll", {"keep": best["keep"]}, where)["game"]
        else:
            view = client.request("score", "POST", game + "/score", {"box": best["box"]}, where)["game"]
        requests += 2
    client.request("review", "GET", game + "/review", None, label)
    return requests + 1


def percentile(sorted_ms: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of sorted values, nearest rank."""
    rank = max(1, min(len(sorted_ms), math.ceil(q * len(sorted_ms))))
    return sorted_ms[rank - 1]


def peak_rss_mb(pid: int) -> float | None:
    try:
        found = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    except OSError:
        return None
    return int(found.group(1)) / 1024 if found else None


def report(client: Client) -> list[tuple[str, str, str]]:
    """Prints each kind of request's count and latency; returns them as the Performance page's rows."""
    rows = []
    print(f"  {'request':<14} {'count':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for kind in KINDS:
        times = sorted(client.times.get(kind, []))
        if not times:
            continue
        p50, p99, top = percentile(times, 0.5), percentile(times, 0.99), times[-1]
        print(f"  {kind:<14} {len(times):>6} {p50:8.1f} {p99:8.1f} {top:8.1f}", end="")
        if top > SLOW_MS:
            print(f"  <- over {SLOW_MS:.0f} ms: {client.slowest[kind][1]}", end="")
        print()
        rows.append((f"a game's request through the API: {kind} ({len(times):,} timed)",
                     f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {top:.0f} ms", "max < 500 ms"))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> list[tuple[str, str, str]]:
    """Runs the benchmark; returns its figures as the Performance page's rows."""
    rows: list[tuple[str, str, str]] = []
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=None, help="a prepared table directory: no set-up from an empty one")
    parser.add_argument("--two", type=int, default=25, help="2-player games of each rule set (seeds 1..N)")
    parser.add_argument("--six", type=int, default=10, help="6-player games of each rule set (seeds 1..N)")
    parser.add_argument("--ready-limit", type=float, default=1800, help="seconds the server may take to be ready")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="pentadice-latency-"))
    try:
        if args.data:
            data = Path(args.data)
            print(f"set-up skipped: the table directory {data} given (--data), as prepared", flush=True)
        else:
            data = work / "data"
            data.mkdir()
            print(f"set-up from an empty table directory ({', '.join(RULES)}; the Numba cache as it is):", flush=True)
            rows += set_up(data)
        held = sum(size_of(f) for f in data.iterdir() if f.is_file())
        print(f"  table directory: {held / 1e6:.0f} MB on disk in all")

        proc, port, answered, ready = start_server(data, work / "serve.log", args.ready_limit)
        client = Client(port)
        try:
            print(f"`pentadice serve --rules {' --rules '.join(RULES)}`:", flush=True)
            print(f"  /api/health answers after {answered:.2f} s; every table held (preparing false): {ready:.2f} s")
            serve = f"`pentadice serve --rules {' --rules '.join(RULES)}`"
            rows.append((f"{serve} until it answers, until every table is held",
                         f"{answered:.2f} s, {ready:.2f} s", ""))  # fmt: skip
            start = time.perf_counter()
            requests = games = 0
            for name in RULES:
                computers = ",".join(("cpu:win", "cpu")[i % 2] for i in range(5))
                for players, count in (("Ana,cpu:win", args.two), (f"Ana,{computers}", args.six)):
                    for seed in range(1, count + 1):
                        requests += play(client, name, players, seed)
                        games += 1
            seconds = time.perf_counter() - start
            print(
                f"  {games} games ({args.two} of 2 players and {args.six} of 6 per rule set), {requests:,} requests "
                f"in {seconds:.1f} s, one client, one kept-alive connection:",
                flush=True,
            )
            rows += report(client)
            peak = peak_rss_mb(proc.pid)
            print(f"  server peak memory (VmHWM): {f'{peak:.0f} MB' if peak is not None else 'not readable'}")
            if peak is not None:
                rows.append(("that server's peak memory (VmHWM) over those games", f"{peak:.0f} MB", ""))
        finally:
            client.close()
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()
    print(f"  ({os.cpu_count()} cores, load average at the end {load[0]:.2f} {load[1]:.2f})", flush=True)
    return rows


if __name__ == "__main__":
    main()
