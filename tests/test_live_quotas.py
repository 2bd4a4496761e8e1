"""Live updates under one greedy client: the event streams (``GET /api/games/{id}/events``) one client address
may hold, and one game, are bounded (``live.CLIENT_STREAMS``, ``live.GAME_STREAMS``), so that one client
holding its whole share leaves the other games' players their streams and their events. Against a real
``pentadice serve`` on 127.0.0.1; the other clients connect from other loopback addresses (127.0.0.2...:
the whole 127.0.0.0/8 is loopback on Linux), the client socket bound to its source address. Bounded: at
most about 110 sockets, a few seconds. How long an event takes under the flood is a benchmark figure
(benchmarks/bench_live.py), not asserted here."""

from __future__ import annotations

import gc
import json
import socket
import sys
import time

import pytest
import serving

from pentadice.faces.web import live
from pentadice.faces.web.seats import HEADER as SEAT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="127.0.0.2 is loopback on Linux")


class Stream:
    """A raw HTTP/1.1 connection asking for a game's events from the loopback address ``source``."""

    def __init__(self, port: int, game_id: str, source: str = "127.0.0.1", headers: str = "") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20, source_address=(source, 0))
        self.sock.sendall(f"GET /api/games/{game_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            assert chunk, "the server closed the connection"
            self.buffer += chunk
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        self.status = int(head.split(b" ", 2)[1])
        self.head = head.decode("latin-1").lower()

    def body(self) -> dict:
        """The refusal's JSON body (a refused stream's answer has a Content-Length)."""
        length = int(self.head.split("content-length: ")[1].split("\r\n")[0])
        while len(self.buffer) < length:
            self.buffer += self.sock.recv(65536)
        return json.loads(self.buffer[:length])

    def wait_for(self, version: int, seconds: float = 20) -> dict:
        """The first game event of at least ``version`` (failing after ``seconds``)."""
        deadline = time.monotonic() + seconds
        while True:
            for block in self.buffer.split(b"\n\n"):
                lines = block.split(b"\n")
                data = [line[6:] for line in lines if line.startswith(b"data: ")]
                if b"event: game" in lines and data and json.loads(data[0])["version"] >= version:
                    return json.loads(data[0])
            left = deadline - time.monotonic()
            assert left > 0, f"no event of version {version}: {self.buffer[-400:]!r}"
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            assert chunk, "the stream ended"
            self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


def _post(port: int, path: str, body: dict, headers: dict | None = None, source: str = "127.0.0.2") -> dict:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    try:
        conn.request("POST", path, json.dumps(body), {"content-type": "application/json", **(headers or {})})
        r = conn.getresponse()
        out = json.loads(r.read())
        assert r.status in (200, 201), out
        return out
    finally:
        conn.close()


@pytest.fixture(scope="module")
def server(penta_table_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("live-quotas")
    port = serving.free_port()
    args = serving.quiet_serve(port, penta_table_dir, "--db", str(tmp / "games.sqlite3"))
    with serving.started(args, port, tmp / "serve.log"):
        yield port


def test_one_address_holding_its_whole_share_leaves_another_games_players_their_streams_and_events(server):
    port = server
    games = -(-live.CLIENT_STREAMS // live.CLIENT_GAME_STREAMS)  # as few as hold the whole share
    flooded = [_post(port, "/api/games", {"players": "Ana,cpu"})["id"] for _ in range(games)]
    greedy: list[Stream] = []
    try:
        for i in range(live.CLIENT_STREAMS):  # the whole share of 127.0.0.1, over its games
            s = Stream(port, flooded[i % games])
            assert s.status == 200, (i, s.head)
            greedy.append(s)
        more = Stream(port, flooded[0])
        assert more.status == 429 and "retry-after" in more.head and "address" in more.body()["error"]
        more.close()
        # Another game's table, from another address: every seat's streams, a few tabs each, and the moves heard.
        table = _post(port, "/api/games", {"players": "Ana,Bob,Cy,Di,Ed,Flo", "shared": True, "seed": 5})
        tabs = [Stream(port, table["id"], source="127.0.0.2") for _ in range(12)]
        try:
            assert all(t.status == 200 for t in tabs), [t.head for t in tabs if t.status != 200]
            assert all(t.wait_for(0) == {"version": 0, "over": False} for t in tabs)
            ana = table["seats"][0]["secret"]
            _post(port, f"/api/games/{table['id']}/roll", {"keep": []}, {SEAT: ana})
            assert all(t.wait_for(1) == {"version": 1, "over": False} for t in tabs)
        finally:
            for t in tabs:
                t.close()
    finally:
        for s in greedy:
            s.close()


def test_one_game_holds_at_most_its_share_of_streams_from_any_addresses(server):
    port = server
    game_id = _post(port, "/api/games", {"players": "Ana,cpu"})["id"]
    other = _post(port, "/api/games", {"players": "Bo,cpu"})["id"]
    mine = [Stream(port, game_id, source="127.0.0.3") for _ in range(live.CLIENT_GAME_STREAMS + 1)]
    assert [s.status for s in mine] == [200] * live.CLIENT_GAME_STREAMS + [429]  # one address: half the game's
    assert "of this game" in mine[-1].body()["error"]
    mine.pop().close()
    held = mine + [Stream(port, game_id, source=f"127.0.0.{4 + i % 8}")
                   for i in range(live.GAME_STREAMS - len(mine))]  # fmt: skip
    try:
        assert all(s.status == 200 for s in held)
        refused = Stream(port, game_id, source="127.0.0.20")
        assert refused.status == 429 and "this game" in refused.body()["error"]
        refused.close()
        fine = Stream(port, other, source="127.0.0.20")
        assert fine.status == 200 and fine.wait_for(0)["version"] == 0
        fine.close()
        held.pop().close()  # a place given back is free again
        deadline = time.monotonic() + 10
        while True:
            again = Stream(port, game_id, source="127.0.0.21")
            if again.status == 200 or time.monotonic() > deadline:
                break
            again.close()
            time.sleep(0.05)
        assert again.status == 200
        again.close()
    finally:
        for s in held:
            s.close()


def test_a_client_is_its_connections_address_whatever_forwarded_header_it_sends(server):
    port = server
    game_id = _post(port, "/api/games", {"players": "Ana,cpu"})["id"]
    streams = [Stream(port, game_id, source="127.0.0.1", headers=f"X-Forwarded-For: 198.51.100.{i}\r\n")
               for i in range(live.CLIENT_GAME_STREAMS + 1)]  # fmt: skip
    try:
        assert [s.status for s in streams] == [200] * live.CLIENT_GAME_STREAMS + [429]
        assert "of this game" in streams[-1].body()["error"]
    finally:
        for s in streams:
            s.close()


def test_a_place_is_given_back_when_its_stream_ends_or_never_starts():
    watching = live.Live(lambda ids: {}, client_limit=2, game_limit=3, client_game_limit=2)
    one = watching.take("10.0.0.1", "g")
    watching.take("10.0.0.1", "h")  # dropped at once: a stream that never started gives its place back
    gc.collect()
    assert watching.open == 1
    two = watching.take("10.0.0.1", "g")
    with pytest.raises(live.Refused) as refused:
        watching.take("10.0.0.1", "h")
    assert refused.value.status == 429
    three = watching.take("10.0.0.2", "g")
    with pytest.raises(live.Refused, match="this game"):
        watching.take("10.0.0.3", "g")
    for place in (one, two, three):
        place.give_back()
        place.give_back()  # once only
    assert watching.open == 0 and not watching._by_client and not watching._by_game and not watching._by_both
    watching = live.Live(lambda ids: {}, client_game_limit=1)
    kept = watching.take("10.0.0.1", "g")
    with pytest.raises(live.Refused, match="of this game"):
        watching.take("10.0.0.1", "g")
    kept.give_back()


def test_a_game_whose_stored_version_is_not_a_number_stops_no_other_games_updates():
    import asyncio

    stored = {"a": (0, False), "b": (0, False)}

    async def watch_both() -> None:
        watching = live.Live(lambda ids: {g: stored[g] for g in ids}, interval=0.001)
        a, b = watching.watch("a", 0, False), watching.watch("b", "zero", False)
        stored["b"] = ("damaged", False)
        await asyncio.sleep(0.02)
        stored["a"] = stored["b"] = (1, False)
        async with asyncio.timeout(5):
            await a.woken.wait()
            await b.woken.wait()
        watching.close()

    asyncio.run(watch_both())


def test_a_poll_that_fails_unexpectedly_is_logged_and_the_next_one_wakes_the_streams(caplog):
    import asyncio

    polls = []

    def versions(ids):
        polls.append(ids)
        if len(polls) == 1:
            raise RuntimeError("a bug")
        return {"a": (1, False)}

    async def watch() -> None:
        watching = live.Live(versions, interval=0.001)
        a = watching.watch("a", 0, False)
        async with asyncio.timeout(5):
            await a.woken.wait()
        watching.close()

    asyncio.run(watch())
    assert "reading the games' versions failed" in caplog.text and "a bug" in caplog.text


def test_an_ipv6_clients_network_counts_as_one_address():
    key = live.client_key
    assert key("2001:db8:1:2::1") == key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert key("2001:db8:1:3::1") != key("2001:db8:1:2::1")
    assert key("::ffff:192.0.2.7") == key("192.0.2.7") == "192.0.2.7"
    assert key("127.0.0.2") != key("127.0.0.1") and key("testclient") == "testclient"
