"""Schema 4: the ``expiry`` table, where each server that removes idle unfinished games says its
``--keep-days`` (and when it last removed some), so that servers sharing a database agree: a game is removed
only once every one of them would remove it.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "expiry",
        sa.Column("server", sa.String(32), primary_key=True),
        sa.Column("keep_days", sa.Float, nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("expiry")
