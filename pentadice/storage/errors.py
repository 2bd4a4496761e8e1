"""A games database's failures, each in words that say what happened (and the HTTP status a request meeting it
gets), and how a text read from a database, a driver or a path is shown in them."""

from __future__ import annotations

from pentadice.support.inputs import unsafe_char


class StorageError(Exception):
    """A database failure in words; ``status`` is the HTTP status a request meeting it gets."""

    status = 503

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Unreachable(StorageError):
    """The database cannot be opened or reached (a server down, a path that cannot be a database)."""


class TooNew(StorageError):
    """The database was written by a newer pentadice: its schema is not one this program knows."""


class Full(StorageError):
    """The disk holding the database is full: the move was not written (the game is as before it)."""

    status = 507


class ReadOnly(StorageError):
    """The database cannot be written (a read-only file, directory, mount or server)."""


class NotGames(Unreachable):
    """What is there is no pentadice games database, or its tables are not those its version has (the file is
    at fault, not the connection)."""


class TooOld(StorageError):
    """A read-only command met a database of an older schema that it cannot read as it is."""


def said(text: object, most: int = 80) -> str:
    """A text from a database, a driver or a path as a message may hold it: on one line, each control or
    bidirectional character written as its escape (``\\n``, ``\\x1b``: a name or a version cannot forge a
    line or drive a terminal, and a path with a newline is not shown as another path), cut short after
    ``most`` characters."""
    line = "".join(c.encode("unicode_escape").decode("ascii") if unsafe_char(c) else c for c in str(text))
    return line if len(line) <= most else line[: most - 3] + "..."
