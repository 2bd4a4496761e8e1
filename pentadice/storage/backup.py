"""A copy of a SQLite games database that is safe to take while servers play on it (``pentadice backup``).

Copying the file (``cp games.sqlite3 backup``) while a server runs misses the latest games: in WAL mode they sit
in ``games.sqlite3-wal`` until a checkpoint. The copy here is SQLite's online backup
(:meth:`sqlite3.Connection.backup`): the database as one transaction sees it, WAL included, read through a
read-only connection (nothing of the database changes), written to a temporary file beside the target and renamed
into place (:mod:`pentadice.tables.atomic`), in the rollback-journal mode, so that the backup is one file.

The target may be a new name or a previous backup (a pentadice games database not in WAL mode, as this writes
them); anything else, a database in use (WAL) among them, is left alone. PostgreSQL has its own tools:
``pg_dump``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from pentadice.storage.database import StorageError, locate, open_database, said, shown, side_file, sqlite_file
from pentadice.support.interrupts import Held
from pentadice.support.paths import PathError, expand
from pentadice.tables import atomic
from pentadice.tables.atomic import TargetError

SQLITE_HEADER = b"SQLite format 3\x00"
ROLLBACK = 1  # the file format's write and read versions (bytes 18 and 19): 1 rollback journal, 2 WAL


@dataclass(frozen=True)
class Backup:
    """A backup written: where from and to, its size, and the games it holds."""

    source: str
    target: str
    size: int
    games: int
    finished: int


def is_games_backup(path: str | os.PathLike[str]) -> bool:
    """Whether the existing file ``path`` may be replaced by a backup: a SQLite file in rollback-journal mode
    (as backups are written; a database a server uses is in WAL mode) holding pentadice's ``alembic_version``
    and ``games`` tables."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError:
        return False
    if len(head) < 100 or not head.startswith(SQLITE_HEADER) or head[18] != ROLLBACK or head[19] != ROLLBACK:
        return False
    try:
        conn = sqlite3.connect(f"file:{urllib.parse.quote(os.fspath(path))}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return False
    try:
        names = {row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")}
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return {"alembic_version", "games"} <= names


def backup(where: str | os.PathLike[str] | None, out: str | os.PathLike[str]) -> Backup:
    """Copy the games database at ``where`` (see :func:`pentadice.storage.database.locate`) to ``out`` while it
    may be in use; StorageError for a database that is not a SQLite games database (PostgreSQL: ``pg_dump``),
    TargetError for a target that may not be replaced, OSError for one that cannot be written."""
    url = sa.make_url(locate(where))
    if url.get_backend_name() == "postgresql":
        raise StorageError(
            f"{said(shown(url))} is a PostgreSQL database: back it up with "
            "PostgreSQL's own pg_dump (e.g. pg_dump --format=custom --file=games.dump DBNAME); "
            "`pentadice backup` copies SQLite files"
        )
    db = open_database(where, read_only=True)  # a pentadice games database, not newer than this program
    try:
        path = sqlite_file(db.engine.url)[0]
        given = os.fspath(out)
        if not given.strip():
            raise TargetError("the backup's file name is empty: give one, e.g. games-backup.sqlite3")
        try:
            final = Path(os.path.realpath(expand(given)))
        except PathError as e:
            raise TargetError(str(e)) from None
        if _same_file(final, Path(path)):
            raise TargetError(f"{given} is the database itself: give the backup another name")
        side = side_file(final, path)
        if side:
            raise TargetError(
                f"{given} is the database's {side} file, which SQLite reads, resets or removes with the database "
                "(a backup there would be lost, or block its readers): give the backup another name"
            )
        if final.is_file() and final.stat().st_size > 0 and not is_games_backup(final):
            raise TargetError(
                f"{given} exists and is not a backup of a games database (a file `pentadice backup` wrote): "
                "it is left alone; give another name, or remove it first"
            )
        target = atomic.target(given, replaces=is_games_backup)
        assert target.path is not None
        _refuse_journal_beside(target)
        raw = db.engine.raw_connection()  # the read-only connection (mode=ro; immutable on a read-only mount)
        try:
            source = raw.driver_connection
            tmp = atomic.write_temp(target.path, lambda fh: None)  # its name, permissions, stale ones removed
            _remove_stale_journals(target.path)
            try:
                _copy(source, tmp)
                counts = _counts(tmp)  # the copy itself, before any file beside the target can meet it
                _refuse_journal_beside(target)
                _replace(tmp, target)
            except BaseException:
                for left in (tmp, Path(f"{tmp}-journal")):
                    with contextlib.suppress(OSError):
                        os.unlink(left)
                raise
        finally:
            raw.close()
    finally:
        db.close()
    return Backup(path, given, target.path.stat().st_size, *counts)


def _refuse_journal_beside(target: atomic.Target) -> None:
    """TargetError if the target has a rollback journal or a WAL file beside it that holds something (left by a
    write to the previous backup that did not finish): SQLite would apply it to whatever file bears the name,
    the new backup too, and damage it."""
    assert target.path is not None
    for suffix in ("-journal", "-wal"):
        side = Path(f"{target.path}{suffix}")
        try:
            st = side.stat()
        except FileNotFoundError:
            continue
        except OSError:
            pass
        else:
            if stat.S_ISREG(st.st_mode) and st.st_size == 0:
                continue
        raise TargetError(
            f"{target.given} has {side.name} beside it, left by a write to it that did not finish, which SQLite "
            "would apply to the new backup and damage it: it is left alone; give another name, or remove both "
            "files first"
        )


def _remove_stale_journals(final: Path) -> None:
    """Remove the journals of this module's temporaries of ``final`` whose temporary is gone and whose writer is
    dead (``kill -9`` during a copy leaves both; :func:`pentadice.tables.atomic.remove_stale_temps` removes the
    temporary alone)."""
    prefix, suffix = f".{final.name}.", f"{atomic.TEMP_SUFFIX}-journal"
    try:
        names = os.listdir(final.parent)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(suffix)):
            continue
        match = atomic.TEMP_NAME.fullmatch(name[len(prefix) : -len("-journal")])
        if match is None or (final.parent / name[: -len("-journal")]).exists():
            continue
        try:
            os.kill(int(match.group(1)), 0)
            continue  # its writer lives
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(final.parent / name).st_mode):
                os.unlink(final.parent / name)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _copy(source: sqlite3.Connection, tmp: Path) -> None:
    """The online backup of ``source`` into the empty file ``tmp``, in rollback-journal mode, flushed to disk."""
    try:
        dest = sqlite3.connect(tmp)
        try:
            source.backup(dest)
            dest.execute("PRAGMA journal_mode=DELETE")
            dest.commit()
        finally:
            dest.close()
    except sqlite3.Error as e:
        text = str(e).lower()
        if "full" in text:
            raise OSError(28, "the disk is full") from None
        raise StorageError(f"the backup could not be made: {said(e)}") from None
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _replace(tmp: Path, target: atomic.Target) -> None:
    """Rename ``tmp`` into place (signals held meanwhile), unless the target became something else (not a
    regular file, or a file that is not a backup)."""
    try:
        st = os.lstat(target.path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise TargetError(f"{target.given} became {atomic.kind_of(st.st_mode)} meanwhile: it is left alone")
    if st is not None and st.st_size > 0 and not is_games_backup(target.path):
        raise TargetError(
            f"{target.given} became a file that is not a backup meanwhile (written while the copy was made): "
            "it is left alone; give another name, or remove it first"
        )
    with Held(committed=True):
        os.replace(tmp, target.path)


def _counts(path: Path) -> tuple[int, int]:
    """The games and finished games in the backup at ``path``."""
    try:
        conn = sqlite3.connect(f"file:{urllib.parse.quote(os.fspath(path))}?mode=ro", uri=True)
        try:
            games, finished = conn.execute("select count(*), count(finished_at) from games").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as e:
        raise StorageError(f"the backup could not be read back: {said(e)}") from None
    return int(games), int(finished)
