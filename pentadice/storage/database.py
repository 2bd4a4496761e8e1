"""Opening the games database: where it is (``--db``, ``$PENTADICE_DB``, else ``games.sqlite3`` in the user's data
directory), its schema brought up to date by Alembic's migrations (a database newer than this program is refused,
never misread), and every database failure turned into a :class:`StorageError` that says what happened in words.

SQLite runs in WAL mode: a reader never waits for a writer, a process killed mid-move (``kill -9``) loses at most
that move, and the file is never left unreadable (``synchronous=NORMAL``: a power cut may lose the last moves too).
PostgreSQL is reached through psycopg 3 (``pip install 'pentadice[postgres]'``).

Commands that keep games (``serve``, ``play``) may make a database and bring its schema up to date; a command
that only reads (``history``, ``backup``) opens it read-only (:func:`open_database` with ``read_only``): SQLite's
``mode=ro`` (``immutable=1`` on a read-only file system, where not even its side files can be made), a
PostgreSQL transaction that cannot write. Such a command changes no byte of the database, refuses what is not a
pentadice games database, and reads an older schema as it is, or says which command brings it up to date.

Either way the tables are checked against what the code reads and writes (:mod:`pentadice.storage.versions`): a
database whose version is right but whose columns are not is refused at once, in one line, not at the first
request. The failures, in words, are :mod:`pentadice.storage.errors`'.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event, exc

from pentadice.storage import check_where
from pentadice.storage.errors import Full as Full
from pentadice.storage.errors import NotGames as NotGames
from pentadice.storage.errors import ReadOnly as ReadOnly
from pentadice.storage.errors import StorageError as StorageError
from pentadice.storage.errors import TooNew as TooNew
from pentadice.storage.errors import TooOld as TooOld
from pentadice.storage.errors import Unreachable as Unreachable
from pentadice.storage.errors import said as said
from pentadice.storage.versions import check_readable, upgrade
from pentadice.storage.versions import current_version as current_version
from pentadice.storage.versions import head as head
from pentadice.support import paths

ENV_VAR = "PENTADICE_DB"
FILE_NAME = "games.sqlite3"
BUSY_SECONDS = 10.0  # SQLite: how long a writer waits for another one before the request is refused (503)
# Connections a process may hold: as many as the server's worker threads (anyio's 40), so that none waits for one.
POOL = {"pool_size": 8, "max_overflow": 32, "pool_timeout": 30}
CONNECT_SECONDS = 5  # PostgreSQL: how long a connection is tried before the server is called unreachable


def locate(where: str | os.PathLike[str] | None = None) -> str:
    """The database's SQLAlchemy URL: ``where`` (a URL, or a path of a SQLite file), else ``$PENTADICE_DB``,
    else ``games.sqlite3`` in the user's data directory. ``postgres://`` and ``postgresql://`` name psycopg."""
    if where is not None and not isinstance(where, str):
        where = os.fspath(where)
    where = where if where is not None else os.environ.get(ENV_VAR) or os.fspath(paths.user_data() / FILE_NAME)
    try:
        check_where(where)
    except ValueError as e:
        raise Unreachable(f"the games database {said(where)!r} {e}") from None
    if "://" not in where:
        return sa.URL.create("sqlite", database=os.fspath(paths.expand(where).absolute())).render_as_string()
    scheme, rest = where.split("://", 1)
    if scheme in ("postgres", "postgresql"):
        return f"postgresql+psycopg://{rest}"
    return where


def shown(url: str | sa.URL) -> str:
    """The URL as it may be printed: its password hidden; a SQLite file as its path."""
    url = sa.make_url(url)
    if url.get_backend_name() == "sqlite" and url.database:
        return said(url.database, 4096)
    return said(url.render_as_string(hide_password=True), 4096)


