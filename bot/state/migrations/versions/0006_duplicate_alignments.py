"""An alignment record keeps the digest of its YAML edits (the set of (node, value) edits
of its recipe file) and, when another benchmark PR's open alignment PR already proposes the
same edits, the number of that PR (state ``duplicate``: no second PR is opened).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alignment_prs") as batch:
        batch.add_column(sa.Column("edits_digest", sa.String(64), nullable=True))
        batch.add_column(sa.Column("duplicate_of", sa.Integer(), nullable=True))
        batch.create_index("ix_alignment_prs_edits_digest", ["edits_digest"])


def downgrade() -> None:
    with op.batch_alter_table("alignment_prs") as batch:
        batch.drop_index("ix_alignment_prs_edits_digest")
        batch.drop_column("duplicate_of")
        batch.drop_column("edits_digest")
