"""Opening the games database: where it is (``--db``, ``$PENTADICE_DB``, else ``games.sqlite3`` in the user's data
directory), its schema brought up to date by Alembic's migrations (a database newer than this program is refused,
never misread), and every database failure turned into a :class:`StorageError` that says what happened in words.

SQLite runs in WAL mode: a reader never waits for a writer, a process killed mid-move (``kill -9``) loses at most
that move, and the file is never left unreadable (``synchronous=NORMAL``: a power cut may lose the last moves too).
PostgreSQL is reached through psycopg 3 (``pip install 'pentadice[postgres]'``).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event, exc

from pentadice.storage.schema import SCHEMA_VERSION
from pentadice.support import paths

ENV_VAR = "PENTADICE_DB"
FILE_NAME = "games.sqlite3"
MIGRATIONS = Path(__file__).parent / "migrations"
BUSY_SECONDS = 10.0  # SQLite: how long a writer waits for another one before the request is refused (503)
MIGRATION_LOCK = 0x70656E7461  # PostgreSQL advisory lock taken while the schema is brought up to date
# Connections a process may hold: as many as the server's worker threads (anyio's 40), so that none waits for one.
POOL = {"pool_size": 8, "max_overflow": 32, "pool_timeout": 30}
CONNECT_SECONDS = 5  # PostgreSQL: how long a connection is tried before the server is called unreachable


ALEMBIC_VERSION = sa.Table("alembic_version", sa.MetaData(), sa.Column("version_num", sa.String(32)))


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


def locate(where: str | os.PathLike[str] | None = None) -> str:
    """The database's SQLAlchemy URL: ``where`` (a URL, or a path of a SQLite file), else ``$PENTADICE_DB``,
    else ``games.sqlite3`` in the user's data directory. ``postgres://`` and ``postgresql://`` name psycopg."""
    where = os.fspath(where) if where else os.environ.get(ENV_VAR) or os.fspath(paths.user_data() / FILE_NAME)
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
        return url.database
    return url.render_as_string(hide_password=True)


class Database:
    """An open games database: its engine, and transactions whose failures come out as :class:`StorageError`."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.kind = engine.url.get_backend_name()  # "sqlite" or "postgresql"
        self.where = shown(engine.url)
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
    except exc.SQLAlchemyError as e:
        raise StorageError(f"the games database ({where}) failed: {type(e).__name__}: {e}") from None


def error_of(e: exc.DBAPIError, where: str) -> StorageError:
    """The :class:`StorageError` of a driver's exception."""
    orig = e.orig
    text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    code = getattr(orig, "sqlstate", None) or ""
    lowered = text.lower()
    if "disk is full" in lowered or "disk full" in lowered or code == "53100" or "no space" in lowered:
        return Full(f"the disk holding the games database ({where}) is full: nothing was written ({text})")
    if "readonly" in lowered or "read-only" in lowered or code == "25006":
        return ReadOnly(f"the games database ({where}) cannot be written: it is read-only ({text})")
    if "file is not a database" in lowered:
        return Unreachable(f"{where} is not a games database: {text}")
    if "database is locked" in lowered:
        return StorageError(f"the games database ({where}) is busy with another writer: try again ({text})")
    if e.connection_invalidated or code.startswith("08") or isinstance(e, exc.OperationalError):
        return Unreachable(f"the games database ({where}) cannot be reached: {text}")
    return StorageError(f"the games database ({where}) failed: {text}")


