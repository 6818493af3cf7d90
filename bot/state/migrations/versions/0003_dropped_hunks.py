"""Hunks declined on an alignment PR (``/recipe-sync drop <flag>``).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dropped_hunks",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("bench_repo", sa.String(200), nullable=False),
        sa.Column("bench_pr", sa.Integer(), nullable=False),
        sa.Column("recipe_path", sa.String(400), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("dropped_by", sa.String(100), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.UniqueConstraint(
            "bench_repo", "bench_pr", "recipe_path", "subject", name="uq_dropped_hunk"
        ),
    )


def downgrade() -> None:
    op.drop_table("dropped_hunks")
