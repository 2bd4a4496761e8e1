"""Reading request bodies strictly: a size limit checked before the body is read whole, JSON read by
:func:`pentadice.support.inputs.loads` (no duplicate keys, NaN or deep nesting), fields checked by name and type.
Every refusal is an :class:`ApiError` with its HTTP status and a message in words."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from starlette.requests import ClientDisconnect

from pentadice.support import inputs

KIB = 1024
ADVISE_LIMIT = 64 * KIB  # one situation takes about a hundred bytes
ACTION_LIMIT = 64 * KIB  # a move in a game
LARGE_LIMIT = 1024 * KIB  # a batch of situations, or a game with its save
BODY_SECONDS = 30.0  # a body must arrive whole within this time (a megabyte at 35 kB/s)


class ApiError(Exception):
    """A request refused: its HTTP status and the reason, sent as ``{"error": message, **extra}`` with
    ``headers`` (a 503's ``Retry-After``)."""

    def __init__(self, status: int, message: str, extra: dict | None = None, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra or {}
        self.headers = headers


async def read(request, limit: int) -> bytes:
    """The body of ``request``, at most ``limit`` bytes: 413 as soon as it is known to be larger (its
    Content-Length, or the bytes received so far), before the rest is read; 408 if it has not arrived
    whole within :data:`BODY_SECONDS` (a client trickling a body, or announcing more than it sends, does not
    hold a request open for ever); 400 if the client closed the connection first (answered to no one, not
    logged)."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise too_large(limit)
    body = bytearray()
    try:
        async with asyncio.timeout(BODY_SECONDS):
            async for chunk in request.stream():
                body += chunk
                if len(body) > limit:
                    raise too_large(limit)
    except TimeoutError:
        raise ApiError(408, f"the body did not arrive within {BODY_SECONDS:g} seconds") from None
    except ClientDisconnect:  # the client went away: nobody to answer, nothing to log
        raise ApiError(400, "the client closed the connection before its body arrived whole") from None
    return bytes(body)


def too_large(limit: int) -> ApiError:
    return ApiError(413, f"the body is larger than {limit:,} bytes")


def loads(body: bytes) -> Any:
    """The body as JSON, read strictly; 400 naming what is wrong."""
    if not body.strip():
        raise ApiError(400, "the body is empty: send a JSON object")
    try:
        return inputs.loads(body, "the body")
    except inputs.InputError as e:
        raise ApiError(400, str(e)) from None


def json_object(body: bytes, fields: Iterable[str], example: str, required: Iterable[str] = ()) -> dict:
    """The body as a JSON object of the named ``fields``; 400 if it is not JSON, 422 for anything else."""
    data = loads(body)
    if not isinstance(data, dict):
        raise ApiError(422, f"the body must be a JSON object {example}")
    check_fields(data, fields, required)
    return data


def check_fields(data: dict, fields: Iterable[str], required: Iterable[str] = ()) -> None:
    """422 for a field not in ``fields`` or a ``required`` one missing."""
    fields = list(fields)
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ApiError(422, f"unknown field {short(unknown[0])}; fields: {', '.join(fields)}")
    for name in required:
        if name not in data:
            raise ApiError(422, f"missing field {name!r}")


def whole(value: object, what: str, lo: int, hi: int) -> int:
    """A JSON whole number from ``lo`` to ``hi`` (not true or false; ``3.0`` is 3, as JSON Schema's integers
    are); 422 otherwise."""
    if isinstance(value, float) and value.is_integer() and lo <= value <= hi:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(422, f"{what} must be a whole number, not {short(value)}")
    if not lo <= value <= hi:
        raise ApiError(422, f"{what} must be {lo} to {hi:,}, not {short(value)}")
    return value


def faces(value: object, what: str, most: int) -> list[int]:
    """A list of at most ``most`` dice faces, each 1 to 6; 422 otherwise."""
    if not isinstance(value, list) or len(value) > most:
        raise ApiError(422, f"{what} must be a list of at most {most} faces 1 to 6, not {short(value)}")
    for d in value:
        if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 6:
            raise ApiError(422, f"{what}: a die shows 1 to 6, not {short(d)}")
    return value


def short(value: object) -> str:
    """``repr(value)``, cut to 40 characters (a message never echoes a large input whole)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
