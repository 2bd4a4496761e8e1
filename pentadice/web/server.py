"""Running the application: the listening socket bound first (a port in use or a bad host is known before
any table loads), then uvicorn (httptools, uvloop) on it until Ctrl-C or SIGTERM."""

from __future__ import annotations

import errno
import gc
import ipaddress
import socket
import threading
from collections.abc import Callable

LIMIT_CONCURRENCY = 1024  # connections and requests at once; far above a household's players and the load tests


class BindError(Exception):
    """The server cannot listen where asked; ``usage``: the host given is at fault (not the machine)."""

    def __init__(self, message: str, usage: bool) -> None:
        super().__init__(message)
        self.usage = usage


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` (0: a free port), not yet listening; :class:`BindError`."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        raise BindError(f"cannot listen on {host!r}: {getattr(e, 'strerror', None) or e}", usage=True) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart right after a stop binds again
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
    except OSError as e:
        sock.close()
        reason = e.strerror or str(e)
        usage = e.errno == errno.EADDRNOTAVAIL  # not an address of this machine
        raise BindError(f"cannot listen on {url_of(host, port)}: {reason}", usage) from None
    sock.set_inheritable(True)
    return sock


def url_of(host: str, port: int) -> str:
    """``http://host:port/``, an IPv6 address in brackets."""
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:
        pass
    return f"http://{host}:{port}/"


def is_local(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (a loopback name or address)."""
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def network_address(host: str) -> str:
    """The address other machines reach this one at: the host given, or for a wildcard (0.0.0.0, ::) the
    address of the interface that routes outwards (no packet is sent)."""
    try:
        if not ipaddress.ip_address(host).is_unspecified:
            return host
    except ValueError:
        return host  # a name: the one the user gave
    for family, probe in ((socket.AF_INET, ("10.255.255.255", 1)), (socket.AF_INET6, ("fd00::1", 1))):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect(probe)
                return s.getsockname()[0]
        except OSError:
            continue
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return host


def run(app, sock: socket.socket, on_started: Callable[[], None] | None = None) -> None:
    """Serve ``app`` on ``sock`` until a signal stops it (uvicorn then raises that signal again: Ctrl-C
    becomes KeyboardInterrupt here). ``on_started`` is called from a thread once requests are answered."""
    import uvicorn

    config = uvicorn.Config(
        app,
        loop="uvloop",
        http="httptools",
        lifespan="off",
        access_log=False,
        log_level="warning",
        server_header=False,
        timeout_graceful_shutdown=5,
        limit_concurrency=LIMIT_CONCURRENCY,  # beyond it a connection gets 503 at once, not a slow queue
        timeout_keep_alive=5,  # an idle keep-alive connection is closed after 5 seconds
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
