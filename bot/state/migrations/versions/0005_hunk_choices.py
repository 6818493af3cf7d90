"""A hunk choice is a drop or an add (``/recipe-sync add <flag>`` proposes a candidate the
adoption estimate left out); existing rows are drops.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("dropped_hunks") as batch:
        batch.add_column(sa.Column("choice", sa.String(8), nullable=False, server_default="drop"))


def downgrade() -> None:
    with op.batch_alter_table("dropped_hunks") as batch:
        batch.drop_column("choice")
