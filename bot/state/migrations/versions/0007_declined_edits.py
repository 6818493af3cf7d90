"""A declined fingerprint keeps the digest of its content's YAML edits: the same edits are
not proposed again by any benchmark PR, whatever the text around them.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("closed_fingerprints") as batch:
        batch.add_column(sa.Column("edits_digest", sa.String(64), nullable=True))
        batch.create_index("ix_closed_fingerprints_edits_digest", ["edits_digest"])
    # what was declined before: the digest an alignment record keeps with that fingerprint
    # (the same content, so the same edits; none where no record says)
    op.execute(
        "UPDATE closed_fingerprints SET edits_digest = ("
        " SELECT MAX(a.edits_digest) FROM alignment_prs a"
        " WHERE a.recipes_repo = closed_fingerprints.recipes_repo"
        " AND a.recipe_path = closed_fingerprints.recipe_path"
        " AND a.fingerprint = closed_fingerprints.fingerprint)"
    )


def downgrade() -> None:
    with op.batch_alter_table("closed_fingerprints") as batch:
        batch.drop_index("ix_closed_fingerprints_edits_digest")
        batch.drop_column("edits_digest")
