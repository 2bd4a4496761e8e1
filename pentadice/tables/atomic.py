"""Writing files so that a reader never sees half of one, and nothing but a regular file is ever replaced.

A target is checked first (:func:`target`), before any work that could be lost:

- a regular file, or a new name in a writable directory: written under a temporary name beside it and renamed
  into place; an existing file keeps its permissions (and owner, where we may set it);
- a symbolic link: followed; the file it points to is written that way, in its own directory;
- ``-`` or a pipe (FIFO): streamed into, as there is nothing to rename over;
- anything else (a directory, a device, a socket): refused with :class:`TargetError`.

Temporary files are named ``.NAME.PID-RANDOM.tmp``, and the writer holds a lock on its own while it writes, so
that the next writer of the same file can tell a temporary whose writer died (``kill -9``, a power cut) from
one being written, and removes it. Signals that end a command (SIGINT, SIGTERM) are held back while a file is
renamed into place (:class:`pentadice.support.interrupts.Held`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from pentadice.support.interrupts import CommittedInterrupt, Held
from pentadice.support.paths import PathError, expand

__all__ = ["CommittedInterrupt", "Target", "TargetError", "remove_stale_temps", "target", "write_file", "write_temp"]

STDOUT = "-"
TEMP_SUFFIX = ".tmp"
TEMP_NAME = re.compile(r"([0-9]+)-[a-z0-9_]{8}\.tmp")  # after ".NAME.": the PID, then mkstemp's 8 characters


class TargetError(OSError):
    """A path that cannot be written: not a regular file, a missing or unwritable directory."""


@dataclasses.dataclass(frozen=True)
class Target:
    """Where a write goes: ``path`` (symbolic links resolved) and how: ``"replace"`` (atomic, a regular file
    or a new one), or ``"stream"`` (standard output or a pipe)."""

    path: Path | None  # None: standard output
    how: str
    given: str  # the path as the user gave it, for messages

    @property
    def streamed(self) -> bool:
        return self.how == "stream"


def target(
    path: str | os.PathLike[str], stream_ok: bool = False, replaces: Callable[[Path], bool] | None = None
) -> Target:
    """Check where ``path`` can be written, before any work; :class:`TargetError` naming the problem.

    ``stream_ok``: whether the format can be streamed, so that ``-`` and pipes are accepted. ``replaces``: for
    an existing regular file, whether it is a file of the kind written (a saved game, a file of games), which
    may be replaced; any other file is left alone and refused (a typo must not overwrite a table or a text).
    """
    given = os.fspath(path)
    if given == STDOUT:
        if not stream_ok:
            raise TargetError("this file cannot be written to standard output ('-'): give a file name")
        return Target(None, "stream", "standard output")
    try:
        final = Path(os.path.realpath(expand(given)))
    except PathError as e:
        raise TargetError(str(e)) from None
    try:
        st = os.stat(final)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise TargetError(f"cannot write {given}: {e.strerror or e}") from None
    if st is not None:
        if stat.S_ISFIFO(st.st_mode) and stream_ok:
            return Target(final, "stream", given)
        if not stat.S_ISREG(st.st_mode):
            kind = kind_of(st.st_mode)
            raise TargetError(f"{given} is {kind}, not a regular file: it is left alone; give a file name")
        if replaces is not None and st.st_size > 0 and not replaces(final):
            raise TargetError(f"{given} exists and is not a file this would replace: it is left alone; remove it first")
    parent = final.parent
    if not parent.is_dir():
        raise TargetError(f"cannot write {given}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TargetError(f"cannot write {given}: the directory {parent} is not writable")
    return Target(final, "replace", given)


def _still_replaceable(where: Target) -> None:
    """Just before the rename: the target is still a regular file or missing (it may have been swapped for
    something else while the work went on)."""
    try:
        st = os.lstat(where.path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise TargetError(f"{where.given} became {kind_of(st.st_mode)} meanwhile: it is left alone")


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words: ``a directory``, ``a device``, ``a pipe``, ``a socket``, or ``not
    a regular file``."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISFIFO, "a pipe"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def write_temp(final: Path, write: Callable[[BinaryIO], object]) -> Path:
    """Write a file under a temporary name beside ``final`` (flushed to disk; the permissions and owner of the
    file it will replace, or the umask's for a new one); the caller renames it into place. Nothing is left
    behind if ``write`` fails; stale temporaries of ``final`` left by dead writers are removed first."""
    remove_stale_temps(final)
    fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.{os.getpid()}-", suffix=TEMP_SUFFIX)
    try:
        fh = os.fdopen(fd, "wb")  # owns the descriptor from here: closed whatever happens
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    try:
        with fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # held until closed: marks the temporary as being written
            _copy_permissions(fh.fileno(), final)
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


def _copy_permissions(fd: int, final: Path) -> None:
    try:
        old = os.stat(final)
    except OSError:
        os.fchmod(fd, 0o666 & ~_umask())
        return
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    if hasattr(os, "fchown") and (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(OSError):  # only root may give a file away; the mode is kept all the same
            os.fchown(fd, old.st_uid, old.st_gid)


def remove_stale_temps(final: Path) -> list[Path]:
    """Remove our temporaries of ``final`` whose writer is gone (no lock held on them); returns them."""
    removed = []
    try:
        names = os.listdir(final.parent)
    except OSError:
        return removed
    prefix = f".{final.name}."
    for name in names:
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        match = TEMP_NAME.fullmatch(name[len(prefix) :])
        if match is None:  # not a name we give: someone else's file
            continue
        pid = match.group(1)
        path = final.parent / name
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its writer is still at work
            if _alive(int(pid)):
                continue  # its writer lives (between creating and locking it, or before renaming it)
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(path)
        finally:
            os.close(fd)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def write_file(path: str | os.PathLike[str] | Target, write: Callable[[BinaryIO], object]) -> Target:
    """Write ``path`` whole, or not at all (the old file, if any, stays as it was); see :func:`target`.
    A :class:`Target` already checked may be given instead of a path. Returns the target written."""
    where = path if isinstance(path, Target) else target(path, stream_ok=False)
    if where.streamed:
        if where.path is None:
            out = sys.stdout.buffer
            write(out)
            out.flush()
        else:
            with open(where.path, "wb") as fh:
                write(fh)
        return where
    assert where.path is not None
    tmp = write_temp(where.path, write)
    try:
        _still_replaceable(where)
        with Held(committed=True):
            os.replace(tmp, where.path)
    except CommittedInterrupt:
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return where


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
