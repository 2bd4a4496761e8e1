"""Games kept in a database: every game of the server and of ``play`` (SQLite by default, PostgreSQL when given a
URL), its moves one transaction each, and the history and statistics of the finished ones.

:mod:`~pentadice.storage.schema` holds the tables (SQLAlchemy Core), :mod:`~pentadice.storage.database` opens a
database and brings its schema up to date with Alembic (``migrations/``), :mod:`~pentadice.storage.games` keeps
the games, :mod:`~pentadice.storage.history` reads the finished ones back, :mod:`~pentadice.storage.backup`
copies a database while it is in use.
"""

from __future__ import annotations

KEEP_DAYS = 30.0  # an unfinished game not played for this long is removed; finished games are kept (no import here:
# quick commands read it without loading SQLAlchemy)


def check_where(where: str) -> None:
    """ValueError, its text completing "the games database WHERE ...", if ``where`` (``--db``, or
    ``$PENTADICE_DB``) cannot name a database that keeps games: an empty text (which would silently mean the
    default database), or an in-memory SQLite database (which keeps nothing once the command ends). The one
    check of ``serve``, ``play``, ``history`` and ``backup`` (:data:`pentadice.faces.cli.options.DB_OPTION`)
    and of :func:`pentadice.storage.database.locate`."""
    if not where.strip():
        raise ValueError(
            "is empty: give a SQLite file's path or a postgresql:// URL (or leave --db out for $PENTADICE_DB, "
            "else the default database)"
        )
    if "://" not in where:
        return
    scheme, rest = where.split("://", 1)
    if scheme.split("+", 1)[0].lower() != "sqlite":
        return
    path, _, query = rest.partition("?")
    path = path[1:] if path.startswith("/") else path
    if path in ("", ":memory:") or path.startswith("file::memory:") or "mode=memory" in query:
        raise ValueError(
            "is an in-memory database, which keeps nothing once the command ends: give a SQLite file's path"
        )
