"""Schema 2: each finished player's review (decisions and total loss: the proficiency measure), and a coach
game's steps to take back, kept with the game so that any server process can undo them.

Games finished under schema 1 keep null decisions and loss: the statistics count their scores and wins, and
leave them out of the mean loss.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("decisions", sa.Integer, nullable=True))
        batch.add_column(sa.Column("loss", sa.Float, nullable=True))
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("undo", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("undo")
    with op.batch_alter_table("results") as batch:
        batch.drop_column("loss")
        batch.drop_column("decisions")
