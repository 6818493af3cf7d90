"""Flags ignored per recipe file from the dashboard issue's checkboxes.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ignored_flags",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("bench_repo", sa.String(200), nullable=False),
        sa.Column("recipe_path", sa.String(400), nullable=False),
        sa.Column("flag", sa.String(200), nullable=False),
        sa.Column("ignored_by", sa.String(100), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("bench_repo", "recipe_path", "flag", name="uq_ignored_flag"),
    )


def downgrade() -> None:
    op.drop_table("ignored_flags")
