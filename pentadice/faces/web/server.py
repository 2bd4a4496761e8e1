"""Running the application: the listening socket bound first (a port in use or a bad host is known before
any table loads), then uvicorn (httptools, uvloop) on it until Ctrl-C or SIGTERM, with :class:`Protocol`, the
HTTP layer's limits: a request head must arrive whole within :data:`HEAD_SECONDS` of its first byte and be at
most :data:`HEAD_LIMIT` bytes; the limit at once is on requests being processed, not on connections; a client
that keeps the server waiting is the first one closed when a limit is reached; and every refusal at this layer
is a JSON error with the page's security headers."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import heapq
import json
import logging
import resource
import socket
import threading
import time
from collections import deque
from collections.abc import Callable

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol, RequestResponseCycle

REQUEST_LIMIT = 1024  # requests processed at once; far above a household's players and the load tests
CONNECTION_LIMIT = 8192  # connections open at once (fewer if the open-file limit is lower)
HEAD_SECONDS = 10.0  # a request head (request line and headers) must arrive whole within this time
HEAD_LIMIT = 64 * 1024  # bytes of a request head, request line and headers together
LINE_LIMIT = 8 * 1024  # bytes of the request line's target (414 beyond) and of each header line (431 beyond)
KEEP_ALIVE_SECONDS = 5.0  # an idle keep-alive connection is closed after this time
LINGER_SECONDS = 2.0  # after a refusal, what the client still sends is read and dropped for this long
OVERLOAD_LOG_SECONDS = 60.0  # an overload is logged at most once in this time
PIPELINE_LIMIT = 32  # requests one connection may send ahead of its answers; beyond, the connection is closed
FOLLOW_UPS_PER_TURN = 4  # requests sent ahead (pipelined) started at each turn of the event loop, all clients
WRITE_STALL_SECONDS = 0.5  # an answer this long unsent (the client reads nothing) counts as keeping us waiting
SEND_BUFFER = 64 * 1024  # bytes the kernel holds unsent per connection (not megabytes for a client not reading)
log = logging.getLogger("pentadice.web")


class LoggedOnce:
    """The application as uvicorn runs it: an exception it answered with its 500 and logged already
    (:data:`pentadice.faces.web.api.LOGGED`, which Starlette raises again) ends there, not logged a second time
    by uvicorn with the same traceback; any other reaches uvicorn."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        try:
            await self.app(scope, receive, send)
        except Exception as e:
            from pentadice.faces.web.api import LOGGED

            if not getattr(e, LOGGED, False):
                raise


