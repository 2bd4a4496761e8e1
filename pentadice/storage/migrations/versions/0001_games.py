"""Schema 1: the games and the results of the finished ones.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("rules", sa.String(40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("coach", sa.Boolean, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("save", sa.Text, nullable=False),
    )
    op.create_index("ix_games_updated_at", "games", ["updated_at"])
    op.create_index("ix_games_finished_at", "games", ["finished_at"])
    op.create_table(
        "results",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seat", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("computer", sa.Boolean, nullable=False),
        sa.Column("strategy", sa.String(16), nullable=True),
        sa.Column("rules", sa.String(40), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("score", sa.Integer, nullable=False),
        sa.Column("winner", sa.Boolean, nullable=False),
    )
    op.create_index("ix_results_name", "results", ["name"])


def downgrade() -> None:
    op.drop_table("results")
    op.drop_table("games")
