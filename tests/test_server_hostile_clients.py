"""The HTTP layer of `pentadice serve` under hostile clients, each against a real server
process on 127.0.0.1 and a free port: slow clients, huge heads, foreign Host headers, requests that are not
HTTP, clients that leave mid-body. Bounded in count (at most 1,100 sockets) and time (each test well under a
minute). No latency is asserted: a normal client must be answered while the others are open, and the slowest
of its answers is printed."""

from __future__ import annotations

import contextlib
import json
import re
import resource
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="no fastapi: make install (the [web] extra)")
pytest.importorskip("uvicorn", reason="no uvicorn: make install (the [web] extra)")

import serving as serving_process

from pentadice.faces.web import addresses, bodies
from pentadice.faces.web import server as web_server

_free_port = serving_process.free_port

ROOT = Path(__file__).resolve().parent.parent
SLOW = 1100  # more than uvicorn's old limit of 1,024 connections, which these once filled
SECURITY = ("content-security-policy", "x-content-type-options", "referrer-policy", "cache-control")
ADVICE = b'{"dice": [1, 1, 3, 4, 6], "rolls_left": 2, "sheet": {"ones": 3}}'


def _raise_open_files(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        if target < wanted:
            pytest.skip(f"the open-file limit ({hard}) is below the {wanted} sockets this test holds")


class Served:
    """A running ``pentadice serve``: its port, process and log."""

    def __init__(self, proc: subprocess.Popen, port: int, log: Path) -> None:
        self.proc, self.port, self.log = proc, port, log

    def log_text(self, start: int = 0) -> str:
        return self.log.read_bytes()[start:].decode("utf-8", "replace")

    def log_size(self) -> int:
        return self.log.stat().st_size

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


@contextlib.contextmanager
def serving(tables: Path, log: Path, *extra: str, open_files: int | None = None):
    """``pentadice serve`` on 127.0.0.1 and a free port until ``/api/health`` answers; stopped afterwards.
    ``open_files``: its open-file limit (soft and hard)."""
    port = _free_port()
    args = serving_process.quiet_serve(port, tables, *extra)

    def limit() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with serving_process.started(args, port, log, preexec_fn=limit) as proc:
        yield Served(proc, port, log)


@pytest.fixture(scope="module")
def served(penta_table_dir, tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with serving(penta_table_dir, log, "--allow-host", "Pentadice.Test") as s:
        yield s


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> dict:
        assert self.headers.get("content-type") == "application/json", (self.status, self.headers, self.body)
        return json.loads(self.body)

    def assert_json_error(self, status: int) -> str:
        """The error's message, after checking the status, the JSON body and the security headers."""
        assert self.status == status, (self.status, self.body)
        message = self.json()["error"]
        assert isinstance(message, str) and message
        for name in SECURITY:
            assert name in self.headers, (name, self.headers)
        return message


def read_answer(sock: socket.socket, timeout: float = 10.0) -> Answer:
    """One HTTP answer read from ``sock``: status, headers (lower-case names) and the body by its length."""
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before an answer: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", 0))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return Answer(status, headers, body[:length])


def exchange(port: int, data: bytes, timeout: float = 10.0) -> Answer:
    """Send ``data`` on a new connection and read the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        return read_answer(sock, timeout)


def request(port: int, method: str, path: str, host: str | None = "127.0.0.1", body: bytes = b"", extra=()) -> Answer:
    lines = [f"{method} {path} HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {host}")
    lines += [*extra, f"Content-Length: {len(body)}", "Connection: close"]
    return exchange(port, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)


def timed(port: int, method: str, path: str, body: bytes = b"") -> tuple[Answer, float]:
    start = time.monotonic()
    answer = request(port, method, path, body=body)
    return answer, time.monotonic() - start


# 3. Slow clients


def test_slow_clients_do_not_lock_anyone_out(served):
    """1,100 connections that each send part of a request head, then a byte every 2 s: a normal client is
    still answered while they are all open (200, not 503, nor a wait for them to end), and nothing is said in the
    log for each of them. How long the answers took is printed, not asserted."""
    _raise_open_files(SLOW + 200)
    start = served.log_size()
    socks = []
    worst = 0.0
    try:
        for _ in range(SLOW):
            s = socket.create_connection(("127.0.0.1", served.port))
            s.sendall(b"POST /api/advise HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(s)
        end = time.monotonic() + 7  # within the 10 s the server gives a head
        while time.monotonic() < end:
            for s in socks:
                with contextlib.suppress(OSError):
                    s.send(b"a")
            for method, path, body in (("GET", "/api/health", b""), ("POST", "/api/advise", ADVICE)):
                answer, seconds = timed(served.port, method, path, body)
                assert answer.status == 200, (answer.status, answer.body)
                worst = max(worst, seconds)
            time.sleep(1.5)
    finally:
        for s in socks:
            s.close()
    print(f"\nslowest answer with {SLOW} slow connections open: {worst * 1000:.0f} ms")
    log = served.log_text(start)
    assert "Exceeded concurrency" not in log and "Traceback" not in log, log


@pytest.mark.parametrize("kept_alive", [False, True], ids=["first-request", "after-a-request"])
def test_a_trickled_head_is_cut_off_at_its_deadline_not_per_byte(served, kept_alive):
    """A head that never completes, a byte every half second: answered 408 in JSON about ten seconds after
    the connection opened (or, on a kept-alive connection, after the head's first byte), although bytes kept
    coming (each of which once restarted the keep-alive timer)."""
    with socket.create_connection(("127.0.0.1", served.port)) as s:
        if kept_alive:
            s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert read_answer(s).status == 200
            time.sleep(1)
        opened = time.monotonic()
        s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        while time.monotonic() - opened < web_server.HEAD_SECONDS + 8:
            readable, _, _ = select.select([s], [], [], 0.5)
            if readable:
                break
            with contextlib.suppress(OSError):
                s.send(b"a")
        else:
            pytest.fail("the trickled head was still held open")
        seconds = time.monotonic() - opened
        message = read_answer(s).assert_json_error(408)
    assert "did not arrive within" in message
    assert web_server.HEAD_SECONDS - 1 <= seconds <= web_server.HEAD_SECONDS + 5, seconds


def test_slow_bodies_beyond_the_request_limit_give_way_and_are_logged_once(served):
    """1,100 requests whose bodies trickle (more than the 1,024 processed at once): the slowest are closed to
    make room, a normal client is answered, and the log says so once, without a traceback."""
    _raise_open_files(SLOW + 200)
    start = served.log_size()
    socks = []
    head = b"POST /api/advise HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"
    try:
        for _ in range(SLOW):
            s = socket.create_connection(("127.0.0.1", served.port))
            s.sendall(head)
            socks.append(s)
        time.sleep(0.5)
        for method, path, body in (("GET", "/api/health", b""), ("POST", "/api/advise", ADVICE)):
            answer, _ = timed(served.port, method, path, body)
            assert answer.status == 200, (answer.status, answer.body)
    finally:
        for s in socks:
            s.close()
    time.sleep(1.0)
    log = served.log_text(start)
    assert len(re.findall("overloaded", log)) == 1, log
    for word in ("Traceback", "internal error", "ClientDisconnect", "Exceeded concurrency"):
        assert word not in log, log


def test_over_the_connection_limit_the_idle_are_closed_first_with_json(penta_table_dir, tmp_path):
    """A server whose open-file limit allows about 340 connections, and 420 idle ones: the oldest get a JSON
    503 with the security headers and are closed; a new client is answered; the log says it once."""
    _raise_open_files(600)
    log = tmp_path / "serve.log"
    with serving(penta_table_dir, log, open_files=600) as small:
        socks = []
        try:
            for _ in range(420):
                socks.append(socket.create_connection(("127.0.0.1", small.port)))
            time.sleep(0.5)
            refused = []
            for s in socks[:40]:
                readable, _, _ = select.select([s], [], [], 0)
                if readable:
                    refused.append(read_answer(s, 2))
            answer, _ = timed(small.port, "GET", "/api/health")
            assert answer.status == 200
        finally:
            for s in socks:
                s.close()
        assert refused, "no idle connection was closed"
        for a in refused:
            assert "busy" in a.assert_json_error(503)
        time.sleep(0.5)
        text = small.log_text()
    assert len(re.findall("overloaded", text)) == 1, text
    assert "Traceback" not in text


# 4. The size of a request head


def test_a_huge_header_is_refused_early_and_does_not_stall_others(served):
    """A 50 MB header line: 431 in JSON after the first 64 KiB or so, the rest never read into memory;
    /api/health meanwhile answers as usual."""
    rss_before = served.rss_kib()
    sent = [0]
    answers: list[Answer] = []

    def attack() -> None:
        with socket.create_connection(("127.0.0.1", served.port)) as s:
            s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            chunk = b"a" * 65536
            try:
                while sent[0] < 50 * 1024 * 1024:
                    readable, writable, _ = select.select([s], [s], [], 5)
                    if readable:
                        break
                    if writable:
                        sent[0] += s.send(chunk)
            except OSError:
                pass
            answers.append(read_answer(s))

    thread = threading.Thread(target=attack)
    thread.start()
    latencies = []
    while thread.is_alive() and len(latencies) < 20:
        answer, seconds = timed(served.port, "GET", "/api/health")
        assert answer.status == 200
        latencies.append(seconds)
    thread.join(30)
    assert answers, "no answer to the huge header"
    message = answers[0].assert_json_error(431)
    assert "64" in message
    assert sent[0] < 20 * 1024 * 1024, sent[0]  # refused long before the 50 MB were sent
    grown = served.rss_kib() - rss_before
    print(
        f"\nhuge header: refused after {sent[0] / 1024:.0f} KiB sent; health at worst"
        f" {max(latencies or [0]) * 1000:.0f} ms; server memory {grown / 1024:+.1f} MiB"
    )
    assert grown < 64 * 1024, grown


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"GET /api/health?" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
        (b"GET /api/health?" + b"a" * 9_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
        (b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"a" * 9_000 + b"\r\n\r\n", 431),
        (
            b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (b"X-More: " + b"b" * 4_000 + b"\r\n") * 20 + b"\r\n",
            431,
        ),
    ],
    ids=["url-100k", "url-9k", "header-9k", "head-80k"],
)
def test_heads_over_the_limits_are_json_errors(served, head, status):
    assert exchange(served.port, head).assert_json_error(status)


def test_heads_within_the_limits_are_answered(served):
    head = b"GET /api/health?" + b"a" * 7_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"b" * 7_000 + b"\r\n"
    head += (b"X-More: " + b"c" * 4_000 + b"\r\n") * 10 + b"Connection: close\r\n\r\n"
    assert exchange(served.port, head).status == 200


# 5. The Host header (DNS rebinding)


def test_a_foreign_host_is_refused_and_makes_no_game(served):
    port = served.port
    games = request(port, "GET", "/api/health").json()["games"]
    foreign = request(
        port,
        "POST",
        "/api/games",
        host=f"evil.example:{port}",
        body=b'{"players": "Ana,cpu"}',
        extra=[f"Origin: http://evil.example:{port}", "Content-Type: application/json"],
    )
    assert "evil.example" in foreign.assert_json_error(421)
    assert request(port, "GET", "/api/health", host=f"evil.example:{port}").status == 421
    assert request(port, "GET", "/", host="evil.example").status == 421
    assert request(port, "GET", "/api/health").json()["games"] == games


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "localhost:{port}",
        "LOCALHOST",
        "[::1]:{port}",
        "127.0.0.2",
        "app.localhost:{port}",
        "pentadice.test:{port}",
        "Pentadice.Test.",
    ],
)
def test_the_hosts_served_are_answered(served, host):
    assert request(served.port, "GET", "/api/health", host=host.format(port=served.port)).status == 200


def test_two_host_headers_or_none_are_refused(served):
    two = request(served.port, "GET", "/api/health", extra=["Host: evil.example"])
    assert "two Host" in two.assert_json_error(400)
    assert request(served.port, "GET", "/api/health", extra=["Host: 127.0.0.1"]).status == 400
    assert "no Host" in request(served.port, "GET", "/api/health", host=None).assert_json_error(400)
    old = exchange(served.port, b"GET /api/health HTTP/1.0\r\n\r\n")
    assert old.status == 200


def test_allowed_hosts_name_the_address_listened_on_and_printed():
    assert {"localhost", "127.0.0.1", "box.example"} <= addresses.allowed_hosts("127.0.0.1", ["Box.Example."])
    wildcard = addresses.allowed_hosts("0.0.0.0")
    assert addresses.network_address("0.0.0.0") in wildcard and "0.0.0.0" in wildcard


# 6. Errors of the HTTP layer: JSON with the security headers


@pytest.mark.parametrize(
    "head",
    [
        b"GET /\xff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /api/health?\xff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"POST /api/advise HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc",
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: \x01\r\n\r\n",
        b"NOT HTTP AT ALL\r\n\r\n",
    ],
    ids=["0xff-path", "0xff-query", "te-and-cl", "control-char", "garbage"],
)
def test_requests_that_are_not_http_get_json(served, head):
    message = exchange(served.port, head).assert_json_error(400)
    assert "Invalid HTTP request received" not in message


# Found by the second attack run


@pytest.mark.parametrize("size", [b"zz", b"ffffffffffffffffff"], ids=["not-hex", "overflow"])
def test_a_bad_chunk_size_is_a_json_error(served, size):
    """A chunked body whose chunk size is not one (the application already reading the body): a JSON 400
    with the security headers, not a connection closed without a word; the server is well after it."""
    start = served.log_size()
    head = b"POST /api/advise HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    message = exchange(served.port, head + size + b"\r\nabc\r\n0\r\n\r\n").assert_json_error(400)
    assert "chunk size" in message, message
    assert request(served.port, "GET", "/api/health").status == 200
    assert "Traceback" not in served.log_text(start)


def _health_while(served, seconds: float) -> float:
    """The slowest of /api/health's answers, asked every 0.2 s for ``seconds`` (each must be 200)."""
    worst = 0.0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        answer, took = timed(served.port, "GET", "/api/health")
        assert answer.status == 200, (answer.status, answer.body)
        worst = max(worst, took)
        time.sleep(0.2)
    return worst


def test_clients_that_pipeline_and_never_read_do_not_stall_others(served):
    """400 connections each sending 20 requests for the page's script (52 KB) at once, and reading none of
    the answers, and 50 sending 100 requests for /openapi.json: a normal client is still answered at once
    (the requests sent ahead are started a few at a turn among all clients, a client not reading stops
    being served once its buffers are full, and one sending more than PIPELINE_LIMIT ahead is closed). How
    long the answers took is printed, not asserted."""
    _raise_open_files(700)
    start = served.log_size()
    socks = []
    script = b"GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 20
    api = b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 100
    try:
        for i in range(450):
            s = socket.create_connection(("127.0.0.1", served.port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            s.sendall(script if i < 400 else api)
            socks.append(s)
        worst = _health_while(served, 4)
    finally:
        for s in socks:
            s.close()
    print(f"\nslowest answer with 450 connections pipelining and not reading: {worst * 1000:.0f} ms")
    time.sleep(0.5)
    log = served.log_text(start)
    for word in ("Traceback", "internal error", "RuntimeError"):
        assert word not in log, log


def test_one_connection_pipelining_without_end_is_bounded_and_quiet(served):
    """One connection sending 200,000 requests without reading an answer, and one sending 2,000 then
    closing: the server's memory hardly grows, a normal client is answered, and nothing is logged (once
    hundreds of megabytes and "internal error" tracebacks of a closed transport)."""
    start = served.log_size()
    before = served.rss_kib()
    flood = socket.create_connection(("127.0.0.1", served.port))
    flood.setblocking(False)
    data = memoryview(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 200_000)
    sent = 0
    end = time.monotonic() + 3
    with socket.create_connection(("127.0.0.1", served.port)) as burst:
        burst.sendall(b"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 2000)
        while time.monotonic() < end and sent < len(data):
            try:
                sent += flood.send(data[sent : sent + 65536])
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                break  # closed by the server: sending too many ahead
    flood.close()
    assert request(served.port, "GET", "/api/health").status == 200
    grown = (served.rss_kib() - before) / 1024
    print(f"\nRSS grew {grown:.0f} MB; {sent:,} bytes of requests sent")
    assert grown < 100, grown
    time.sleep(0.5)
    log = served.log_text(start)
    for word in ("Traceback", "internal error", "RuntimeError"):
        assert word not in log, log


def test_sigterm_ends_requests_waiting_for_their_bodies_at_once(penta_table_dir, tmp_path):
    """SIGTERM with 50 bodies half sent: those requests cannot complete, so they end at once and the server
    stops long before their bodies' deadline (what it once waited for), without uvicorn's "Cancel N running
    task(s)" error."""
    log = tmp_path / "serve.log"
    socks = []
    with serving(penta_table_dir, log) as s:
        for _ in range(50):
            sock = socket.create_connection(("127.0.0.1", s.port))
            sock.sendall(b"POST /api/advise HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
            socks.append(sock)
        time.sleep(0.5)
        started = time.monotonic()
        s.proc.terminate()
        s.proc.wait(15)
        seconds = time.monotonic() - started
    for sock in socks:
        sock.close()
    text = log.read_text()
    print(f"\nstopped {seconds:.2f} s after SIGTERM")
    assert seconds < bodies.BODY_SECONDS / 2, (seconds, text)
    for word in ("ERROR", "Cancel", "Traceback", "timeout graceful shutdown"):
        assert word not in text, text


def test_allow_host_takes_a_name_or_address_alone(penta_table_dir):
    """``--allow-host`` with a URL (or a port, a path, a user) once matched nothing, silently: refused at
    start as a usage error that shows the form expected, before any table is loaded."""
    args = [sys.executable, "-m", "pentadice", "serve", "--port", "0", "--data", str(penta_table_dir)]
    try:
        done = subprocess.run(
            [*args, "--allow-host", "http://my.box:8000/"], capture_output=True, text=True, timeout=20
        )
    except subprocess.TimeoutExpired:
        pytest.fail("serve --allow-host http://my.box:8000/ was accepted: it started serving")
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "is not a host name or address" in done.stderr and "--allow-host my.box" in done.stderr, done.stderr
    for bad in ("my.box:8000", "my.box/", "user@my.box", "", "http://my.box"):
        with pytest.raises(ValueError, match="is not a host name or address"):
            addresses.host_name(bad)
    for good in ("my.box", "Pentadice.Test", "192.168.1.5", "::1", "[::1]"):
        assert addresses.host_name(good) == good


# 7. A client that leaves mid-body


def test_a_client_leaving_mid_body_leaves_no_traceback(served):
    start = served.log_size()
    for path in ("/api/advise", "/api/games", "/api/advise/batch", "/api/review"):
        with socket.create_connection(("127.0.0.1", served.port)) as s:
            s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n".encode() + b'{"di')
            time.sleep(0.2)
    time.sleep(0.5)
    assert request(served.port, "GET", "/api/health").status == 200
    log = served.log_text(start)
    for word in ("Traceback", "internal error", "ClientDisconnect", "Exception"):
        assert word not in log, log


# The documents say what happens


def test_the_api_docs_error_table_lists_what_the_tests_check():
    """Every status in docs/api.md's table of errors is one a test asserts; the HTTP layer's are all JSON."""
    docs = (ROOT / "docs" / "api.md").read_text()
    section = docs[docs.index("## Errors") :]
    rows = re.findall(r"^\| \*\*(\d{3})\*\* \|", section, flags=re.M)
    assert {"400", "408", "414", "421", "431", "503"} <= set(rows), rows
    files = ("test_api.py", "test_server_hostile_clients.py", "test_live_quotas.py", "test_damaged_games.py")
    tests = "".join((ROOT / "tests" / name).read_text() for name in files)
    asserted = set(re.findall(r"(?:status(?:_code)? == |assert_json_error\(|, )(\d{3})\b", tests))
    assert set(rows) <= asserted, set(rows) - asserted
    assert "plain text" not in docs
