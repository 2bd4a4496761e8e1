"""Load benchmark of the games API of `pentadice serve`: many players at once, each playing whole games through
HTTP (create a game, roll three times a turn, fill the advisor's box, and at the end read the review), against
the games database on SQLite and on PostgreSQL, with 1 and N workers. Prints requests/s and p50/p99 latency per
kind of request (the median of the runs), and games finished per second. Every answer must be 2xx; the run
stops with exit 1 otherwise. Asserts nothing about time.

The client is asyncio over plain sockets (one keep-alive connection a player), so that it costs the 2 cores
little beside the server. PostgreSQL: a throwaway cluster (`tests/postgres.py`), skipped where it is missing.

`python benchmarks/bench_games_api.py [--players 32] [--seconds 10] [--runs 3] [--workers 1 2] [--no-postgres]`
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import results

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("create", "roll", "score", "review")


def start_server(db: str, workers: int, data: str | None) -> tuple[subprocess.Popen, str, int]:
    exe = Path(sys.executable).with_name("pentadice")
    args = [str(exe), "serve", "--port", "0", "--rules", "penta", "--no-prepare", "--db", db, "--workers", str(workers)]
    args += ["--data", data] if data else []
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, start_new_session=True)
    line = proc.stdout.readline()
    match = re.search(r"http://([\d.]+):(\d+)/", line)
    if not match:
        proc.kill()
        sys.exit(f"the server did not start: {line!r}")
    host, port = match.group(1), int(match.group(2))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the workers load their tables behind the listening socket
        try:
            body = asyncio.run(_one(host, port, "GET", "/api/health"))[1]
            if json.loads(body)["status"] == "ok":
                break
        except OSError:
            time.sleep(0.2)
    return proc, host, port


async def _one(host: str, port: int, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        return await _request(reader, writer, host, method, path, body)
    finally:
        writer.close()


async def _request(reader, writer, host: str, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
    writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
    status_line = await reader.readline()
    status = int(status_line.split()[1])
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def player(host: str, port: int, until: float, seed: int, times: dict[str, list[float]], counts: dict) -> None:
    reader, writer = await asyncio.open_connection(host, port)

    async def call(kind: str, method: str, path: str, data: dict | None = None) -> dict:
        start = time.perf_counter()
        status, body = await _request(reader, writer, host, method, path, json.dumps(data).encode() if data else b"")
        times[kind].append(time.perf_counter() - start)
        if not 200 <= status < 300:
            raise SystemExit(f"{method} {path}: {status} {body[:300]!r}")
        return json.loads(body)

    try:
        while time.monotonic() < until:
            view = await call("create", "POST", "/api/games", {"players": "Ana", "seed": seed, "auto_commit": 0})
            seed += 1000
            game = view["id"]
            while not view["over"] and time.monotonic() < until:
                view = (await call("roll", "POST", f"/api/games/{game}/roll", {"keep": []}))["game"]
                while view["rolls_left"]:
                    best = view["advice"]["best"]
                    if best["action"] != "keep":
                        break
                    view = (await call("roll", "POST", f"/api/games/{game}/roll", {"keep": best["keep"]}))["game"]
                box = view["advice"]["best"].get("box") or view["advice"]["options"][-1].get("box")
                view = (await call("score", "POST", f"/api/games/{game}/score", {"box": box}))["game"]
            if view["over"]:
                await call("review", "GET", f"/api/games/{game}/review")
                counts["games"] += 1
    finally:
        writer.close()


async def load(host: str, port: int, players: int, seconds: float) -> tuple[dict[str, list[float]], int, float]:
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    counts = {"games": 0}
    start = time.monotonic()
    until = start + seconds
    await asyncio.gather(*(player(host, port, until, 1 + i, times, counts) for i in range(players)))
    return times, counts["games"], time.monotonic() - start


def measure(db: str, workers: int, players: int, seconds: float, runs: int, data: str | None) -> dict:
    proc, host, port = start_server(db, workers, data)
    try:
        asyncio.run(load(host, port, 4, 2.0))  # warm-up: compiled paths, connections, caches
        rows = []
        for _ in range(runs):
            times, games, took = asyncio.run(load(host, port, players, seconds))
            every = [t for k in KINDS for t in times[k]]
            row = {"req/s": len(every) / took, "games/s": games / took}
            for kind in ("all", *KINDS):
                sample = every if kind == "all" else times[kind]
                if sample:
                    row[f"{kind} p50"] = statistics.median(sample) * 1e3
                    row[f"{kind} p99"] = statistics.quantiles(sample, n=100)[98] * 1e3 if len(sample) > 1 else 0.0
            rows.append(row)
        return {key: statistics.median(r[key] for r in rows if key in r) for key in rows[0]}
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--data", default=None)
    args = parser.parse_args()

    started = results.stamp()
    summary: list[tuple[str, str, str]] = []
    backends: list[tuple[str, object]] = [("SQLite", None)]
    pg = None
    if not args.no_postgres:
        sys.path.insert(0, str(ROOT / "tests"))
        import postgres  # the tests' throwaway PostgreSQL cluster

        hint = postgres.available()
        if hint is None:
            pg = postgres.PostgresServer().start()
            backends.append(("PostgreSQL", pg))
        else:
            print(f"PostgreSQL rows skipped: {hint}")
    print(
        f"Games API under load: {args.players} players at once, each playing whole Penta games (create, 3 rolls and a "
        f"box a turn, the review at the end), {args.seconds:g} s runs, median of {args.runs}"
    )
    print("| database | workers | req/s | games/s | p50 | p99 | create p99 | roll p99 | score p99 | review p99 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for label, server in backends:
                for workers in args.workers:
                    name = f"bench_{workers}_{int(time.time())}"
                    db = str(Path(tmp) / f"{name}.sqlite3") if server is None else server.create_database(name)
                    r = measure(db, workers, args.players, args.seconds, args.runs, args.data)
                    print(
                        f"| {label} | {workers} | {r['req/s']:,.0f} | {r['games/s']:.1f} | {r['all p50']:.1f} ms | "
                        f"{r['all p99']:.1f} ms | {r.get('create p99', 0):.1f} ms | {r.get('roll p99', 0):.1f} ms | "
                        f"{r.get('score p99', 0):.1f} ms | {r.get('review p99', 0):.0f} ms |",
                        flush=True,
                    )
                    summary.append((
                        f"whole Penta games, {args.players} players at once, {label}, {workers} worker"
                        + ("s" if workers > 1 else ""),
                        f"{r['req/s']:,.0f} req/s, {r['games/s']:.1f} games/s, p50 {r['all p50']:.1f} ms, "
                        f"p99 {r['all p99']:.1f} ms",
                        "",
                    ))  # fmt: skip
    finally:
        if pg is not None:
            pg.cleanup()
    saved = results.save("serve-games", started, summary, " ".join(["make bench-serve", *sys.argv[1:]]))
    print(f"(saved to {saved.relative_to(results.ROOT)}; docs/performance.md shows them)")


if __name__ == "__main__":
    main()
