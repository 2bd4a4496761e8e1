"""The games database's schema: the tables the code reads and writes (``storage/schema.py``) are exactly what the
migrations build, on SQLite and on PostgreSQL, and the newest version the code checks is Alembic's head."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from pentadice.storage import database
from pentadice.storage.schema import SCHEMA_VERSION, metadata


def test_the_schema_version_the_code_checks_is_the_newest_migration():
    assert database.head() == SCHEMA_VERSION


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_migrations_build_the_tables_the_code_uses(backend, tmp_path, request):
    where = tmp_path / "games.sqlite3" if backend == "sqlite" else request.getfixturevalue("postgres_url")
    db = database.open_database(where)
    try:
        assert database.current_version(db) == SCHEMA_VERSION
        with db.engine.connect() as conn:
            diffs = compare_metadata(MigrationContext.configure(conn), metadata)
        assert diffs == []
    finally:
        db.close()
