"""Initial service state: deliveries, syncs, alignment PRs, declined fingerprints, sticky
comments, check runs, refusals, audit results, dashboard issues.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deliveries",
        sa.Column("delivery_id", sa.String(80), primary_key=True),
        sa.Column("event", sa.String(40), nullable=False),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("trigger", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("received_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_deliveries_status", "deliveries", ["status"])
    op.create_table(
        "syncs",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("bench_repo", sa.String(200), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("approved_sha", sa.String(64), nullable=True),
        sa.Column("approved_by", sa.String(100), nullable=True),
        sa.Column("is_fork", sa.Boolean(), nullable=False),
        sa.Column("dry_run", sa.Boolean(), nullable=False),
        sa.Column("dirty", sa.Boolean(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("lease_owner", sa.String(100), nullable=True),
        sa.Column("heartbeat_at", sa.Float(), nullable=True),
        sa.Column("enqueued_at", sa.Float(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_result", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("bench_repo", "pr_number", name="uq_syncs_pr"),
    )
    op.create_index("ix_syncs_state", "syncs", ["state"])
    op.create_index("ix_syncs_approved_sha", "syncs", ["approved_sha"])
    op.create_table(
        "alignment_prs",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("bench_repo", sa.String(200), nullable=False),
        sa.Column("bench_pr", sa.Integer(), nullable=False),
        sa.Column("recipe_path", sa.String(400), nullable=False),
        sa.Column("recipes_repo", sa.String(200), nullable=False),
        sa.Column("branch", sa.String(300), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=True),
        sa.Column("html_url", sa.String(400), nullable=True),
        sa.Column("last_pushed_sha", sa.String(64), nullable=True),
        sa.Column("fingerprint", sa.String(64), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("recipes_repo", "branch", name="uq_alignment_branch"),
    )
    op.create_index("ix_alignment_prs_state", "alignment_prs", ["state"])
    op.create_table(
        "closed_fingerprints",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("recipes_repo", sa.String(200), nullable=False),
        sa.Column("recipe_path", sa.String(400), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=True),
        sa.Column("closed_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("recipes_repo", "recipe_path", "fingerprint", name="uq_closed_fp"),
    )
    op.create_table(
        "sticky_comments",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("issue_number", sa.Integer(), nullable=False),
        sa.Column("purpose", sa.String(40), nullable=False),
        sa.Column("comment_id", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("repo", "issue_number", "purpose", name="uq_sticky_comment"),
    )
    op.create_table(
        "check_runs",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("external_id", sa.String(80), nullable=False),
        sa.Column("check_run_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("annotation_batches_sent", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("repo", "external_id", name="uq_check_run_external"),
    )
    op.create_table(
        "refusals",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("login", sa.String(100), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("repo", "pr_number", "login", name="uq_refusal"),
    )
    op.create_table(
        "audit_results",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("bench_repo", sa.String(200), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("sync_id", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("conclusion", sa.String(20), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_audit_results_bench_repo", "audit_results", ["bench_repo"])
    op.create_table(
        "dashboard_issues",
        sa.Column("repo", sa.String(200), primary_key=True),
        sa.Column("issue_number", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    for table in (
        "dashboard_issues",
        "audit_results",
        "refusals",
        "check_runs",
        "sticky_comments",
        "closed_fingerprints",
        "alignment_prs",
        "syncs",
        "deliveries",
    ):
        op.drop_table(table)
