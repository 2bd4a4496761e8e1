"""Saved games on disk, for the terminal game and ``review``: a save file read whole and checked
(:func:`load_game`), and where a game may be saved (:func:`check_save_path`: never over a file that is not a
saved game, :func:`is_saved_game`). The save format itself is :mod:`pentadice.players.saves`'s.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pentadice.players.engine import MAX_SAVE_BYTES, SAVE_FORMAT, Game, GameError
from pentadice.support.inputs import clean
from pentadice.tables import atomic


def check_save_path(path: Path) -> None:
    """Refuse, before the game starts, a save file that could never be written (a directory, a device, a pipe,
    a file in a directory that does not exist or cannot be written) or that is some other file than a saved
    game, which saving would destroy. (A symbolic link is followed.)"""
    try:
        atomic.target(path, replaces=is_saved_game)
    except atomic.TargetError as e:
        raise GameError(f"cannot save the game: {clean(str(e))}") from None


def is_saved_game(path: Path) -> bool:
    """Whether ``path`` looks like a saved game (so that saving may replace it): its start names the format."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{") and SAVE_FORMAT.encode() in head  # BOM


def load_game(path: Path) -> Game:
    """The game saved in ``path``: a regular file of at most a megabyte (read no further), checked whole by
    :meth:`Game.from_json`; GameError naming what is wrong."""
    shown = clean(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe given by mistake must not hang
    except OSError as e:
        raise GameError(f"cannot read the saved game {shown}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise GameError(f"{shown} is not a regular file: not a saved game")
        if st.st_size > MAX_SAVE_BYTES:
            raise GameError(f"{shown} is larger than {MAX_SAVE_BYTES >> 20} MB: not a saved pentadice game")
        chunks, size = [], 0
        while size <= MAX_SAVE_BYTES:
            chunk = os.read(fd, MAX_SAVE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise GameError(f"cannot read the saved game {shown}: {e.strerror or e}") from None
    finally:
        os.close(fd)
    try:
        return Game.from_json(b"".join(chunks))
    except GameError as e:
        raise GameError(f"{shown}: {e}") from None
