"""Alembic's environment: the migrations run on the connection the program hands over (``config.attributes``),
never on one Alembic opens itself, so that they run in the program's transaction."""

from alembic import context

from pentadice.storage.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
