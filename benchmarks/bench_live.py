"""Live updates of a shared game (issue 26): how soon every screen watching a game hears of a move. A real
`pentadice serve` on loopback, with 1 worker and then 2 (SQLite, `--no-prepare`), a shared game of one person
(each turn one roll, then the first box that takes the dice), N Server-Sent Events subscribers on
`GET /api/games/{id}/events` (spread over the workers by the kernel). For each move: the time from sending it
to its answer, and from its answer (and from its sending) to each subscriber's event of the new version;
printed as median and p99 per worker count. Subscribers on the worker that wrote the move are woken at once
(their event may come before the answer: negative figures); those on another worker hear it at that worker's
next poll of the database (every 50 ms). Asserts nothing about time.

`--flood N`: meanwhile one greedy client (127.0.0.1) holds N event streams of a game of its own open, asking
again at once for each one refused (its address's share is `live.CLIENT_STREAMS`): the game's subscribers and
moves come from another loopback address (127.0.0.2), and the figures say how soon they hear of a move under
that flood (the goal: within 1 s).

`python benchmarks/bench_live.py [--data DIR] [--subscribers N] [--moves M] [--workers 1 2] [--flood 520]`: DIR
holds Penta's table (default: data/, as `make table` leaves it).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEAT = "X-Pentadice-Seat"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


class Subscriber:
    """One event stream, read in a thread: when each version's event arrived."""

    def __init__(self, port: int, game_id: str, source: str | None = None) -> None:
        where = {"source_address": (source, 0)} if source else {}
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60, **where)
        self.conn.request("GET", f"/api/games/{game_id}/events")
        self.response = self.conn.getresponse()
        if self.response.status != 200:
            sys.exit(f"events: {self.response.status} {self.response.read()[:200]!r}")
        self.heard: dict[int, float] = {}
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while line := self.response.readline():
                if line.startswith(b"data: "):
                    version = json.loads(line[6:])["version"]
                    with self.cond:
                        self.heard.setdefault(version, time.perf_counter())
                        self.cond.notify_all()
        except (OSError, http.client.HTTPException, ValueError, AttributeError):
            pass  # the stream closed (by close(): http.client's reader then has no file left)

    def when(self, version: int, seconds: float = 30.0) -> float:
        with self.cond:
            if not self.cond.wait_for(lambda: version in self.heard, seconds):
                sys.exit(f"a subscriber never heard version {version}")
            return self.heard[version]

    def close(self) -> None:
        with contextlib.suppress(OSError):  # the reading thread wakes up at once (not at the next ping)
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()


def post(conn: http.client.HTTPConnection, path: str, body: dict, secret: str | None = None) -> dict:
    headers = {"content-type": "application/json", **({SEAT: secret} if secret else {})}
    try:
        conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
        r = conn.getresponse()
    except (ConnectionError, http.client.RemoteDisconnected):  # a kept-alive connection the server closed idle
        conn.close()  # connected again by the request
        conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
        r = conn.getresponse()
    out = json.loads(r.read())
    if r.status not in (200, 201):
        sys.exit(f"POST {path}: {r.status} {out}")
    return out


class Flood:
    """One client (127.0.0.1) holding ``n`` connections asking for the event streams of ``game_ids``, in turn,
    in a thread: each refused (429, its address's share taken) asks again at once, until :meth:`stop`.
    ``held``: streams open; ``refused``: refusals so far."""

    def __init__(self, port: int, game_ids: list[str], n: int) -> None:
        self.requests = {}
        self.socks = []
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=("127.0.0.1", 0))
            game_id = game_ids[i % len(game_ids)]
            self.requests[s] = f"GET /api/games/{game_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
            s.sendall(self.requests[s])
            s.setblocking(False)
            self.socks.append(s)
        self.held = 0
        self.refused = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        streaming: set[socket.socket] = set()
        while not self.stopping.is_set():
            waiting = [s for s in self.socks if s not in streaming]
            ready, _, _ = select.select(waiting or self.socks, [], [], 0.2)
            for s in ready:
                try:
                    data = s.recv(65536)
                except OSError:
                    continue
                if s in streaming or not data:
                    continue
                if data.startswith(b"HTTP/1.1 200"):
                    streaming.add(s)
                    self.held = len(streaming)
                else:  # refused: asked again at once, on the same connection (its answer read whole)
                    self.refused += 1
                    with contextlib.suppress(OSError):
                        s.sendall(self.requests[s])

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        for s in self.socks:
            s.close()


