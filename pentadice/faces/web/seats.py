"""Shared games: a game played together from several devices, each person's seat held by the device that holds
its secret.

A shared game has one secret a person's seat (``secrets.token_urlsafe(24)``: 192 random bits), given once, in
the answer that creates the game, and stored only as its SHA-256 (:func:`digest`). A device proves it holds a
seat with the request header ``X-Pentadice-Seat`` (:data:`HEADER`), never in a URL, a query or a body: the page
keeps the secrets in ``localStorage`` and a seat's link carries its secret in the fragment (``#seat=...``), which
a browser never sends. A secret is compared with every seat's digest in constant time (:func:`holder`).
The rules a move in a shared game follows are :func:`check_mover` and :func:`check_any_seat`."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from pentadice.faces.web.bodies import ApiError

HEADER = "x-pentadice-seat"  # the request header carrying a seat's secret
SECRET_BYTES = 24  # a secret: 192 random bits, 32 characters of URL-safe base64
LONGEST = 128  # a header value longer than this is no secret (not hashed)
NEED_SECRET = "this is a shared game: moves need the seat's secret (X-Pentadice-Seat)"


def digest(secret: str) -> str:
    """The SHA-256 of a secret, in hex: what the database keeps (a secret of 192 random bits needs no slow
    hash: it cannot be guessed from its digest)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_seats(players) -> dict[int, str]:
    """A fresh secret for each person's seat of ``players`` (the engine's): seat index -> secret."""
    return {i: secrets.token_urlsafe(SECRET_BYTES) for i, p in enumerate(players) if not p.computer}


def digests(seats: dict[int, str]) -> dict[int, str]:
    """The seats as the database keeps them: index -> :func:`digest` of the secret."""
    return {i: digest(secret) for i, secret in seats.items()}


def secret_of(headers) -> str | None:
    """The secret a request carries in :data:`HEADER` (None: none, or one too long to be a secret)."""
    value = headers.get(HEADER)
    if value is None:
        return None
    value = value.strip()
    return value if 0 < len(value) <= LONGEST and value.isascii() else None


def holder(seats: dict[int, str] | None, secret: str | None) -> int | None:
    """The seat whose secret is ``secret`` in a game whose seats are ``seats`` (index -> digest), else None
    (an unshared game, no secret or a wrong one). Every seat's digest is compared, each in constant time."""
    if not seats or secret is None:
        return None
    given = digest(secret).encode()
    found = None
    for index, stored in seats.items():
        if hmac.compare_digest(given, stored.encode()):
            found = index
    return found


def check_mover(seats: dict[int, str] | None, you: int | None, game) -> None:
    """403 unless the request may play the person's move of ``game`` (a roll, a box, the auto-commit, an
    undo): any request in an unshared game (``seats`` None); in a shared game, only the device holding the
    seat whose turn it is (``you``: the seat the request's secret holds). Called once the game's state allows
    a person's move (whose turn it is is known)."""
    if seats is None:
        return
    if you is None:
        raise ApiError(403, NEED_SECRET)
    if you != game.current:
        name = game.player.name
        raise ApiError(403, f"it is {name}'s turn: only the device holding {name}'s seat can move")


def check_any_seat(seats: dict[int, str] | None, you: int | None) -> None:
    """403 unless the request may make a computer player's step: any request in an unshared game; in a shared
    game, a device holding any seat of it (not a watcher)."""
    if seats is not None and you is None:
        raise ApiError(403, NEED_SECRET)
