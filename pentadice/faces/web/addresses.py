"""Where ``pentadice serve`` listens and whom it answers: the listening socket bound before anything loads (a
port in use or a bad host is known at once), its address as a URL and on the network, and the host names a
request may carry (:func:`allowed_hosts`: anything else is refused, against DNS rebinding)."""

from __future__ import annotations

import errno
import ipaddress
import re
import socket
from collections.abc import Iterable


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


def url_of(host: str, port: int, scheme: str = "http") -> str:
    """``http://host:port/`` (``scheme``: https with TLS), an IPv6 address in brackets."""
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:
        pass
    return f"{scheme}://{host}:{port}/"


def share_base(host: str, port: int, scheme: str = "http") -> str | None:
    """The URL other devices reach the server at, as a shared game's seat links begin (no trailing slash):
    the network address printed for ``host``; None when the server listens on loopback only (the page then
    uses its own origin)."""
    if is_local(host):
        return None
    return url_of(network_address(host), port, scheme).rstrip("/")


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


_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?", re.IGNORECASE)


def host_name(value: str) -> str:
    """A ``serve --allow-host`` value checked: a host name (``my.box``) or an IP address (``192.168.1.5``,
    ``::1`` or ``[::1]``) alone, any port being served; ValueError naming the form expected (a URL, a port, a
    path or a user is not taken for a name that then matches nothing)."""
    text = value.strip()
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        ipaddress.ip_address(bare)
        return text
    except ValueError:
        pass
    if len(text) <= 253 and _HOST_NAME.fullmatch(text):
        return text
    raise ValueError(
        f"{value!r} is not a host name or address: give the name alone, as a browser's address bar shows it "
        "between http:// and the port (for http://my.box:8000/: --allow-host my.box); any port is served"
    )


def allowed_hosts(host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names a request's ``Host`` may carry when the server listens on ``host``: the localhost names, the
    host given, the network address printed for it, and ``extra`` (``serve --allow-host``), in lower case.
    Loopback addresses and the address a request arrived at are served too (see
    :func:`pentadice.faces.web.api.create_app`)."""
    names = {"localhost", "localhost.localdomain", host, network_address(host), *extra}
    return frozenset(n.strip().lower().rstrip(".").strip("[]") for n in names if n.strip())
