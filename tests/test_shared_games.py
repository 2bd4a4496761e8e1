"""Shared games ("play together"): a game played from several devices, each person's seat held by the
device holding its secret (the X-Pentadice-Seat header); live updates as Server-Sent Events, reaching every
worker of `serve --workers 2`; a seat link's QR code; `serve --tls`. The seat rules run in process; the live
updates and HTTPS on real `pentadice serve` processes (one module-scoped server of each kind)."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import inspect
import json
import os
import signal
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest
import serving
import sqlalchemy as sa
from fastapi.testclient import TestClient
from test_storage_server import _children, _owners

from pentadice.faces.web import addresses, server
from pentadice.faces.web.api import create_app
from pentadice.faces.web.seats import NEED_SECRET
from pentadice.storage.schema import games

SEAT = "X-Pentadice-Seat"
HAS_TLS = "tls" in inspect.signature(server.run).parameters


def shared_game(client, players="Ana,Bo,cpu", **extra) -> dict:
    r = client.post("/api/games", json={"players": players, "seed": 7, "auto_commit": None, "shared": True, **extra})
    assert r.status_code == 201, r.text
    return r.json()


def as_seat(secret: str | None) -> dict:
    return {} if secret is None else {SEAT: secret}


def test_a_shared_game_gives_each_persons_seat_a_secret_once_and_keeps_only_its_hash(client, app):
    made = shared_game(client)
    assert made["shared"] is True and made["you"] == 0
    assert [(s["seat"], s["name"]) for s in made["seats"]] == [(0, "Ana"), (1, "Bo")]  # people only, not cpu
    secrets = {s["seat"]: s["secret"] for s in made["seats"]}
    assert len(set(secrets.values())) == 2 and all(len(s) >= 32 for s in secrets.values())

    game_id = made["id"]
    for secret in (None, secrets[0], secrets[1]):  # no later answer carries a secret, whoever asks
        r = client.get(f"/api/games/{game_id}", headers=as_seat(secret))
        assert r.status_code == 200 and "seats" not in r.json()
        assert not any(s in r.text for s in secrets.values())
    assert client.get(f"/api/games/{game_id}").json()["you"] is None
    assert client.get(f"/api/games/{game_id}", headers=as_seat(secrets[1])).json()["you"] == 1

    with app.state.web.store.records.db.begin() as conn:  # the database holds the SHA-256 of each, nothing else
        row = conn.execute(sa.select(games).where(games.c.id == game_id)).one()
    stored = json.loads(row.seats)
    assert stored == {str(i): hashlib.sha256(s.encode()).hexdigest() for i, s in secrets.items()}
    assert not any(s in str(value) for s in secrets.values() for value in row)


def test_only_the_device_holding_the_seat_to_move_plays_it(client):
    made = shared_game(client)
    game_id = made["id"]
    ana, bo = (s["secret"] for s in made["seats"])

    def move(action, secret, body=None, status=200):
        r = client.post(f"/api/games/{game_id}/{action}", json=body or {}, headers=as_seat(secret))
        assert r.status_code == status, r.text
        return r.json()

    # Ana's turn: a watcher, a wrong secret and Bo's device are refused, each in words; Ana's device plays.
    assert move("roll", None, {"keep": []}, 403)["error"] == NEED_SECRET
    assert move("roll", "not-a-seat-secret", {"keep": []}, 403)["error"] == NEED_SECRET
    turn = "it is Ana's turn: only the device holding Ana's seat can move"
    assert move("roll", bo, {"keep": []}, 403)["error"] == turn
    rolled = move("roll", ana, {"keep": []})["game"]
    assert rolled["you"] == 0 and rolled["advice"] is not None  # the advice is the mover's
    for secret, you in ((None, None), (bo, 1)):  # others see the game, not Ana's advice
        seen = client.get(f"/api/games/{game_id}", headers=as_seat(secret)).json()
        assert seen["you"] == you and seen["advice"] is None and seen["dice"] == rolled["dice"]
    box = next(iter(rolled["legal"]))
    assert move("score", bo, {"box": box}, 403)["error"] == turn
    assert move("auto-commit", None, None, 403)["error"] == NEED_SECRET
    assert move("score", ana, {"box": box})["game"]["current"] == 1

    # Bo's turn: Ana's device cannot play it.
    assert (
        move("roll", ana, {"keep": []}, 403)["error"] == "it is Bo's turn: only the device holding Bo's seat can move"
    )
    view = move("roll", bo, {"keep": []})["game"]
    move("score", bo, {"box": next(iter(view["legal"]))})

    # The computer's turn: any seat's device steps it, a watcher cannot.
    assert move("computer", None, None, 403)["error"] == NEED_SECRET
    assert move("computer", "not-a-seat-secret", None, 403)["error"] == NEED_SECRET
    assert move("computer", ana, None)["played"]["computer"] is True
    assert move("computer", bo, None)["played"]["computer"] is True


def test_an_unshared_game_plays_as_before_on_one_screen(client):
    r = client.post("/api/games", json={"players": "Ana,Bo", "seed": 7, "auto_commit": None})
    made = r.json()
    assert r.status_code == 201 and made["shared"] is False and made["you"] is None and "seats" not in made
    played = client.post(f"/api/games/{made['id']}/roll", json={"keep": []}).json()["game"]
    assert played["advice"] is not None and played["you"] is None
    other = client.post(f"/api/games/{made['id']}/roll", json={"keep": []}, headers=as_seat("whatever"))
    assert other.status_code == 200  # a header means nothing in a game of one screen


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"players": "Ana,Bo", "dice": "manual", "shared": True}, "cannot be shared"),
        ({"players": "cpu,cpu", "shared": True}, "needs a person's seat"),
        ({"players": "Ana", "shared": "yes"}, "shared must be true or false"),
    ],
)
def test_a_shared_game_that_cannot_be_is_refused(client, body, words):
    r = client.post("/api/games", json=body)
    assert r.status_code == 422 and words in r.json()["error"], r.text


def test_the_qr_code_of_a_link_is_svg_and_other_text_is_refused(client):
    link = "http://192.168.1.5:8000/games/abc#seat=" + "s" * 32
    r = client.post("/api/qr", json={"text": link})
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.startswith("<svg") and "<path" in r.text and "<script" not in r.text
    other = client.post("/api/qr", json={"text": link.replace("abc", "abd")})
    assert other.status_code == 200 and other.text != r.text  # the code is the link's
    long_link = "https://example.com/" + "a" * 493
    assert client.post("/api/qr", json={"text": long_link[:512]}).status_code == 200
    for text in (long_link, "javascript:alert(1)", "hello", "ftp://example.com/x", "http://", 42, None):
        refused = client.post("/api/qr", json={"text": text})
        assert refused.status_code == 422 and "error" in refused.json(), (text, refused.text)
    assert client.post("/api/qr", json={}).status_code == 422


def test_events_refuse_unknown_games_answer_head_and_bound_the_streams(client, app):
    assert client.get("/api/games/no-such-game/events").status_code == 404
    game_id = shared_game(client)["id"]
    head = client.head(f"/api/games/{game_id}/events")
    assert head.status_code == 200 and head.headers["content-type"].startswith("text/event-stream")
    assert head.headers["cache-control"] == "no-store"
    live = app.state.web.live
    limit, live.limit = live.limit, 0  # as if every stream this process allows were open
    try:
        r = client.get(f"/api/games/{game_id}/events")
        assert r.status_code == 503 and r.headers["retry-after"] and "too many" in r.json()["error"]
    finally:
        live.limit = limit


def test_a_foreign_host_is_refused_on_the_events_and_the_qr_code(penta_advisor):
    guarded = create_app({"penta": penta_advisor}, allowed_hosts=addresses.allowed_hosts("0.0.0.0"))
    with TestClient(guarded, base_url="http://localhost") as c:
        assert c.get("/api/games/x/events").status_code == 404  # served: past the guard
        for headers in ({"host": "evil.example"}, {"host": "evil.example:8000"}):
            assert c.get("/api/games/x/events", headers=headers).status_code == 421
            assert c.post("/api/qr", json={"text": "http://localhost/"}, headers=headers).status_code == 421


def test_health_says_the_base_of_the_seat_links(client):
    assert client.get("/api/health").json()["share_base"] is None  # an app of no network address
    assert addresses.share_base("127.0.0.1", 8000) is None  # loopback only: the page's own origin
    base = addresses.share_base("0.0.0.0", 8000, "https")
    assert base.startswith("https://") and base.endswith(":8000") and "0.0.0.0" not in base


# Real servers: live updates across two workers, HTTPS.


class Stream:
    """A Server-Sent Events subscriber of a game, reading its events in a thread of its own."""

    def __init__(self, port: int, game_id: str, tls: ssl.SSLContext | None = None) -> None:
        if tls is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        else:
            self.conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=60, context=tls)
        self.conn.request("GET", f"/api/games/{game_id}/events")
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.read()
        self.events: list[tuple[float, dict]] = []
        self.ended_cleanly: bool | None = None
        self.arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        kind = None
        try:
            while True:
                line = self.response.readline()
                if not line:
                    self.ended_cleanly = True  # the chunked body's end: the server closed the stream itself
                    break
                line = line.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind == "game":
                    with self.arrived:
                        self.events.append((time.monotonic(), json.loads(line[6:])))
                        self.arrived.notify_all()
        except (http.client.IncompleteRead, OSError, ValueError):
            self.ended_cleanly = False
        with self.arrived:
            self.arrived.notify_all()

    def wait_for(self, version: int, seconds: float = 30) -> float:
        """When the event of ``version`` arrived (failing after ``seconds``)."""
        with self.arrived:
            found = self.arrived.wait_for(
                lambda: any(e["version"] >= version for _, e in self.events) or self.ended_cleanly is not None,
                seconds,
            )
        assert found, f"no event of version {version}: {self.events}"
        return next(t for t, e in self.events if e["version"] >= version)


def _streams(port: int, game_id: str, n: int) -> list[Stream]:
    """``n`` streams of the game, less those refused because the worker that took them holds the game's share
    (or this address's share of it) already: the other worker, still loading its tables, takes none meanwhile."""
    out = []
    for _ in range(n):
        try:
            out.append(Stream(port, game_id))
        except AssertionError as e:
            assert "live streams" in str(e), e  # 429: this game's share, or this address's of it
    return out


def request(port: int, method: str, path: str, body=None, headers=None, tls=None) -> tuple[int, dict]:
    conn = (
        http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        if tls is None
        else http.client.HTTPSConnection("127.0.0.1", port, timeout=60, context=tls)
    )
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"content-type": "application/json", **(headers or {})})
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        conn.close()


