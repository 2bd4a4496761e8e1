"""The tables of the games database, as the newest migration leaves them (SQLAlchemy Core: the code reads and
writes through these, never through SQL text).

- ``games``: one row a game, its whole save (the engine's JSON, the random generator's state included) and the
  number of moves made (``version``): a move is written only over the version it was played on, so that of two
  requests for the same move one wins and the other plays on the game as it now is; a shared game's ``seats``
  (each person's seat -> the SHA-256 of its secret, JSON; null: a game of one screen).
- ``results``: one row a player of a finished game, what the history and the statistics read: the final score,
  whether they won, and the review's decisions and total loss (the proficiency measure).
- ``expiry``: one row a server that removes idle unfinished games: its ``--keep-days`` and when it last removed
  some; servers sharing a database remove a game only once all of them would (schema 4).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

SCHEMA_VERSION = "0004"  # the newest migration's revision (tests/test_storage_schema.py: Alembic's head)

ID_LENGTH = 32  # a game id: 22 characters of URL-safe base64 (128 random bits), room to spare

games = sa.Table(
    "games",
    metadata,
    sa.Column("id", sa.String(ID_LENGTH), primary_key=True),
    sa.Column("rules", sa.String(40), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True, index=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("coach", sa.Boolean, nullable=False),
    sa.Column("source", sa.String(16), nullable=False),  # "web" or "terminal"
    sa.Column("save", sa.Text, nullable=False),
    sa.Column("undo", sa.Text, nullable=True),  # a coach game's steps to take back (schema 2)
    sa.Column("seats", sa.Text, nullable=True),  # a shared game's seats: index -> SHA-256 of its secret (schema 3)
)

results = sa.Table(
    "results",
    metadata,
    sa.Column("game_id", sa.String(ID_LENGTH), sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(64), nullable=False, index=True),
    sa.Column("computer", sa.Boolean, nullable=False),
    sa.Column("strategy", sa.String(16), nullable=True),
    sa.Column("rules", sa.String(40), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("score", sa.Integer, nullable=False),
    sa.Column("winner", sa.Boolean, nullable=False),
    sa.Column("decisions", sa.Integer, nullable=True),  # the review's (schema 2; null in games finished before)
    sa.Column("loss", sa.Float, nullable=True),  # total loss of those decisions, points (schema 2)
)

expiry = sa.Table(
    "expiry",
    metadata,
    sa.Column("server", sa.String(ID_LENGTH), primary_key=True),  # a server process's random name
    sa.Column("keep_days", sa.Float, nullable=False),
    sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
)

# What the history (a read-only command) reads: an older schema holding these is read as it is, never migrated.
READS = {
    "games": {"id", "rules", "source", "created_at", "finished_at"},
    "results": {c.name for c in results.columns},
}