def event_loop() -> str:
    """uvicorn's event loop: uvloop where it is installed (``uvicorn[standard]`` leaves it out on Windows and
    PyPy, where no pip extra brings it), else asyncio's own."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run(
    app, sock: socket.socket, on_started: Callable[[], None] | None = None, tls: tuple[str, str] | None = None
) -> None:
    """Serve ``app`` on ``sock`` until a signal stops it (uvicorn then raises that signal again: Ctrl-C
    becomes KeyboardInterrupt here). ``on_started`` is called from a thread once requests are answered.
    ``tls``: (certificate, private key), PEM files: HTTPS (``serve --tls``)."""
    import uvicorn

    config = uvicorn.Config(
        LoggedOnce(app),
        loop=event_loop(),
        http=type("Protocol", (Protocol,), {"connection_limit": _open_file_room(CONNECTION_LIMIT)}),
        ws="none",  # no WebSocket: an upgrade request is an ordinary request
        lifespan="off",
        access_log=False,
        log_level="warning",
        server_header=False,
        proxy_headers=False,  # a client is its connection's address: X-Forwarded-For is the client's to write
        timeout_graceful_shutdown=5,
        limit_concurrency=None,  # Protocol limits the requests processed at once, not uvicorn (connections)
        timeout_keep_alive=int(KEEP_ALIVE_SECONDS),
        ssl_certfile=tls[0] if tls else None,
        ssl_keyfile=tls[1] if tls else None,
    )
    server = uvicorn.Server(config)
    gc.collect()
    gc.freeze()  # what start-up made (tables, compiled code, the app) is left out of the collector's scans
    if on_started is not None:

        def wait_then_call() -> None:
            while not server.started and not server.should_exit:
                threading.Event().wait(0.05)
            if server.started:
                on_started()

        threading.Thread(target=wait_then_call, daemon=True).start()
    server.run(sockets=[sock])


def _open_file_room(wanted: int) -> int:
    """How many connections may be open at once: ``wanted``, the open-file limit raised towards it (up to
    the hard limit) first, less a reserve for the tables, logs and threads."""
    reserve = 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted + reserve:
        target = wanted + reserve if hard == resource.RLIM_INFINITY else min(hard, wanted + reserve)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(16, min(wanted, soft - reserve))


class Protocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits of an HTTP layer that faces hostile clients.

    - A request head must arrive whole within :data:`HEAD_SECONDS`, counted from the connection's opening
      (first request) or from the first byte of the head (a later one on a kept-alive connection); a byte
      does not restart the count. Past it: 408 (nothing sent: the connection is closed without a word).
    - At most :data:`HEAD_LIMIT` bytes of head, a target of at most :data:`LINE_LIMIT` bytes (414 beyond)
      and header lines of at most :data:`LINE_LIMIT` bytes (431 beyond): refused as soon as the limit is
      passed, before the rest is read.
    - :data:`REQUEST_LIMIT` requests processed at once (an idle or half-sent connection is not one) and
      ``connection_limit`` connections: past either, the connections that have kept the server waiting longest
      (a head or body still arriving, or idle) are closed first; 503 only when none is. Said in the log at
      most once in :data:`OVERLOAD_LOG_SECONDS`.
    - A connection whose answer has waited more than :data:`WRITE_STALL_SECONDS` for its client to read
      (the kernel holds about twice :data:`SEND_BUFFER` for it) also keeps the server waiting, and is shed
      likewise. At most :data:`PIPELINE_LIMIT` requests sent ahead of their answers (more: the connection is
      closed, the rest unread); those sent ahead start :data:`FOLLOW_UPS_PER_TURN` at a turn of the loop.
    - A client gone (or shed) drops its requests: their answers are sent to no one and nothing is logged.
      On SIGTERM a request waiting for its body or for its client to read ends at once (:meth:`shutdown`).
    - Every refusal here is ``{"error": ...}`` with the security headers (:func:`error_response`), a chunked
      body whose chunk size cannot be read included, when no answer has begun."""

    connection_limit = CONNECTION_LIMIT
    request_limit = REQUEST_LIMIT

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.limit_concurrency = None  # uvicorn's check counts connections: ours is in on_headers_complete
        self.in_head = True  # the bytes received belong to a request head not yet complete
        self.head_bytes = 0
        self.head_timer: asyncio.TimerHandle | None = None
        self.since = time.monotonic()  # since when the server has waited for this client (see waiting_since)
        self.refused = False
        self.running: RequestResponseCycle | None = None  # the request whose answer is being made
        self.write_stalled: float | None = None  # since when writing has been paused (the client reads nothing)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        self._connection_made(transport)

    def _connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        self.head_timer = self.loop.call_later(HEAD_SECONDS, self.head_timeout)
        if len(self.connections) > self.connection_limit and not self.shed(body_only=False):
            _overloaded(len(self.connections), len(self.tasks))
            self.refuse(503, "the server is busy: too many connections at once; try again", linger=False)

    def connection_lost(self, exc: Exception | None) -> None:
        self.cancel_head_timer()
        self.drop_requests()
        super().connection_lost(exc)

    def drop_requests(self) -> None:
        """The connection is gone or being closed: every request on it, the one being answered and those
        queued behind it, is answered to no one (its answer dropped, its body read as a disconnect), and the
        queue is freed."""
        for cycle in (self.running, self.cycle, *(c for c, _ in self.pipeline)):
            if cycle is not None and not cycle.response_complete:
                cycle.disconnected = True
                cycle.message_event.set()
        self.pipeline.clear()
        if self.flow is not None:
            self.flow.resume_writing()  # a send waiting for the client to read returns, and sends nothing

    def close(self) -> None:
        """Close the connection, its requests dropped (:meth:`drop_requests`)."""
        self.refused = True
        self.cancel_head_timer()
        self.drop_requests()
        self.transport.close()

    def _start_asgi_task(self, cycle: RequestResponseCycle, app) -> None:
        self.running = cycle
        send = cycle.send
        transport = self.transport

        async def guarded(message) -> None:  # a transport closed under a send is a client gone, not an error
            if transport.is_closing():
                cycle.disconnected = True
            await send(message)

        cycle.send = guarded  # type: ignore[method-assign]
        super()._start_asgi_task(cycle, app)

    def pause_writing(self) -> None:
        self.write_stalled = time.monotonic()
        super().pause_writing()

    def resume_writing(self) -> None:
        self.write_stalled = None
        super().resume_writing()

    def shutdown(self) -> None:
        """On SIGTERM: a request still waiting for its body (it cannot complete now) or for its client to read
        ends at once; the others finish (uvicorn's graceful shutdown)."""
        if self.transport.is_closing():
            return
        cycle = self.running
        waiting_body = cycle is not None and cycle.more_body and not cycle.response_started
        if waiting_body or self.write_stalled is not None:
            self.close()
            return
        super().shutdown()

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return
        self._unset_keepalive_if_required()
        if self.in_head:
            if self.head_timer is None:  # the first byte of a later request's head
                self.head_timer = self.loop.call_later(HEAD_SECONDS, self.head_timeout)
            self.head_bytes += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            pass  # no upgrade is served: the request was answered as an ordinary one
        except httptools.HttpParserError as e:
            if self.refused:  # stopped from a callback (too many requests sent ahead): closed already
                return
            reason = str(e).rstrip(".") or "it cannot be read"
            self.refuse(400, f"the request is not valid HTTP: {reason[:1].lower()}{reason[1:]}")
            return
        if self.in_head and self.head_bytes > HEAD_LIMIT and not self.refused:
            if not self.headers and len(getattr(self, "url", b"")) > LINE_LIMIT:
                self.refuse(414, f"the request target is longer than {LINE_LIMIT // 1024} KiB")
            else:
                self.refuse(431, f"the request head is larger than {HEAD_LIMIT // 1024} KiB")

    def on_url(self, url: bytes) -> None:
        if len(self.url) <= LINE_LIMIT:  # beyond it the request is refused: not kept
            self.url += url

    def on_headers_complete(self) -> None:
        if self.refused:
            raise _Stop
        if len(self.pipeline) >= PIPELINE_LIMIT:  # a client sending ahead without reading its answers
            self.close()
            raise _Stop  # the rest of what it sent is not parsed
        self.in_head = False
        self.cancel_head_timer()
        self.since = time.monotonic()  # the body, if any, is awaited from now
        refusal = self.head_refusal()
        starts_now = self.cycle is None or self.cycle.response_complete  # not queued behind an earlier request
        if refusal is None and starts_now and len(self.tasks) >= self.request_limit and not self.shed(body_only=True):
            _overloaded(len(self.connections), len(self.tasks))
            refusal = error_response(503, "the server is busy: too many requests at once; try again")
        if refusal is None:
            super().on_headers_complete()
            return
        self.url = b"/"  # the target refused is not parsed
        app = self.app
        self.app = refusal
        try:
            super().on_headers_complete()
        finally:
            self.app = app

    def head_refusal(self):
        """The error answering a request head over the limits, or with a target that is not ASCII; None."""
        if len(self.url) > LINE_LIMIT:
            return error_response(414, f"the request target is longer than {LINE_LIMIT // 1024} KiB")
        if not self.url.isascii():
            return error_response(400, "the request target must be ASCII: percent-encode other bytes")
        size = len(self.url)
        for name, value in self.headers:
            if len(name) + len(value) + 2 > LINE_LIMIT:
                return error_response(431, f"a header line is longer than {LINE_LIMIT // 1024} KiB")
            size += len(name) + len(value) + 4
        if size > HEAD_LIMIT:
            return error_response(431, f"the request head is larger than {HEAD_LIMIT // 1024} KiB")
        return None

    def on_body(self, body: bytes) -> None:
        if not self.refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if self.refused:
            return
        super().on_message_complete()
        self.in_head, self.head_bytes = True, 0  # what comes next is the next request's head

    def on_response_complete(self) -> None:
        self.since = time.monotonic()  # idle from now, until the next request
        if not self.pipeline or self.transport.is_closing():
            super().on_response_complete()
            return
        # A request sent ahead of this answer: started in its turn among every connection's (FOLLOW_UPS_PER_TURN
        # a turn of the event loop), so that clients sending many at once cannot crowd out the others.
        self.server_state.total_requests += 1
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        cycle, app = self.pipeline.pop()
        self.running = cycle
        _follow_ups.append((self, cycle, app))
        if len(_follow_ups) == 1:
            self.loop.call_soon(_start_follow_ups, self.loop)

    def head_timeout(self) -> None:
        """The head did not arrive whole in time: 408 if some of it came, else the connection is closed."""
        self.head_timer = None
        if not self.in_head or self.refused or self.transport.is_closing():
            return
        if self.head_bytes:
            self.refuse(408, f"the request head did not arrive within {HEAD_SECONDS:g} seconds")
        else:
            self.refused = True
            self.transport.close()

    def cancel_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def refuse(self, status: int, message: str, linger: bool = True) -> None:
        """Answer ``status`` with ``message`` at once and close the connection; ``linger``: the answer sent
        and the sending side shut first, what the client still sends is read and dropped for
        :data:`LINGER_SECONDS` (closing on unread bytes would reset the connection, and the client could lose
        the answer)."""
        self.refused = True
        self.cancel_head_timer()
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            if cycle.response_started or self.pipeline or self.running is not cycle:
                self.close()  # an answer has begun, or others are due first: no other
                return
            self.drop_requests()  # the request is answered here, not by the application reading its body
        self.transport.write(error_bytes(status, message))
        if not linger or not self.transport.can_write_eof():
            self.transport.close()
            return
        self.transport.write_eof()
        self.flow.resume_reading()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def waiting_since(self, body_only: bool) -> float | None:
        """Since when this connection has kept the server waiting (a head or body arriving, or idle between
        requests; ``body_only``: a body arriving only), or None if it is not (a request being processed)."""
        if self.refused or self.transport is None or self.transport.is_closing():
            return None
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return None if body_only else self.since
        if self.write_stalled is not None and time.monotonic() - self.write_stalled > WRITE_STALL_SECONDS:
            return self.write_stalled  # an answer waiting for a client that does not read
        if cycle.more_body and not cycle.response_started and not self.pipeline:
            return self.since
        return None

    def shed(self, body_only: bool) -> bool:
        """Close the connections that have kept the server waiting longest (a few at once, so that a flood
        does not scan them all for each new one); whether any was."""
        waiting = []
        for other in self.connections:
            since = other.waiting_since(body_only) if other is not self and isinstance(other, Protocol) else None
            if since is not None:
                waiting.append((since, id(other), other))
        if not waiting:
            return False
        _overloaded(len(self.connections), len(self.tasks))
        for _, _, other in heapq.nsmallest(max(1, len(waiting) // 32), waiting):
            if other.cycle is None or other.cycle.response_complete:
                other.transport.write(error_bytes(503, "the server is busy: a slow or idle connection is closed"))
            other.close()
        return True


_follow_ups: deque[tuple[Protocol, RequestResponseCycle, object]] = deque()


def _start_follow_ups(loop: asyncio.AbstractEventLoop) -> None:
    """Start the first :data:`FOLLOW_UPS_PER_TURN` requests queued by :meth:`Protocol.on_response_complete`
    (those of closed connections are dropped), and the next ones at the next turn of the loop."""
    for _ in range(min(FOLLOW_UPS_PER_TURN, len(_follow_ups))):
        protocol, cycle, app = _follow_ups.popleft()
        if protocol.transport.is_closing() or cycle.disconnected:
            cycle.disconnected = True
            continue
        protocol._start_asgi_task(cycle, app)
    if _follow_ups:
        loop.call_soon(_start_follow_ups, loop)


class _Stop(Exception):
    """Raised from a parser callback: what else the client sent is not parsed (the connection is closed)."""


_last_overload = [-float("inf")]


def _overloaded(connections: int, requests: int) -> None:
    """Log an overload, at most once in :data:`OVERLOAD_LOG_SECONDS` (not once per client)."""
    now = time.monotonic()
    if now - _last_overload[0] >= OVERLOAD_LOG_SECONDS:
        _last_overload[0] = now
        log.warning(
            "overloaded (%d connections, %d requests at once): the clients that kept the server waiting longest "
            "are closed first (said at most once a minute)",
            connections,
            requests,
        )


def _error_parts(status: int, message: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    from pentadice.faces.web.responses import JSON, NO_STORE, SECURITY_HEADERS, escaped

    body = escaped(json.dumps({"error": message}).encode())
    headers = [
        (b"content-type", JSON.encode()),
        (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS,
        NO_STORE,
        (b"connection", b"close"),
    ]
    return body, headers


def error_bytes(status: int, message: str) -> bytes:
    """A whole HTTP response: ``{"error": message}`` with the security headers, then the connection closes."""
    body, headers = _error_parts(status, message)
    return b"".join([STATUS_LINE[status], *(name + b": " + value + b"\r\n" for name, value in headers), b"\r\n", body])


def error_response(status: int, message: str):
    """An ASGI application answering every request with ``status`` and ``{"error": message}``, with the
    security headers, then closing the connection."""
    body, headers = _error_parts(status, message)

    async def respond(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body if scope.get("method") != "HEAD" else b""})

    return respond
