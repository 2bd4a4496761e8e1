"""Alembic's migrations of the games database (run by :func:`pentadice.storage.database.open_database`)."""
