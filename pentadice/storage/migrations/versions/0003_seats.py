"""Schema 3: the seats of a shared game (played together from several devices), kept with the game so that any
server process can tell which device holds which seat: a JSON object, a person's seat index -> the SHA-256 of
that seat's secret (the secrets themselves are never stored). Null: a game played on one screen.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("seats", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("seats")