class Database:
    """An open games database: its engine, and transactions whose failures come out as :class:`StorageError`."""

    def __init__(self, engine: sa.Engine, read_only: bool = False) -> None:
        self.engine = engine
        self.kind = engine.url.get_backend_name()  # "sqlite" or "postgresql"
        self.where = shown(engine.url)
        self.read_only = read_only  # opened by a command that only reads: nothing can be written through it
        # SQLite takes one writer at a time, and a writer that finds the file locked sleeps in growing steps (up
        # to 100 ms): this process's writers take turns on a lock of their own instead, and meet SQLite's lock
        # only against other processes. PostgreSQL locks rows: its writers need no such turn.
        self._writing = threading.Lock() if self.kind == "sqlite" else contextlib.nullcontext()

    @contextlib.contextmanager
    def begin(self, write: bool = False) -> Iterator[sa.Connection]:
        """A transaction: committed when the block ends, rolled back when it raises (``write``: one that writes,
        taking this process's turn for writers first)."""
        turn = self._writing if write else contextlib.nullcontext()
        with turn, translated(self.where), self.engine.begin() as conn:
            yield conn

    def close(self) -> None:
        self.engine.dispose()


@contextlib.contextmanager
def translated(where: str) -> Iterator[None]:
    """Database exceptions raised in the block, as :class:`StorageError` naming the problem."""
    try:
        yield
    except exc.DBAPIError as e:
        raise error_of(e, where) from None
    except exc.TimeoutError:  # every connection of the pool in use for POOL_SECONDS
        raise StorageError(f"the games database ({where}) is busy: every connection is in use; try again") from None
    except exc.SQLAlchemyError as e:  # no driver's error: said in words, never by the exception's name
        raise StorageError(f"the games database ({where}) could not be used: {said(e)}") from None


def error_of(e: exc.DBAPIError, where: str) -> StorageError:
    """The :class:`StorageError` of a driver's exception."""
    orig = e.orig
    text = said(str(orig).strip().splitlines()[0], 240) if str(orig).strip() else "no reason given"
    code = getattr(orig, "sqlstate", None) or ""
    lowered = text.lower()
    if "no such table" in lowered or "no such column" in lowered or code in ("42P01", "42703"):
        return NotGames(f"the games database {where} does not hold the tables this pentadice uses ({text})")
    if "disk is full" in lowered or "disk full" in lowered or code == "53100" or "no space" in lowered:
        return Full(f"the disk holding the games database ({where}) is full: nothing was written ({text})")
    if "readonly" in lowered or "read-only" in lowered or code == "25006":
        return ReadOnly(f"the games database ({where}) cannot be written: it is read-only ({text})")
    if "file is not a database" in lowered:
        return NotGames(f"{where} is not a games database: {text}")
    if "database is locked" in lowered:
        return StorageError(f"the games database ({where}) is busy with another writer: try again ({text})")
    if e.connection_invalidated or code.startswith("08") or isinstance(e, exc.OperationalError):
        return Unreachable(f"the games database ({where}) cannot be reached: {text}")
    return StorageError(f"the games database ({where}) failed: {text}")


def open_database(
    where: str | os.PathLike[str] | None = None, migrate: bool = True, create: bool = True, read_only: bool = False
) -> Database:
    """The games database at ``where`` (see :func:`locate`), made if missing (``create``; else a SQLite file
    that is not there is an error), its schema brought up to the newest (``migrate``) or only checked.
    ``read_only``: opened so that nothing can be written, made or migrated (what ``history`` reads; an older
    schema read as it is where the tables hold what it reads, else refused naming the command that brings it
    up to date). StorageError, in words, when it cannot be opened, reached or written, when it is no pentadice
    games database, or when it is newer than this program."""
    url = sa.make_url(locate(where))
    backend = url.get_backend_name()
    if backend == "sqlite":
        path, url_read_only = sqlite_file(url)
        read_only = read_only or url_read_only
        if (read_only or not create) and not Path(path).exists():
            raise Unreachable(
                f"there is no games database at {said(path, 4096)}: the first game a server or `play` keeps makes it"
            )
        engine = _sqlite_engine(url, read_only)
    elif backend == "postgresql":
        if url.drivername == "postgresql+psycopg":
            try:
                import psycopg  # noqa: F401
            except ImportError:
                raise Unreachable(
                    "PostgreSQL needs psycopg: pip install 'pentadice[postgres]' (or psycopg[binary])"
                ) from None
        connect_args: dict = {"connect_timeout": CONNECT_SECONDS}
        if read_only:  # every transaction of the session read-only: the server refuses any write
            connect_args["options"] = _read_only_options(url)
        engine = sa.create_engine(url, pool_pre_ping=True, connect_args=connect_args, **POOL)
    else:
        raise Unreachable(f"unsupported database {said(shown(url))}: a SQLite file's path, or a postgresql:// URL")
    db = Database(engine, read_only)
    try:
        if read_only:
            try:
                check_readable(db)
            except ReadOnly:
                if backend == "sqlite":
                    _refuse_hot_journal(path)
                raise
        else:
            upgrade(db, migrate)
    except BaseException:
        engine.dispose()
        raise
    return db


