"""The address of a running Dask scheduler (``build --scheduler``), checked before Dask is given it.

Dask, given an address it cannot use, fails in ways an operator cannot read: a ``tls://`` address without Dask's
TLS settings, ``ucx://`` without UCX or ``ws://`` end in a long traceback, ``inproc://`` names a scheduler inside
one process, and at a ``tcp://`` port where another server listens Dask reads that server's reply as the length of
a frame and allocates it (an HTTP server's ``HTTP/1.0`` is 3 EiB). So:

- :func:`parse` takes ``tcp://HOST:PORT`` (or ``HOST:PORT``: Dask's own default), and ``tls://HOST:PORT`` only
  when Dask's TLS settings give a client certificate or a CA file; anything else is :class:`AddressError`;
- :func:`probe` opens a plain socket to a ``tcp://`` address (at a ``tls://`` one, after a TLS handshake with
  Dask's settings) and reads what answers: a Dask scheduler speaks first (its handshake: a short message, sent
  whole at once), where an HTTP server waits for a request and an SSH server greets with text; Dask itself
  waits for a handshake's end without a timeout. :class:`ClusterError` names the address and what was found
  there. Nothing is sent, so a scheduler only notes a connection closed during its handshake.
"""

from __future__ import annotations

import contextlib
import re
import socket
import ssl
import struct
import time
import urllib.parse

from pentadice.support.exits import TableError
from pentadice.support.inputs import clean

HANDSHAKE_LIMIT = 1 << 20  # a scheduler's handshake is a few hundred bytes; any frame above this is not one


# a host name (letters, digits, '-', '_', dots; IDNA names in Unicode letters too), an IPv4 or an IPv6 address
HOST = re.compile(r"[\w.-]+|[0-9a-f:.]+(%[\w.-]+)?", re.IGNORECASE)


class ClusterError(TableError):
    """Dask is missing, or its scheduler cannot be reached or is not one."""


class AddressError(ValueError):
    """A ``--scheduler`` address that is not one a build can use (its scheme, its form)."""


def parse(address: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a scheduler's address; AddressError naming what is wrong (a space or a control
    character in it too: what is checked is what Dask is given, :func:`normal`)."""
    text = address.strip()
    if any(c.isspace() or not c.isprintable() for c in text):
        raise AddressError(f"{clean(address)}: a scheduler's address has no space or control character in it")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    scheme = scheme.lower()
    if scheme == "tls" and not tls_configured():
        raise AddressError(
            f"{address}: a tls:// scheduler needs Dask's TLS settings (distributed.comm.tls.ca-file and "
            "client.cert, e.g. DASK_DISTRIBUTED__COMM__TLS__CA_FILE): set them, or give its tcp:// address"
        )
    if scheme not in ("tcp", "tls"):
        what = {
            "inproc": "an inproc:// address names a scheduler inside one process",
            "ucx": "ucx:// needs UCX, which this build does not use",
            "ws": "ws:// is not a transport this build uses",
            "wss": "wss:// is not a transport this build uses",
        }.get(scheme, f"{scheme}:// is not a Dask scheduler's address")
        raise AddressError(f"{address}: {what}; give the scheduler's tcp://HOST:PORT (8786 by default)")
    try:
        parts = urllib.parse.urlsplit(f"//{rest}")
        port = parts.port
    except ValueError:
        raise AddressError(f"{address}: the port is not a number from 1 to 65535") from None
    if "#" in rest or "?" in rest:  # an empty fragment or query, which urlsplit forgets
        raise AddressError(f"{address}: give the scheduler as {scheme}://HOST:PORT (8786 by default)")
    if not parts.hostname or parts.path or parts.query or parts.fragment or parts.username is not None:
        raise AddressError(f"{address}: give the scheduler as {scheme}://HOST:PORT (8786 by default)")
    if not HOST.fullmatch(parts.hostname) or (parts.hostname.isdigit() and port is None):  # garbage!!, 8786
        what = "a port alone" if parts.hostname.isdigit() else f"{parts.hostname!r} is not a host"
        raise AddressError(f"{address}: {what}; give the scheduler as {scheme}://HOST:PORT (8786 by default)")
    if port == 0:
        raise AddressError(f"{address}: the port is not a number from 1 to 65535")
    if port is None:
        raise AddressError(f"{address}: give the scheduler's port, as {scheme}://{_host(parts.hostname)}:8786")
    return scheme, parts.hostname, port


def _host(host: str) -> str:
    """A host as an address names it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def normal(address: str) -> str:
    """``address`` as Dask is given it: ``SCHEME://HOST:PORT``, the host and port that :func:`probe` checked."""
    scheme, host, port = parse(address)
    return f"{scheme}://{_host(host)}:{port}"


