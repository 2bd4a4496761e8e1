"""Live updates of games (``GET /api/games/{id}/events``): every screen watching a game hears when it changes,
whichever server process made the move.

One :class:`Live` a server process. A move this process writes wakes its watchers of that game at once
(:meth:`Live.changed`, called after the commit); a move another process (``serve --workers N``) or another
server on the same database writes is found by polling: while anyone watches, one task of the process reads
the version of every game watched in it, in one small query, every :data:`POLL_SECONDS` (on SQLite and
PostgreSQL alike; PostgreSQL's LISTEN/NOTIFY would spare the polling, and is the next step). A watcher is sent
the game's version, never its view: it reads the view itself (with its seat's secret, if any). The streams
open at once in a process are bounded (:data:`STREAM_LIMIT`), and so are those of one client address
(:data:`CLIENT_STREAMS`; an IPv6 client's /64 network counts as one address: :func:`client_key`), of one game
(:data:`GAME_STREAMS`) and of one game from one address (:data:`CLIENT_GAME_STREAMS`), so that one client cannot
take the places of every other game's screens, nor of one game's; they all end as soon as the server stops
(``stopping``, checked at each poll)."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence

from starlette.concurrency import run_in_threadpool

from pentadice.storage.database import StorageError

POLL_SECONDS = 0.05  # how often the versions of the games watched are read from the database
PING_SECONDS = 15.0  # a comment line this often keeps a quiet stream (and the proxies on its way) open
RETRY_MS = 1000  # how soon a browser's EventSource connects again after a drop
# Streams open at once in a process: the HTTP layer counts each as a request being processed (of
# pentadice.faces.web.server's REQUEST_LIMIT, 1,024), and half of those are kept for the other requests.
STREAM_LIMIT = 512
# Streams of one client address (the connection's): a household's tables, a few tabs each, behind one address.
CLIENT_STREAMS = 64
# Streams of one game: a six-seat table with a few tabs or devices each, and screens watching it.
GAME_STREAMS = 32
# Streams of one game from one address: half the game's, so that one address cannot take a game's every place.
CLIENT_GAME_STREAMS = 16
LOG_EVERY = 60.0  # a failing poll is logged at most this often
log = logging.getLogger("pentadice.web")


class Place:
    """A stream's place in the bounds (:meth:`Live.take`): taken when its request is accepted, given back once,
    when its stream ends or, for a stream that never started (its client gone first), when it is dropped."""

    def __init__(self, live: Live, client: str, game_id: str) -> None:
        self.live, self.client, self.game_id = live, client, game_id
        self.held = True

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.live._give_back(self)

    def __del__(self) -> None:
        self.give_back()


class Refused(Exception):
    """A stream refused: ``status`` (429 for a client or game holding its share, 503 for a full server), what
    was full, in words."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class Watcher:
    """One stream's place on a game: woken when the game changes (or the server stops)."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.woken = asyncio.Event()


class Channel:
    """A game watched in this process: its latest known version and whether it is over, and its watchers."""

    def __init__(self, version: int, over: bool) -> None:
        self.version = version
        self.over = over
        self.watchers: set[Watcher] = set()

    def update(self, version: int, over: bool) -> None:
        """A version newer than the one known wakes the watchers (versions only grow: an older one read by a
        poll that crossed a commit is ignored). What is not a version (a damaged row's text) is ignored too: one
        game's row must not stop the polling of every game watched."""
        if not _is_version(version):
            return
        if not _is_version(self.version) or version > self.version:
            self.version, self.over = version, over
            for w in self.watchers:
                w.woken.set()


class Live:
    """The live updates of one server process (see the module). ``versions(ids)``: each game's version and
    whether it is finished, as the database has them (:meth:`pentadice.storage.games.GameRecords.versions`;
    blocking, run in a worker thread). ``stopping()``: whether the server is stopping (its streams then end)."""

    def __init__(
        self,
        versions: Callable[[Sequence[str]], dict[str, tuple[int, bool]]],
        *,
        limit: int = STREAM_LIMIT,
        interval: float = POLL_SECONDS,
        stopping: Callable[[], bool] | None = None,
        client_limit: int = CLIENT_STREAMS,
        game_limit: int = GAME_STREAMS,
        client_game_limit: int = CLIENT_GAME_STREAMS,
    ) -> None:
        self.versions = versions
        self.limit = limit
        self.client_limit = client_limit
        self.game_limit = game_limit
        self.client_game_limit = client_game_limit
        self._by_client: Counter[str] = Counter()  # places held, by client address, by game, by both
        self._by_game: Counter[str] = Counter()
        self._by_both: Counter[tuple[str, str]] = Counter()
        self._places = 0
        self.interval = interval
        self.stopping = stopping
        self.closed = False
        self._channels: dict[str, Channel] = {}
        self._poller: asyncio.Task | None = None
        self._logged = -LOG_EVERY

    @property
    def open(self) -> int:
        """Streams open now (or accepted and about to start)."""
        return self._places

    @property
    def full(self) -> bool:
        """Whether a new stream must be refused (:data:`STREAM_LIMIT` open, or the server stopping)."""
        return self.closed or self._places >= self.limit

    def take(self, client: str, game_id: str) -> Place:
        """A place for a new stream of ``game_id`` from the client address ``client``; :class:`Refused` when the
        server is full (503) or the client or the game holds its share already (429)."""
        if self.full:
            raise Refused(503, f"too many live streams are open on this server ({self._places}): try again")
        if self._by_client[client] >= self.client_limit:
            raise Refused(
                429, f"this address has {self.client_limit} live streams open, the most one may: close some first"
            )
        if self._by_game[game_id] >= self.game_limit:
            raise Refused(429, f"this game has {self.game_limit} live streams open, the most one may: close some first")
        if self._by_both[client, game_id] >= self.client_game_limit:
            raise Refused(
                429,
                f"this address has {self.client_game_limit} live streams of this game open, the most one may: close "
                "some first",
            )
        self._by_client[client] += 1
        self._by_game[game_id] += 1
        self._by_both[client, game_id] += 1
        self._places += 1
        return Place(self, client, game_id)

    def _give_back(self, place: Place) -> None:
        both = (place.client, place.game_id)
        for counts, key in ((self._by_client, place.client), (self._by_game, place.game_id), (self._by_both, both)):
            counts[key] -= 1
            if counts[key] <= 0:
                del counts[key]
        self._places -= 1

    def changed(self, game_id: str, version: int, over: bool) -> None:
        """This process wrote a move of ``game_id`` (now at ``version``): its watchers here are woken at once
        (in the event loop's thread)."""
        channel = self._channels.get(game_id)
        if channel is not None:
            channel.update(version, over)

    def watch(self, game_id: str, version: int, over: bool) -> Watcher:
        """A new watcher of ``game_id``, read at ``version`` (:meth:`leave` it when its stream ends)."""
        channel = self._channels.get(game_id)
        if channel is None:
            channel = self._channels[game_id] = Channel(version, over)
        else:
            channel.update(version, over)
        watcher = Watcher(channel)
        channel.watchers.add(watcher)
        if self._poller is None or self._poller.done():
            self._poller = asyncio.get_running_loop().create_task(self._poll())
        return watcher

    def leave(self, game_id: str, watcher: Watcher) -> None:
        """The watcher's stream ended; a game no one watches any more is no longer polled."""
        channel = self._channels.get(game_id)
        if channel is None:
            return
        channel.watchers.discard(watcher)
        if not channel.watchers:
            del self._channels[game_id]

    def close(self) -> None:
        """The server stops: every stream ends now, and no new one opens."""
        self.closed = True
        for channel in self._channels.values():
            for w in channel.watchers:
                w.woken.set()

    async def stream(self, watcher: Watcher) -> AsyncIterator[bytes]:
        """The Server-Sent Events of a watcher: ``event: game`` with the version and whether the game is over
        at once and at each change, ``: ping`` every :data:`PING_SECONDS` of quiet, until the server stops."""
        yield f"retry: {RETRY_MS}\n\n".encode()
        sent = None
        channel = watcher.channel
        while not self.closed:
            watcher.woken.clear()
            now = (channel.version, channel.over)
            if now != sent:
                yield event(*now)
                sent = now
            try:
                async with asyncio.timeout(PING_SECONDS):
                    await watcher.woken.wait()
            except TimeoutError:
                yield b": ping\n\n"

    async def _poll(self) -> None:
        """While any game is watched: its version read from the database every :data:`POLL_SECONDS` (every
        game watched in one query), its watchers woken where it changed; the streams closed once the server
        stops."""
        while self._channels and not self.closed:
            await asyncio.sleep(self.interval)
            if self.stopping is not None and self.stopping():
                self.close()
                return
            try:
                found = await run_in_threadpool(self.versions, list(self._channels))
            except StorageError as e:  # the database is away: the streams stay open, the next poll tries again
                if time.monotonic() - self._logged >= LOG_EVERY:
                    self._logged = time.monotonic()
                    log.warning("live updates: reading the games' versions failed: %s", e.message)
                continue
            except Exception:  # a bug: said with its traceback, and the polling goes on (else every stream is deaf)
                if time.monotonic() - self._logged >= LOG_EVERY:
                    self._logged = time.monotonic()
                    log.exception("live updates: reading the games' versions failed")
                continue
            for game_id, (version, over) in found.items():
                channel = self._channels.get(game_id)
                if channel is not None:
                    channel.update(version, over)


def _is_version(value: object) -> bool:
    """Whether ``value`` is a version as a game's row holds it, a whole number (a row changed on disk may hold
    text in its place)."""
    return isinstance(value, int) and not isinstance(value, bool)


def client_key(host: str) -> str:
    """The address a client's streams are counted under: its IP address; an IPv6 address's /64 network (one
    household's or one machine's share: such a client may pick any of its 2**64 addresses). Not an address
    (a test client's name): as it is."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # an IPv4 client of a dual-stack socket
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def event(version: int, over: bool) -> bytes:
    """The event of a game at ``version``: ``event: game`` and its data, a JSON object."""
    return f"event: game\ndata: {json.dumps({'version': version, 'over': over})}\n\n".encode()
