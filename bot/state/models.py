"""Tables of the service state (SQLAlchemy 2). Timestamps are UNIX seconds (float), so SQLite
and PostgreSQL compare them the same way. Changes here need an alembic migration in
``bot/state/migrations/versions`` (a test compares the migrated schema with these models)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Float, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Delivery(Base):
    """One webhook delivery, claimed by its ``X-GitHub-Delivery`` id before anything runs."""

    __tablename__ = "deliveries"
    delivery_id: Mapped[str] = mapped_column(String(80), primary_key=True)
    event: Mapped[str] = mapped_column(String(40))
    action: Mapped[str] = mapped_column(String(40))
    repo: Mapped[str] = mapped_column(String(200))
    trigger: Mapped[str] = mapped_column(Text)
    # received (recorded) | queued (enqueued by the ack) | processing | enqueued (a retry is
    # scheduled) | done | failed
    status: Mapped[str] = mapped_column(String(16), index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    received_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)


class Sync(Base):
    """The sync state machine of one benchmark PR (one row per PR: per-PR serialisation).

    idle → pending (enqueued) → running (lease + heartbeat) → done | failed; a request while
    running sets ``dirty`` and the run re-queues itself when it finishes. ``generation``
    counts logical runs: a crash-resumed run keeps it, a new request increments it.
    """

    __tablename__ = "syncs"
    __table_args__ = (UniqueConstraint("bench_repo", "pr_number", name="uq_syncs_pr"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bench_repo: Mapped[str] = mapped_column(String(200))
    pr_number: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), index=True)
    generation: Mapped[int] = mapped_column(Integer, default=0)
    approved_sha: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    approved_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    is_fork: Mapped[bool] = mapped_column(Boolean, default=False)
    dry_run: Mapped[bool] = mapped_column(Boolean, default=False)
    dirty: Mapped[bool] = mapped_column(Boolean, default=False)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    heartbeat_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    enqueued_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    last_result: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)


class AlignmentPr(Base):
    """An alignment PR (or its branch) in the recipes repo, per (benchmark PR, recipe)."""

    __tablename__ = "alignment_prs"
    __table_args__ = (UniqueConstraint("recipes_repo", "branch", name="uq_alignment_branch"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bench_repo: Mapped[str] = mapped_column(String(200))
    bench_pr: Mapped[int] = mapped_column(Integer)
    recipe_path: Mapped[str] = mapped_column(String(400))
    recipes_repo: Mapped[str] = mapped_column(String(200))
    branch: Mapped[str] = mapped_column(String(300))
    pr_number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    html_url: Mapped[str | None] = mapped_column(String(400), nullable=True)
    last_pushed_sha: Mapped[str | None] = mapped_column(String(64), nullable=True)
    fingerprint: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # bot.contract.edits_digest of the change's YAML edits (None: none, or not known)
    edits_digest: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    # state duplicate: the open alignment PR (of another benchmark PR) with the same edits
    duplicate_of: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # open | merged | closed | edited | autoclosed | abandoned | duplicate
    state: Mapped[str] = mapped_column(String(16), index=True)
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)


class ClosedFingerprint(Base):
    """Content a human declined (alignment PR closed unmerged): never proposed again."""

    __tablename__ = "closed_fingerprints"
    __table_args__ = (
        UniqueConstraint("recipes_repo", "recipe_path", "fingerprint", name="uq_closed_fp"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    recipes_repo: Mapped[str] = mapped_column(String(200))
    recipe_path: Mapped[str] = mapped_column(String(400))
    fingerprint: Mapped[str] = mapped_column(String(64))
    # bot.contract.edits_digest of the declined content's YAML edits (None: none, or not
    # known): the same edits are not proposed again, whatever the text around them
    edits_digest: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    pr_number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    closed_at: Mapped[float] = mapped_column(Float)


class StickyComment(Base):
    """Cache of the id of our one comment per (issue/PR, purpose); GitHub stays the truth."""

    __tablename__ = "sticky_comments"
    __table_args__ = (
        UniqueConstraint("repo", "issue_number", "purpose", name="uq_sticky_comment"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    repo: Mapped[str] = mapped_column(String(200))
    issue_number: Mapped[int] = mapped_column(Integer)
    purpose: Mapped[str] = mapped_column(String(40))
    comment_id: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[float] = mapped_column(Float)


class CheckRunRecord(Base):
    """Our check run per logical sync run (``external_id`` = ``<sync id>:<generation>``)."""

    __tablename__ = "check_runs"
    __table_args__ = (UniqueConstraint("repo", "external_id", name="uq_check_run_external"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    repo: Mapped[str] = mapped_column(String(200))
    head_sha: Mapped[str] = mapped_column(String(64))
    external_id: Mapped[str] = mapped_column(String(80))
    check_run_id: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    annotation_batches_sent: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[float] = mapped_column(Float)


class Refusal(Base):
    """A user we told, once per PR, that they may not run the command."""

    __tablename__ = "refusals"
    __table_args__ = (UniqueConstraint("repo", "pr_number", "login", name="uq_refusal"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    repo: Mapped[str] = mapped_column(String(200))
    pr_number: Mapped[int] = mapped_column(Integer)
    login: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[float] = mapped_column(Float)


class AuditResult(Base):
    """What each completed sync concluded (for the dashboard and for operators)."""

    __tablename__ = "audit_results"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bench_repo: Mapped[str] = mapped_column(String(200), index=True)
    pr_number: Mapped[int] = mapped_column(Integer)
    sync_id: Mapped[int] = mapped_column(Integer)
    generation: Mapped[int] = mapped_column(Integer)
    head_sha: Mapped[str] = mapped_column(String(64))
    conclusion: Mapped[str] = mapped_column(String(20))
    summary: Mapped[str] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Float)


class DashboardIssue(Base):
    """The opt-in drift dashboard issue of a benchmark repo (policy ``dashboard``)."""

    __tablename__ = "dashboard_issues"
    repo: Mapped[str] = mapped_column(String(200), primary_key=True)
    issue_number: Mapped[int] = mapped_column(Integer)
    updated_at: Mapped[float] = mapped_column(Float)


class IgnoredFlag(Base):
    """A flag a maintainer ticked "ignore" for on the dashboard: one recipe file, one flag.

    The dashboard stops counting it as drift and alignment PRs stop proposing it for that
    recipe file, until the box is unticked.
    """

    __tablename__ = "ignored_flags"
    __table_args__ = (
        UniqueConstraint("bench_repo", "recipe_path", "flag", name="uq_ignored_flag"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bench_repo: Mapped[str] = mapped_column(String(200))
    recipe_path: Mapped[str] = mapped_column(String(400))
    flag: Mapped[str] = mapped_column(String(200))
    ignored_by: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[float] = mapped_column(Float)


class DroppedHunk(Base):
    """A maintainer's choice of one flag or env var for one alignment PR: ``drop`` (declined,
    ``/recipe-sync drop``: its next update does not propose it) or ``add`` (``/recipe-sync
    add``: proposed whatever its adoption estimate). Keyed by the alignment PR, i.e. benchmark
    PR + recipe file (``*``: every recipe file of that benchmark PR, when chosen on the
    benchmark PR); ``/recipe-sync keep`` forgets the choice."""

    __tablename__ = "dropped_hunks"
    __table_args__ = (
        UniqueConstraint(
            "bench_repo", "bench_pr", "recipe_path", "subject", name="uq_dropped_hunk"
        ),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bench_repo: Mapped[str] = mapped_column(String(200))
    bench_pr: Mapped[int] = mapped_column(Integer)
    recipe_path: Mapped[str] = mapped_column(String(400))
    subject: Mapped[str] = mapped_column(String(200))
    dropped_by: Mapped[str] = mapped_column(String(100))  # who chose (either choice)
    created_at: Mapped[float] = mapped_column(Float)
    choice: Mapped[str] = mapped_column(String(8), default="drop", server_default="drop")


class RepositoryRename(Base):
    """A repository GitHub renamed: the name the service knew it by (its records keep that
    name) and the name GitHub uses now (every API call and git fetch)."""

    __tablename__ = "repository_renames"
    old_name: Mapped[str] = mapped_column(String(200), primary_key=True)
    new_name: Mapped[str] = mapped_column(String(200), index=True)
    renamed_at: Mapped[float] = mapped_column(Float)