def _refuse_hot_journal(path: str) -> None:
    """Unreachable, saying why, where a read-only read of ``path`` failed for want of writing: its journal of a
    write that did not finish is beside it, which SQLite must roll back before anyone reads the file."""
    journal = Path(path + "-journal")
    with contextlib.suppress(OSError):
        if journal.stat().st_size > 0:
            raise Unreachable(
                f"the games database {said(path, 4096)} has {said(journal.name, 4096)} beside it, left by a write "
                "that did not finish, which SQLite rolls back before the file can be read, and this command only "
                "reads: open it once with a command that writes (pentadice serve or play, or sqlite3), then again"
            )


READ_ONLY_OPTION = "-c default_transaction_read_only=on"


def _read_only_options(url: sa.URL) -> str:
    """The PostgreSQL session options of a read-only command: the URL's own (``?options=-c search_path=...``, a
    schema of its own kept) with the read-only setting after them, which the server takes over any earlier one
    (an ``?options=`` that turns it off among them). Two spaces before it: an option ending in a backslash
    escapes one space (the server's splitting), never the setting."""
    given = url.query.get("options", ())
    given = (given,) if isinstance(given, str) else tuple(given)
    return "  ".join([*(g for g in given if g.strip()), READ_ONLY_OPTION])


SQLITE_QUERY = {"mode", "uri", "immutable"}  # what a sqlite:// URL's query may say


def sqlite_file(url: sa.URL) -> tuple[str, bool]:
    """The path of a SQLite URL's file, and whether the URL asks for it read-only (``?mode=ro``, as a path or
    as a ``file:`` URI with ``uri=true``); Unreachable for what names no file or cannot be honoured."""
    extra = set(url.query) - SQLITE_QUERY
    if extra:
        raise Unreachable(
            f"the SQLite URL {said(shown(url))} has options this program does not take "
            f"({said(', '.join(sorted(extra)))}): give the file's path (and ?mode=ro to open it read-only)"
        )
    mode = url.query.get("mode")
    if mode not in (None, "ro", "rw", "rwc"):
        raise Unreachable(f"the SQLite URL {said(shown(url))} asks for mode={said(mode)}: a file's path, or mode=ro")
    path = url.database or ""
    if path.startswith("file:"):
        path = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
    if path in ("", ":memory:"):
        raise Unreachable("an in-memory SQLite database keeps nothing: give a SQLite file's path")
    return os.fspath(Path(path).absolute()), mode == "ro" or url.query.get("immutable") == "1"


SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's files beside a database, named after it


def side_file(final: Path, database: str) -> str | None:
    """The suffix (``-wal``, ``-shm``, ``-journal``) if ``final`` (a resolved path) is one of the side files of
    the database at ``database``: named after the path as given or after the file a link leads to, whether or
    not the side file exists now. A file written there would be lost (SQLite resets or removes it), and one
    named ``-journal`` would keep read-only readers out (SQLite would roll it back first)."""
    names = {os.path.abspath(database), os.path.realpath(database)}
    for suffix in SIDE_FILES:
        for name in names:
            side = Path(name + suffix)
            if final == side or final == Path(os.path.realpath(side)) or _same_file(final, side):
                return suffix
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _read_only_fs(path: str) -> bool:
    """Whether ``path``'s file system is mounted read-only, or its folder cannot be written (SQLite could not
    make the side files a read of a WAL database needs: it is then read as immutable)."""
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return False
    return not os.access(Path(path).parent, os.W_OK | os.X_OK)


