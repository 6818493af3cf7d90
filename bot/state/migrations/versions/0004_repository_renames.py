"""Repositories GitHub renamed (followed from a 301/307 or a token's repository name).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "repository_renames",
        sa.Column("old_name", sa.String(200), primary_key=True),
        sa.Column("new_name", sa.String(200), nullable=False, index=True),
        sa.Column("renamed_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("repository_renames")
