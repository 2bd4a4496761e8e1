"""The API's answers: JSON, escaped so that text from clients stays data, and the headers every answer carries
(:class:`pentadice.faces.web.guard.SecurityHeaders` adds them; the HTTP layer's own refusals,
:mod:`pentadice.faces.web.server`, carry them too)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from fastapi.responses import Response

JSON = "application/json"
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]
NO_STORE = (b"cache-control", b"no-store")


def answer(data: object, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    """``data`` as JSON; text from clients (player names) stays data: ``<``, ``>`` and ``&`` are escaped."""
    return Response(escaped(json.dumps(data).encode()), status, headers, media_type=JSON)


def escaped(body: bytes) -> bytes:
    """JSON text with ``<``, ``>`` and ``&`` as ``\\u003c``...: the same JSON, never markup if sniffed."""
    return body.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