def _readable_ro(path: str) -> bool:
    """Whether SQLite reads ``path`` with ``mode=ro`` alone (on a read-only file system it can, where the
    database is in rollback mode, or in WAL mode with its ``-shm`` file there)."""
    try:
        conn = sqlite3.connect("file:" + urllib.parse.quote(path) + "?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        conn.execute("select count(*) from sqlite_master").fetchone()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return True


def _text(data: bytes) -> str:
    """A stored text as ``str``: a byte that is not UTF-8 read as U+FFFD (one damaged name does not make every
    query that meets it fail; the damage shows where the name is shown)."""
    return data.decode("utf-8", "replace")


def _ours_or_empty(cursor: sqlite3.Cursor) -> bool:
    """Whether the SQLite file of ``cursor`` is empty or a games database (its journal may then be made WAL;
    another program's file is left as it is, and refused by :func:`upgrade`)."""
    try:
        names = {row[0] for row in cursor.execute("select name from sqlite_master where type = 'table'")}
    except sqlite3.DatabaseError:  # not a database at all: said by the first query
        return False
    return not names or "alembic_version" in names


def _sqlite_engine(url: sa.URL, read_only: bool = False) -> sa.Engine:
    """A SQLite file's engine: its directory made, WAL, foreign keys, and transactions begun by SQLAlchemy (the
    driver's own begins after DDL, which would leave a migration half done). ``read_only`` (or ``?mode=ro``
    in the URL): opened with ``mode=ro`` (with ``immutable=1`` on a read-only file system where ``mode=ro``
    alone cannot read it, and refused there if its WAL file holds changes), nothing made or changed, the
    journal left as it is."""
    path, url_read_only = sqlite_file(url)
    read_only = read_only or url_read_only
    if not read_only:
        where = Path(path)
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise Unreachable(f"cannot make the folder of the games database {where}: {e.strerror}") from None
        if where.exists() and not where.is_file():
            raise Unreachable(f"the games database {where} is not a regular file")
        if not os.access(where.parent, os.W_OK):  # SQLite would say "unable to open database file"
            raise ReadOnly(f"the games database {where} cannot be written: its folder is read-only")
    elif Path(path).exists() and not Path(path).is_file():
        raise Unreachable(f"the games database {path} is not a regular file")
    immutable = read_only and _read_only_fs(path) and not _readable_ro(path)
    wal = Path(path + "-wal")
    if immutable and wal.is_file() and wal.stat().st_size > 0:  # immutable=1 would read the file without them
        raise Unreachable(
            f"the games database {path} is on a read-only file system and its latest changes are in its WAL file "
            f"({Path(path).name}-wal), which SQLite cannot read there without its -shm file: copy the database "
            "with its side files to a writable folder, or let its server stop (which checkpoints it) first"
        )
    target = path
    if read_only:
        target = "file:" + urllib.parse.quote(path) + "?mode=ro" + ("&immutable=1" if immutable else "")

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(target, uri=read_only, timeout=BUSY_SECONDS, check_same_thread=False)
        conn.text_factory = _text
        return conn

    plain = sa.URL.create("sqlite", database=path)  # the file, for messages; the connection is connect()'s
    engine = sa.create_engine(plain, creator=connect, poolclass=sa.pool.QueuePool, **POOL)

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None  # the driver begins nothing itself: see _begin
        cursor = dbapi_connection.cursor()
        try:
            if not read_only and _ours_or_empty(cursor):  # never another program's file's journal, nor read-only
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:
        conn.exec_driver_sql("BEGIN")

    return engine
