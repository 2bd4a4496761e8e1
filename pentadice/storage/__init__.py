"""Games kept in a database: every game of the server and of ``play`` (SQLite by default, PostgreSQL when given a
URL), its moves one transaction each, and the history and statistics of the finished ones.

:mod:`~pentadice.storage.schema` holds the tables (SQLAlchemy Core), :mod:`~pentadice.storage.database` opens a
database and brings its schema up to date with Alembic (``migrations/``), :mod:`~pentadice.storage.games` keeps
the games, :mod:`~pentadice.storage.history` reads the finished ones back.
"""

KEEP_DAYS = 30.0  # an unfinished game not played for this long is removed; finished games are kept (no import here:
# quick commands read it without loading SQLAlchemy)
