"""The values the store's repositories take and return: frozen, free of SQL sessions."""

from __future__ import annotations

from dataclasses import dataclass

from bot.state.models import AlignmentPr, Sync
from bot.state.states import AlignmentState, SyncState


@dataclass(frozen=True)
class SyncSnapshot:
    id: int
    bench_repo: str
    pr_number: int
    state: SyncState
    generation: int
    approved_sha: str | None
    approved_by: str | None
    is_fork: bool
    dry_run: bool
    dirty: bool
    attempts: int
    lease_owner: str | None
    heartbeat_at: float | None
    last_error: str | None
    last_result: str | None

    @classmethod
    def of(cls, row: Sync) -> SyncSnapshot:
        return cls(
            id=row.id,
            bench_repo=row.bench_repo,
            pr_number=row.pr_number,
            state=SyncState(row.state),
            generation=row.generation,
            approved_sha=row.approved_sha,
            approved_by=row.approved_by,
            is_fork=bool(row.is_fork),
            dry_run=bool(row.dry_run),
            dirty=bool(row.dirty),
            attempts=row.attempts,
            lease_owner=row.lease_owner,
            heartbeat_at=row.heartbeat_at,
            last_error=row.last_error,
            last_result=row.last_result,
        )

    @property
    def external_id(self) -> str:
        """Identity of this logical run on GitHub (check run ``external_id``)."""
        return f"{self.id}:{self.generation}"


@dataclass(frozen=True)
class Approval:
    """A head SHA someone allowed to be synced (the trigger label or a command)."""

    sha: str
    by: str
    is_fork: bool


@dataclass(frozen=True)
class SyncTicket:
    sync_id: int
    enqueue: bool  # the caller must enqueue run_sync(sync_id)
    state: SyncState


@dataclass(frozen=True)
class AlignmentRecord:
    id: int
    bench_repo: str
    bench_pr: int
    recipe_path: str
    recipes_repo: str
    branch: str
    pr_number: int | None
    html_url: str | None
    last_pushed_sha: str | None
    fingerprint: str | None
    state: AlignmentState
    edits_digest: str | None = None
    duplicate_of: int | None = None  # state duplicate: the alignment PR proposing the same edits

    @classmethod
    def of(cls, row: AlignmentPr) -> AlignmentRecord:
        return cls(
            id=row.id,
            bench_repo=row.bench_repo,
            bench_pr=row.bench_pr,
            recipe_path=row.recipe_path,
            recipes_repo=row.recipes_repo,
            branch=row.branch,
            pr_number=row.pr_number,
            html_url=row.html_url,
            last_pushed_sha=row.last_pushed_sha,
            fingerprint=row.fingerprint,
            state=AlignmentState(row.state),
            edits_digest=row.edits_digest,
            duplicate_of=row.duplicate_of,
        )


@dataclass(frozen=True)
class DeliveryClaim:
    """A webhook delivery to record: its ``X-GitHub-Delivery`` id and what it asks for."""

    delivery_id: str
    event: str
    action: str
    repo: str
    trigger: str  # the classified trigger, as JSON