def tls_configured() -> bool:
    """Whether Dask's settings give a client what a tls:// connection needs (a CA file, or a client certificate)."""
    import dask

    tls = dask.config.get("distributed.comm.tls", default={}) or {}
    return bool(tls.get("ca-file") or (tls.get("client") or {}).get("cert"))


def probe(address: str, timeout: float) -> None:
    """Connect to the scheduler at ``address`` and read its first message whole, within ``timeout`` seconds (the
    connection, then the message); ClusterError naming the address and what answers there when it is not a Dask
    scheduler. At a ``tls://`` address, after a TLS handshake made with Dask's own TLS settings (left to Dask
    when they make no client context: Dask says what is missing)."""
    scheme, host, port = parse(address)
    context = None
    if scheme == "tls":
        from distributed.security import Security

        try:
            context = Security().get_connection_args("client").get("ssl_context")
        except Exception:  # Dask's settings are wrong: Dask says so, in one line
            return
        if context is None:
            return
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
        if context is not None:
            try:
                sock = context.wrap_socket(sock, server_hostname=host if context.check_hostname else None)
            except BaseException:
                sock.close()
                raise
    except socket.gaierror as e:
        raise ClusterError(f"cannot reach the Dask scheduler {address}: no host {host} ({e.strerror})") from None
    except TimeoutError:
        raise ClusterError(f"cannot reach the Dask scheduler {address}: no answer in {timeout:g} s") from None
    except ssl.SSLError as e:
        raise ClusterError(
            f"cannot reach the Dask scheduler {address}: the TLS handshake failed ({e.reason or e})"
        ) from None
    except OSError as e:
        reason = "nothing listens there (connection refused)" if isinstance(e, ConnectionRefusedError) else None
        raise ClusterError(f"cannot reach the Dask scheduler {address}: {reason or e.strerror or e}") from None
    deadline = time.monotonic() + timeout  # for the whole of its first message, however slowly it is sent
    with sock:
        try:
            head = _read(sock, 16, deadline)
        except TimeoutError as e:
            if getattr(e, "data", b""):  # bytes that trickle in: not a scheduler's handshake, sent at once
                raise ClusterError(
                    f"{address} is not a Dask scheduler: it sent only {_shown(e.data)} in {timeout:g} s"
                ) from None
            raise ClusterError(
                f"{address} is not a Dask scheduler: it said nothing in {timeout:g} s (a scheduler speaks first; an "
                "HTTP server, such as Dask's dashboard, waits for a request): give the scheduler's port, 8786 by "
                "default"
            ) from None
        except OSError as e:
            raise ClusterError(f"cannot reach the Dask scheduler {address}: {e.strerror or e}") from None
        if len(head) < 16:
            said = f"it said {_shown(head)} and closed the connection" if head else "it closed the connection at once"
            raise ClusterError(f"{address} is not a Dask scheduler: {said}")
        length, frames = struct.unpack("<QQ", head)
        if not (16 <= length <= HANDSHAKE_LIMIT and 1 <= frames <= 64 and 8 * (1 + frames) <= length):
            sock.settimeout(0.2)
            with contextlib.suppress(OSError):  # the rest of its first line, for the message
                head += sock.recv(64)
            raise ClusterError(f"{address} is not a Dask scheduler: it answered {_shown(head)}")
        try:  # the rest of its first message: Dask would wait for it without end
            body = head[8:] + _read(sock, length - 8, deadline)
        except (TimeoutError, OSError):
            body = b""
        sizes = struct.unpack_from(f"<{frames}Q", body, 8) if len(body) >= 8 * (1 + frames) else None
        if len(body) < length or sizes is None or 8 * (1 + frames) + sum(sizes) != length:
            raise ClusterError(
                f"{address} is not a Dask scheduler: its first message stopped short or does not add up (a "
                f"scheduler's handshake comes whole, within {timeout:g} s)"
            )


def _read(sock: socket.socket, n: int, deadline: float) -> bytes:
    """Up to ``n`` bytes, fewer when the other side closes first; TimeoutError at ``deadline`` (``time.monotonic``),
    however the bytes trickle in."""
    data = b""
    while len(data) < n:
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
            got = sock.recv(n - len(data))
        except TimeoutError as e:
            e.data = data  # what came before it
            raise
        if not got:
            break
        data += got
    return data


def _shown(data: bytes) -> str:
    """What a server sent, for a message: its text when it is text (``'SSH-2.0-OpenSSH_9'``), else its bytes in
    hexadecimal; control characters never printed as they are."""
    text = data.decode("ascii", errors="replace")
    if all(c.isprintable() or c in "\r\n" for c in text):
        return repr(text.splitlines()[0] if text.strip() else text)
    return "bytes " + data.hex(" ")