@pytest.fixture(scope="module")
def two_workers(penta_table_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shared-two-workers")
    port = serving.free_port()
    args = serving.quiet_serve(port, penta_table_dir, "--db", str(tmp / "games.sqlite3"), "--workers", "2")
    with serving.started(args, port, tmp / "serve.log", preexec_fn=os.setsid) as proc:
        yield proc, port, tmp / "serve.log"


def test_every_subscriber_on_either_worker_hears_a_move_and_streams_end_when_the_server_stops(two_workers):
    proc, port, log = two_workers
    status, made = request(port, "POST", "/api/games", {"players": "Ana,Bo", "seed": 3, "shared": True})
    assert status == 201, made
    game_id, ana = made["id"], made["seats"][0]["secret"]
    workers = _children(proc.pid)
    assert len(workers) == 2
    streams: list[Stream] = []
    owners: dict[int, int] = {}
    deadline = time.monotonic() + 60  # the kernel hands each new connection to either worker
    while len(set(owners.values())) < 2 and time.monotonic() < deadline:
        streams += _streams(port, game_id, 3)
        owners = _owners(workers, port, streams)
    assert set(owners.values()) == set(workers), owners
    for s in streams:
        assert s.wait_for(0) and s.events[0][1] == {"version": 0, "over": False}  # the state on connecting

    for version in (1, 2):  # moves made through fresh connections: by either worker, heard on both
        started = time.monotonic()
        body = {"keep": []} if version == 1 else {"box": "chance"}
        status, out = request(port, "POST", f"/api/games/{game_id}/{'roll' if version == 1 else 'score'}", body,
                              {SEAT: ana})  # fmt: skip
        assert status == 200 and out["game"]["version"] == version, out
        delays = sorted(s.wait_for(version) - started for s in streams)
        assert all(s.events[-1][1] == {"version": version, "over": False} for s in streams)
        print(f"\nmove {version}: {len(streams)} subscribers on 2 workers heard it after "
              f"{1000 * delays[len(delays) // 2]:.1f} ms (median), {1000 * delays[-1]:.1f} ms (slowest)")  # fmt: skip
    status, watcher = request(port, "POST", f"/api/games/{game_id}/roll", {"keep": []})
    assert status == 403 and watcher["error"] == NEED_SECRET

    os.killpg(proc.pid, signal.SIGTERM)  # the server stops: the streams end, cleanly, not cut by uvicorn
    proc.wait(30)
    for s in streams:
        with s.arrived:
            s.arrived.wait_for(lambda s=s: s.ended_cleanly is not None, 10)
        assert s.ended_cleanly is True
    assert "graceful shutdown exceeded" not in log.read_text()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate of localhost and 127.0.0.1, and its key (the openssl command)."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    done = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"openssl cannot make a certificate: {done.stderr.strip()[:200]}")
    return cert, key


def test_a_bad_certificate_or_key_is_said_in_one_line(penta_table_dir, certificate, tmp_path):
    cert, key = certificate
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    for files, words in (
        ((tmp_path / "missing.pem", key), "does not exist"),
        ((garbage, key), "not a PEM certificate"),
        ((cert, garbage), "not a PEM certificate"),
    ):
        cmd = serving.quiet_serve(0, penta_table_dir, "--tls", *map(str, files))
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 1 and "Traceback" not in done.stderr + done.stdout, done
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: cannot serve HTTPS") and words in lines[0], lines
        assert "Serving" not in done.stdout  # said before anything is served


@pytest.mark.skipif(not HAS_TLS, reason="server.run has no tls option yet (pentadice/faces/web/server.py)")
def test_tls_serves_https_with_live_updates_and_refuses_a_foreign_host(penta_table_dir, certificate, tmp_path):
    cert, key = certificate
    tls = ssl.create_default_context(cafile=str(cert))
    port = serving.free_port()
    args = serving.quiet_serve(port, penta_table_dir, "--db", str(tmp_path / "games.sqlite3"), "--tls", str(cert),
                               str(key))  # fmt: skip
    log = tmp_path / "serve-tls.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log.read_text()
            with contextlib.suppress(OSError):
                if request(port, "GET", "/api/health", tls=tls)[0] == 200:
                    break
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert f"https://127.0.0.1:{port}/" in log.read_text()
        with pytest.raises((ssl.SSLError, http.client.HTTPException, ConnectionError)):  # no plain HTTP
            request(port, "GET", "/api/health")
        status, made = request(port, "POST", "/api/games", {"players": "Ana,cpu", "shared": True}, tls=tls)
        assert status == 201, made
        stream = Stream(port, made["id"], tls)
        started = time.monotonic()
        status, out = request(port, "POST", f"/api/games/{made['id']}/roll", {"keep": []},
                              {SEAT: made["seats"][0]["secret"]}, tls=tls)  # fmt: skip
        assert status == 200, out
        print(f"\nover HTTPS, one worker: the subscriber heard the move after "
              f"{1000 * (stream.wait_for(1) - started):.1f} ms")  # fmt: skip
        assert request(port, "GET", "/api/health", headers={"host": "evil.example"}, tls=tls)[0] == 421
        assert request(port, "GET", f"/api/games/{made['id']}/events", headers={"host": "evil.example"},
                       tls=tls)[0] == 421  # fmt: skip
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