def open_database(where: str | os.PathLike[str] | None = None, migrate: bool = True, create: bool = True) -> Database:
    """The games database at ``where`` (see :func:`locate`), made if missing (``create``; else a SQLite file
    that is not there is an error), its schema brought up to the newest (``migrate``) or only checked.
    StorageError, in words, when it cannot be opened, reached or written, or when it is newer than this
    program."""
    url = sa.make_url(locate(where))
    backend = url.get_backend_name()
    if backend == "sqlite" and not create and url.database and not Path(url.database).exists():
        raise Unreachable(
            f"there is no games database at {url.database}: the first game a server or `play` keeps makes it"
        )
    if backend == "sqlite":
        engine = _sqlite_engine(url)
    elif backend == "postgresql":
        if url.drivername == "postgresql+psycopg":
            try:
                import psycopg  # noqa: F401
            except ImportError:
                raise Unreachable(
                    "PostgreSQL needs psycopg: pip install 'pentadice[postgres]' (or psycopg[binary])"
                ) from None
        engine = sa.create_engine(url, pool_pre_ping=True, connect_args={"connect_timeout": CONNECT_SECONDS}, **POOL)
    else:
        raise Unreachable(f"unsupported database {shown(url)}: a SQLite file's path, or a postgresql:// URL")
    db = Database(engine)
    try:
        upgrade(db, migrate)
    except BaseException:
        engine.dispose()
        raise
    return db


def _sqlite_engine(url: sa.URL) -> sa.Engine:
    """A SQLite file's engine: its directory made, WAL, foreign keys, and transactions begun by SQLAlchemy (the
    driver's own begins after DDL, which would leave a migration half done)."""
    if url.database and url.database != ":memory:" and not url.query.get("mode"):
        path = Path(url.database)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise Unreachable(f"cannot make the folder of the games database {path}: {e.strerror}") from None
        if path.exists() and not path.is_file():
            raise Unreachable(f"the games database {path} is not a regular file")
        if not os.access(path.parent, os.W_OK):  # SQLite would say "unable to open database file"
            raise ReadOnly(f"the games database {path} cannot be written: its folder is read-only")
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_SECONDS, "check_same_thread": False}, **POOL)

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None  # the driver begins nothing itself: see _begin
        cursor = dbapi_connection.cursor()
        try:
            if not url.query.get("mode"):  # a read-only URI (mode=ro) cannot change the journal
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:
        conn.exec_driver_sql("BEGIN")

    return engine


def _script():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", os.fspath(MIGRATIONS))
    return config, ScriptDirectory.from_config(config)


def head() -> str:
    """The newest schema version this program knows."""
    return _script()[1].get_current_head()


def current_version(db: Database) -> str | None:
    """The database's schema version (None: an empty database)."""
    with db.begin() as conn:
        return _stored_version(conn)


def upgrade(db: Database, migrate: bool = True, to: str = "head") -> None:
    """Bring the schema to ``to`` (the newest: ``head``) in one transaction; TooNew if the database is newer
    than this program, StorageError if it is older and ``migrate`` is false. A database already at the newest
    version is checked without loading Alembic (a few hundred milliseconds of start-up)."""
    with db.begin() as conn:
        if db.kind == "postgresql":  # servers starting at once on one database: one migrates, the others wait
            conn.execute(sa.select(sa.func.pg_advisory_xact_lock(MIGRATION_LOCK)))
        stored = _stored_version(conn)
        if to == "head" and stored == SCHEMA_VERSION:
            return
        from alembic import command

        config, script = _script()
        newest = script.get_current_head()
        if stored is not None and stored not in {s.revision for s in script.walk_revisions()}:
            raise TooNew(
                f"the games database {db.where} has schema version {stored}, newer than this pentadice knows "
                f"(up to {newest}): it was written by a newer pentadice; upgrade pentadice to use it (nothing "
                "was changed)"
            )
        if stored == (newest if to == "head" else to):
            return
        if not migrate:
            raise StorageError(f"the games database {db.where} has schema version {stored}, not {newest}")
        config.attributes["connection"] = conn
        command.upgrade(config, to)


def _stored_version(conn: sa.Connection) -> str | None:
    """The schema version Alembic wrote in the database (None: none yet)."""
    if not sa.inspect(conn).has_table(ALEMBIC_VERSION.name):
        return None
    return conn.execute(sa.select(ALEMBIC_VERSION.c.version_num)).scalar_one_or_none()
