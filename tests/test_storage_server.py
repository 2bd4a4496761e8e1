"""The games database under real ``pentadice serve`` processes: a server started again goes on with its games, two
workers racing on one game play each move once, a server killed mid-move (kill -9) loses at most that move and
leaves a sound database, a full disk (507) or a read-only one (503) refuses a move in words and loses nothing,
and PostgreSQL down at start is said in one line, killed during play gives 503 until it is back, then the server
goes on by itself. Servers hold Penta's table alone and prepare nothing (``--no-prepare``)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest
import serving

from pentadice.game import rules
from pentadice.game.moves import Keep, Score
from pentadice.players.engine import Game, parse_players

PENTA = rules.get_rules("penta")


class Client:
    """JSON requests to a server on 127.0.0.1:``port``, over one kept-alive connection."""

    def __init__(self, port: int, timeout: float = 60) -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def send(self, method: str, path: str, body=None) -> tuple[int, dict, http.client.HTTPMessage]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"content-type": "application/json"} if data is not None else {}
        self.conn.request(method, path, body=data, headers=headers)
        r = self.conn.getresponse()
        return r.status, json.loads(r.read() or b"null"), r.headers

    def get(self, path: str) -> dict:
        status, out, _ = self.send("GET", path)
        assert status == 200, out
        return out

    def move(self, game_id: str, action: str, body=None, status: int = 200) -> dict:
        got, out, _ = self.send("POST", f"/api/games/{game_id}/{action}", body)
        assert got == status, out
        return out

    def new_game(self, **body) -> str:
        status, out, _ = self.send("POST", "/api/games", body)
        assert status == 201, out
        return out["id"]

    def close(self) -> None:
        self.conn.close()


def next_move(view: dict) -> tuple[str, dict]:
    """A plain person's move in the game ``view``: roll all the dice while rolls are left, then fill the first
    box that takes them."""
    if view["dice"] is None or view["rolls_left"] > 0:
        return "roll", {"keep": []}
    return "score", {"box": next(iter(view["legal"]))}


def steady(view: dict) -> dict:
    """A game's view without what the tables' preparation changes (the chances, while they are loaded)."""
    return {k: v for k, v in view.items() if k not in ("chances", "chances_pending", "preparing")}


def saved(client: Client, game_id: str) -> dict:
    status, out, _ = client.send("GET", f"/api/games/{game_id}/save")
    assert status == 200, out
    return out


@contextlib.contextmanager
def server(tables, tmp_path: Path, db: str, *extra: str, name: str = "serve") -> Client:
    """``pentadice serve --db db`` (its own process group: killpg ends it and its workers), and a client of it."""
    port = serving.free_port()
    args = serving.quiet_serve(port, tables, "--db", db, *extra)
    log = tmp_path / f"{name}-{port}.log"
    with serving.started(args, port, log, preexec_fn=os.setsid) as proc:
        client = Client(port)
        client.proc = proc
        client.log = log
        try:
            yield client
        finally:
            client.close()


def refused_start(tables, db: str) -> str:
    """``serve --db db`` that must not start: its one line, after exit 1 without a traceback."""
    cmd = serving.quiet_serve(0, tables, "--db", db)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done
    assert "Traceback" not in done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    return lines[0]


def version_in_file(path: Path, game_id: str) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return conn.execute("select version from games where id = ?", (game_id,)).fetchone()[0]


def _mirror(reference: Game, action: str, body: dict) -> None:
    """The move the server was sent (``next_move``'s), played on the in-process ``reference`` game."""
    if action == "score":
        reference.play(Score(PENTA.parse_box(body["box"])))
    elif reference.dice is None:
        reference.start_turn()
    else:
        reference.play(Keep(()))


# (a) A server started again goes on with its games.


def test_a_server_started_again_goes_on_with_its_games(penta_table_dir, tmp_path):
    db = str(tmp_path / "games.sqlite3")
    reference = Game(PENTA, parse_players("Ana,Bo"), seed=21, auto_commit_seconds=None)
    with server(penta_table_dir, tmp_path, db) as client:
        game_id = client.new_game(players="Ana,Bo", seed=21, auto_commit=None)
        for _ in range(7):
            view = client.get(f"/api/games/{game_id}")
            action, body = next_move(view)
            out = client.move(game_id, action, body)
            _mirror(reference, action, body)
            assert out["game"]["dice"] == (list(reference.dice) if reference.dice else None)
        before, save_before = client.get(f"/api/games/{game_id}"), saved(client, game_id)
    with server(penta_table_dir, tmp_path, db) as client:
        assert saved(client, game_id) == save_before
        after = client.get(f"/api/games/{game_id}")
        assert steady(after) == steady(before)
        for _ in range(4):  # the dice go on from the generator's saved state, as if never stopped
            action, body = next_move(client.get(f"/api/games/{game_id}"))
            out = client.move(game_id, action, body)
            _mirror(reference, action, body)
            assert out["game"]["dice"] == (list(reference.dice) if reference.dice else None)
            assert [p["sheet"] for p in out["game"]["players"]] == [p.sheet.as_dict(PENTA) for p in reference.players]
        assert client.get("/api/health")["games"] == 1


# (b) Two workers racing on one game.


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
    return found


def _owners(workers: list[int], server_port: int, clients: list[Client]) -> dict[int, int]:
    """Which worker process holds each client's connection (by the socket's inode, /proc/net/tcp): client
    index -> worker pid."""
    inode_of_port = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, remote, inode = fields[1], fields[2], fields[9]
                if int(local.rsplit(":", 1)[1], 16) == server_port:
                    inode_of_port[int(remote.rsplit(":", 1)[1], 16)] = inode
    holder = {}
    for pid in workers:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if link.startswith("socket:["):
                        holder[link[8:-1]] = pid
    out = {}
    for i, c in enumerate(clients):
        inode = inode_of_port.get(c.conn.sock.getsockname()[1])
        if inode in holder:
            out[i] = holder[inode]
    return out


def _at_once(clients: list[Client], path: str, body: dict) -> list[tuple[int, dict]]:
    """``POST path`` sent by every client at the same moment, each from a thread of its own: their answers."""
    barrier = threading.Barrier(len(clients))
    answers: list = [None] * len(clients)

    def send(index: int) -> None:
        barrier.wait()
        status, out, _ = clients[index].send("POST", path, body)
        answers[index] = (status, out)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return answers


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_workers_racing_on_one_game_play_each_move_once(penta_table_dir, tmp_path, request, backend):
    db = str(tmp_path / "games.sqlite3") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    with server(penta_table_dir, tmp_path, db, "--workers", "2") as client:
        workers = _children(client.proc.pid)
        assert len(workers) == 2
        clients: list[Client] = []
        owners: dict[int, int] = {}
        deadline = time.monotonic() + 120  # a worker still loading its tables accepts no connection yet
        while len(set(owners.values())) < 2 and time.monotonic() < deadline:  # until both workers hold some
            for _ in range(4):
                c = Client(client.port)
                c.get("/api/health")  # connected, kept alive: held by the worker that accepted it
                clients.append(c)
            owners = _owners(workers, client.port, clients)
            if len(set(owners.values())) < 2:
                time.sleep(0.5)
        assert set(owners.values()) == set(workers), owners
        chosen = {w: [i for i in sorted(owners) if owners[i] == w][:4] for w in workers}  # 4 of each at most
        owners = {i: w for w, held in chosen.items() for i in held}
        racers = [clients[i] for i in sorted(owners)]
        try:
            game_id = client.new_game(players="Ana", seed=5, auto_commit=None)
            for round_ in range(4):
                view = client.move(game_id, "roll", {"keep": []})["game"]
                box = next(iter(view["legal"]))
                answers = _at_once(racers, f"/api/games/{game_id}/score", {"box": box})
                answers = [(status, out, owners[i]) for (status, out), i in zip(answers, sorted(owners), strict=True)]
                statuses = sorted(a[0] for a in answers)
                assert statuses == [200] + [409] * (len(racers) - 1), answers
                assert {a[2] for a in answers} == set(workers)  # both processes answered
                for status, out, _ in answers:
                    if status == 409:
                        assert out["error"] == "roll the dice first", out
                    else:
                        assert out["played"]["box"] == box
                after = client.get(f"/api/games/{game_id}")
                sheet = after["players"][0]["sheet"]
                assert box in sheet and len(sheet) == round_ + 1 and after["dice"] is None
                for c in racers:  # every worker reads the same game (the tables' state aside: loading still)
                    assert steady(c.get(f"/api/games/{game_id}")) == steady(after)
            assert saved(client, game_id)["players"][0]["sheet"] == sheet
        finally:
            for c in clients:
                c.close()


# (c) kill -9 during moves.


def test_a_server_killed_mid_move_loses_at_most_that_move(penta_table_dir, tmp_path):
    path = tmp_path / "games.sqlite3"
    acked = [0]
    with server(penta_table_dir, tmp_path, str(path), "--workers", "2") as client:
        game_id = client.new_game(players="Ana", seed=9, auto_commit=None)
        enough = threading.Event()
        view = client.get(f"/api/games/{game_id}")

        def play() -> None:
            mover = Client(client.port)
            game = view
            try:
                while not game["over"]:
                    action, body = next_move(game)
                    game = mover.move(game_id, action, body)["game"]
                    acked[0] += 1
                    if acked[0] >= 12:
                        enough.set()
            except (OSError, http.client.HTTPException):
                pass  # the server is gone
            finally:
                enough.set()
                mover.close()

        mover = threading.Thread(target=play)
        mover.start()
        assert enough.wait(120)
        os.killpg(client.proc.pid, signal.SIGKILL)  # the watching process and both workers, mid-move
        mover.join(60)
        client.proc.wait(10)
    written = version_in_file(path, game_id)  # PRAGMA integrity_check: ok
    assert written in (acked[0], acked[0] + 1), (written, acked[0])  # at most the move in flight is lost
    with server(penta_table_dir, tmp_path, str(path)) as client:
        view = client.get(f"/api/games/{game_id}")
        out = client.move(game_id, *next_move(view))
        assert steady(out["game"]) != steady(view)
    assert version_in_file(path, game_id) == written + 1


# (d) A full disk, (e) a read-only one: a small file system of the test's own.


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of 4 MB mounted at tmp_path/disk (root only), unmounted afterwards."""
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(where)], capture_output=True)
        subprocess.run(["umount", "-l", str(where)], check=True)


def _fill(where: Path) -> Path:
    filler = where / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (1 << 16, 1 << 12, 1 << 9, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"x" * size)
    finally:
        os.close(fd)
    return filler


def _remount(where: Path, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], capture_output=True, text=True)


def test_a_full_or_read_only_disk_refuses_moves_in_words_and_loses_nothing(penta_table_dir, tmp_path, small_disk):
    db = str(small_disk / "games.sqlite3")
    with server(penta_table_dir, tmp_path, db) as client:
        game_id = client.new_game(players="Ana", seed=3, auto_commit=None)
        for _ in range(3):
            client.move(game_id, *next_move(client.get(f"/api/games/{game_id}")))

        # A full disk: 507, nothing written, then the move goes through once there is room.
        filler = _fill(small_disk)
        for _ in range(20):  # room left in the journal may take a move or two first
            before, save_before = client.get(f"/api/games/{game_id}"), saved(client, game_id)
            action, body = next_move(before)
            status, out, headers = client.send("POST", f"/api/games/{game_id}/{action}", body)
            if status != 200:
                break
        assert status == 507, out
        assert set(out) == {"error"} and "disk" in out["error"] and "full" in out["error"], out
        assert headers["retry-after"] and headers["content-type"] == "application/json"
        assert steady(client.get(f"/api/games/{game_id}")) == steady(before) and saved(client, game_id) == save_before
        assert client.send("POST", f"/api/games/{game_id}/{action}", body)[0] == 507
        filler.unlink()
        played = client.move(game_id, action, body)
        assert steady(played["game"]) != steady(before)
        assert steady(client.get(f"/api/games/{game_id}")) == steady(played["game"])
        client.move(game_id, *next_move(played["game"]))
        last = saved(client, game_id)

        # Read-only during play: the kernel refuses to remount a file system a process writes to (the server
        # holds the database open); where it allows it, a move is 503 and says so.
        if _remount(small_disk, "ro").returncode == 0:
            try:
                status, out, _ = client.send("POST", f"/api/games/{game_id}/{action}", next_move(played["game"])[1])
                assert status == 503 and "read-only" in out["error"], out
            finally:
                assert _remount(small_disk, "rw").returncode == 0
    # A server started on a read-only database: one line, exit 1.
    assert _remount(small_disk, "ro").returncode == 0
    try:
        line = refused_start(penta_table_dir, db)
        assert "read-only" in line and db in line, line
    finally:
        assert _remount(small_disk, "rw").returncode == 0
    with server(penta_table_dir, tmp_path, db) as client:  # nothing lost
        assert saved(client, game_id) == last
        client.move(game_id, *next_move(client.get(f"/api/games/{game_id}")))


# (f) PostgreSQL down at start, killed during play, read-only for a while.


def test_postgresql_down_at_start_is_said_in_one_line(penta_table_dir, postgres_server, postgres_url):
    postgres_server.stop()
    try:
        line = refused_start(penta_table_dir, postgres_url)
        assert "cannot be reached" in line and f":{postgres_server.port}/" in line, line
    finally:
        postgres_server.start()


def test_a_server_on_postgresql_rides_out_an_outage_and_a_read_only_spell(
    penta_table_dir, tmp_path, postgres_server, postgres_url
):
    with server(penta_table_dir, tmp_path, postgres_url) as client:
        game_id = client.new_game(players="Ana", seed=6, auto_commit=None)
        for _ in range(3):
            client.move(game_id, *next_move(client.get(f"/api/games/{game_id}")))
        before = saved(client, game_id)
        view = client.get(f"/api/games/{game_id}")
        action, body = next_move(view)

        postgres_server.kill()
        try:
            for _ in range(2):
                status, out, headers = client.send("POST", f"/api/games/{game_id}/{action}", body)
                assert status == 503 and set(out) == {"error"} and "cannot be reached" in out["error"], out
                assert headers["retry-after"]
            status, out, _ = client.send("GET", f"/api/games/{game_id}")
            assert status == 503 and "cannot be reached" in out["error"], out
        finally:
            postgres_server.start()
        assert saved(client, game_id) == before  # back by itself: no restart of pentadice
        played = client.move(game_id, action, body)["game"]
        assert steady(client.get(f"/api/games/{game_id}")) == steady(played)

        # Read-only (a standby, a database set so): 503 saying so, then on again.
        postgres_server.set_system("default_transaction_read_only", "on", shows="on")
        try:
            action, body = next_move(played)
            status, out, _ = client.send("POST", f"/api/games/{game_id}/{action}", body)
            assert status == 503 and "read-only" in out["error"], out
            assert steady(client.get(f"/api/games/{game_id}")) == steady(played)  # reading still works
        finally:
            postgres_server.set_system("default_transaction_read_only", None, shows="off")
        after = client.move(game_id, action, body)["game"]
        assert steady(after) != steady(played)
        assert steady(client.get(f"/api/games/{game_id}")) == steady(after)
