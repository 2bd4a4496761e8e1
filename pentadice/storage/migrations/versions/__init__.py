"""One module a schema version, oldest first (Alembic skips this file)."""
