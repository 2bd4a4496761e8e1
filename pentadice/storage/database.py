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

Either way the tables are checked against what the code reads and writes (:func:`check_tables`): a database whose
version is right but whose columns are not is refused at once, in one line, not at the first request.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy import event, exc

from pentadice.storage import check_where
from pentadice.storage.schema import READS, SCHEMA_VERSION, metadata
from pentadice.support import paths
from pentadice.support.inputs import unsafe_char

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


class NotGames(Unreachable):
    """What is there is no pentadice games database, or its tables are not those its version has (the file is
    at fault, not the connection)."""


class TooOld(StorageError):
    """A read-only command met a database of an older schema that it cannot read as it is."""


MIGRATED_BY = "pentadice serve --db {where} (or the next game `pentadice play --db {where}` keeps)"


def said(text: object, most: int = 80) -> str:
    """A text from a database, a driver or a path as a message may hold it: on one line, each control or
    bidirectional character written as its escape (``\\n``, ``\\x1b``: a name or a version cannot forge a
    line or drive a terminal, and a path with a newline is not shown as another path), cut short after
    ``most`` characters."""
    line = "".join(c.encode("unicode_escape").decode("ascii") if unsafe_char(c) else c for c in str(text))
    return line if len(line) <= most else line[: most - 3] + "..."


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
    than this program, StorageError if it is older and ``migrate`` is false, NotGames if it holds tables of
    another program (or a version whose tables are not what that version made). A database already at the
    newest version is checked without loading Alembic (a few hundred milliseconds of start-up)."""
    with db.begin() as conn:
        if db.kind == "postgresql":  # servers starting at once on one database: one migrates, the others wait
            conn.execute(sa.select(sa.func.pg_advisory_xact_lock(MIGRATION_LOCK)))
        stored = _stored_version(conn, db.where)
        if stored is None:  # a SQLite file of another program's; in PostgreSQL, tables of ours made by another
            _refuse_foreign(conn, db.where, None if db.kind == "sqlite" else set(metadata.tables))
        if to == "head" and stored == SCHEMA_VERSION:
            check_tables(conn, db.where, _every_column())
            return
        from alembic import command

        config, script = _script()
        newest = script.get_current_head()
        _refuse_newer(script, stored, db.where)
        if stored == (newest if to == "head" else to):
            return
        if not migrate:
            raise StorageError(f"the games database {db.where} has schema version {stored}, not {newest}")
        config.attributes["connection"] = conn
        command.upgrade(config, to)


def check_readable(db: Database) -> None:
    """What a read-only command checks of a database it opened: a pentadice games database (NotGames if not),
    not newer than this program (TooNew), holding the columns the history reads (TooOld if its older schema
    does not: the message names the command that brings it up to date)."""
    with db.begin() as conn:
        stored = _stored_version(conn, db.where)
        if stored is None:
            _refuse_foreign(conn, db.where)
            raise NotGames(f"{db.where} is not a pentadice games database: it holds no tables (an empty database)")
        if stored != SCHEMA_VERSION:
            _refuse_newer(_script()[1], stored, db.where)
        try:  # the newest version must be what it says; an older one need only hold what the history reads
            check_tables(conn, db.where, _every_column() if stored == SCHEMA_VERSION else READS)
        except NotGames:
            if stored == SCHEMA_VERSION:
                raise
            raise TooOld(
                f"the games database {db.where} has the older schema version {stored}, which this command "
                "does not read as it is (it changes nothing): "
                + MIGRATED_BY.format(where=db.where)
                + " brings it up to date"
            ) from None


def _every_column() -> dict[str, set[str]]:
    """Every table of the newest schema and its columns (what the code reads and writes)."""
    return {t.name: {c.name for c in t.columns} for t in metadata.sorted_tables}


def check_tables(conn: sa.Connection, where: str, wanted: dict[str, set[str]]) -> None:
    """NotGames unless the database's tables hold the columns of ``wanted`` (table -> column names): a
    database whose version says one thing and whose tables another is refused at once, not at each request."""
    inspector = sa.inspect(conn)
    present = set(inspector.get_table_names())
    for table, columns in wanted.items():
        if table not in present:
            raise NotGames(f"{where} is not a pentadice games database: no table {table}")
        missing = sorted(columns - {c["name"] for c in inspector.get_columns(table)})
        if missing:
            raise NotGames(
                f"{where} is not a pentadice games database as its schema version says: its table {table} has "
                f"no column {', '.join(missing)} (changed by another program?)"
            )


def _refuse_foreign(conn: sa.Connection, where: str, ours: set[str] | None = None) -> None:
    """NotGames if a database without a schema version holds tables (another program's: nothing is added to
    them); ``ours``: only if it holds tables of these names (a PostgreSQL database may hold other
    applications' tables beside pentadice's)."""
    names = sorted(sa.inspect(conn).get_table_names())
    if ours is not None and not ours & set(names):
        return
    if names:
        shown_names = said(", ".join(names), 60)
        raise NotGames(
            f"{where} is not a pentadice games database: no table "
            f"{'alembic_version' if 'games' in names else 'games'} (it holds {shown_names}); nothing was changed"
        )


def _refuse_newer(script, stored: str | None, where: str) -> None:
    """TooNew if ``stored`` is a schema version this program does not know (NotGames if it is no version
    Alembic writes at all)."""
    if stored is not None and not re.fullmatch(r"[0-9A-Za-z_]{1,32}", stored):
        raise NotGames(
            f"{where} is not a pentadice games database as it should be: its schema version {said(stored, 40)!r} "
            "is none that pentadice writes (nothing was changed)"
        )
    if stored is not None and stored not in {s.revision for s in script.walk_revisions()}:
        raise TooNew(
            f"the games database {where} has schema version {said(stored, 40)!r}, newer than this pentadice "
            f"knows (up to {script.get_current_head()}): it was written by a newer pentadice; upgrade pentadice "
            "to use it (nothing was changed)"
        )


def _stored_version(conn: sa.Connection, where: str = "") -> str | None:
    """The schema version Alembic wrote in the database (None: none yet); NotGames if its table does not hold
    one version."""
    if not sa.inspect(conn).has_table(ALEMBIC_VERSION.name):
        return None
    versions = conn.execute(sa.select(ALEMBIC_VERSION.c.version_num)).scalars().all()
    if len(versions) != 1 or not isinstance(versions[0], str):
        raise NotGames(
            f"{where or 'the games database'} is not a pentadice games database as it should be: its "
            f"alembic_version table holds {len(versions)} versions, not one"
        )
    return versions[0]
