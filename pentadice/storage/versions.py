"""A games database's schema version: brought up to date by Alembic's migrations in one transaction (one server at
a time on PostgreSQL), or checked for a command that only reads; a database newer than this program, of another
program, or whose tables are not what its version says is refused in words, never misread."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Protocol

import sqlalchemy as sa

from pentadice.storage.errors import NotGames, StorageError, TooNew, TooOld, said
from pentadice.storage.schema import READS, SCHEMA_VERSION, metadata

MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATION_LOCK = 0x70656E7461  # PostgreSQL advisory lock taken while the schema is brought up to date
ALEMBIC_VERSION = sa.Table("alembic_version", sa.MetaData(), sa.Column("version_num", sa.String(32)))
MIGRATED_BY = "pentadice serve --db {where} (or the next game `pentadice play --db {where}` keeps)"


class Database(Protocol):
    """What the schema's checks use of an opened database (:class:`pentadice.storage.database.Database`)."""

    kind: str
    where: str

    def begin(self) -> contextlib.AbstractContextManager[sa.Connection]: ...


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