def bench(data: Path, workers: int, subscribers: int, moves: int, flood: int = 0) -> dict[str, list[float]]:
    """The delays of ``moves`` moves (ms): ``answer`` (sending to answer), ``after_answer`` and ``after_send``
    (to each subscriber's event); ``flood``: that many connections of one greedy client meanwhile (:class:`Flood`),
    the subscribers and moves from another address."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
        args = [sys.executable, "-m", "pentadice", "serve", "--port", str(port), "--data", str(data), "--no-prepare",
                "--db", os.path.join(tmp, "games.sqlite3"), "--workers", str(workers)]  # fmt: skip
        log = open(os.path.join(tmp, "serve.log"), "wb")  # noqa: SIM115 (closed below)
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2):
                        break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        sys.exit(f"pentadice serve did not start: {Path(tmp, 'serve.log').read_text()[-2000:]}")
                    time.sleep(0.2)
            time.sleep(2 if workers > 1 else 0)  # the other workers load their tables too
            figures: dict[str, list[float]] = {"answer": [], "after_answer": [], "after_send": []}
            source = "127.0.0.2" if flood else None
            where = {"source_address": (source, 0)} if source else {}
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60, **where)
            greedy = None
            if flood:
                targets = [post(conn, "/api/games", {"players": "Eve", "shared": True})["id"] for _ in range(4)]
                greedy = Flood(port, targets, flood)
                time.sleep(1.0)  # its share taken, the rest asking again and again
                print(
                    f"    flood: {greedy.held} streams held by 127.0.0.1, {greedy.refused} refused so far", flush=True
                )
            while len(figures["answer"]) < moves:
                made = post(conn, "/api/games", {"players": "Ana", "shared": True, "auto_commit": None})
                game_id, secret, version = made["id"], made["seats"][0]["secret"], made["version"]
                subs = [Subscriber(port, game_id, source) for _ in range(subscribers)]
                for s in subs:
                    s.when(version)
                view = made
                while not view["over"] and len(figures["answer"]) < moves:
                    if view["dice"] is None:
                        action, body = "roll", {"keep": []}
                    else:
                        action, body = "score", {"box": next(iter(view["legal"]))}
                    sent = time.perf_counter()
                    view = post(conn, f"/api/games/{game_id}/{action}", body, secret)["game"]
                    answered = time.perf_counter()
                    heard = [s.when(view["version"]) for s in subs]
                    figures["answer"].append(1000 * (answered - sent))
                    figures["after_answer"] += [1000 * (t - answered) for t in heard]
                    figures["after_send"] += [1000 * (t - sent) for t in heard]
                for s in subs:
                    s.close()
            conn.close()
            if greedy is not None:
                print(f"    flood: {greedy.held} streams held, {greedy.refused} refused in all", flush=True)
                greedy.stop()
            return figures
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
            log.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data", help="a directory holding Penta's table")
    parser.add_argument("--subscribers", type=int, default=8, help="event streams per game")
    parser.add_argument("--moves", type=int, default=40, help="moves timed per worker count")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to measure")
    parser.add_argument("--flood", type=int, default=0, help="connections of one greedy client meanwhile")
    args = parser.parse_args(argv)
    flooded = f", one client flooding with {args.flood} stream requests" if args.flood else ""
    print(f"Live updates: {args.subscribers} subscribers, {args.moves} moves, loopback, SQLite{flooded}", flush=True)
    for workers in args.workers:
        f = bench(args.data, workers, args.subscribers, args.moves, args.flood)
        said = {k: f"{percentile(v, 50):6.1f} ms (p99 {percentile(v, 99):6.1f})" for k, v in f.items()}
        print(f"  {workers} worker{'s' if workers > 1 else ' '}: move answered {said['answer']}; event after the "
              f"answer {said['after_answer']}; after sending the move {said['after_send']}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
