"""One sync record per benchmark PR (:class:`~bot.state.states.SyncState`): requests coalesce,
a lease with a heartbeat runs it, and what each run concluded is kept."""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, select, update

from bot.state.db import Database
from bot.state.models import (
    AuditResult,
    Sync,
)
from bot.state.records import Approval, SyncSnapshot, SyncTicket
from bot.state.states import (
    RESTARTABLE,
    SyncState,
)


class Syncs:
    """The syncs table (and the audit results of its runs)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, sync_id: int) -> SyncSnapshot | None:
        with self.db.tx() as session:
            row = session.get(Sync, sync_id)
            return None if row is None else SyncSnapshot.of(row)

    def find(self, bench_repo: str, pr_number: int) -> SyncSnapshot | None:
        with self.db.tx() as session:
            row = session.scalar(
                select(Sync).where(Sync.bench_repo == bench_repo, Sync.pr_number == pr_number)
            )
            return None if row is None else SyncSnapshot.of(row)

    def approved_at(self, bench_repo: str, head_sha: str) -> list[SyncSnapshot]:
        """Syncs whose approved head is ``head_sha`` (maps fork workflow runs to PRs)."""
        with self.db.tx() as session:
            rows = session.scalars(
                select(Sync).where(Sync.bench_repo == bench_repo, Sync.approved_sha == head_sha)
            )
            return [SyncSnapshot.of(row) for row in rows]

    def request(
        self,
        bench_repo: str,
        pr_number: int,
        *,
        approval: Approval | None,
        dry_run: bool,
        require_approval: bool = True,
    ) -> SyncTicket | None:
        """Ask for a sync of one PR; requests coalesce per PR.

        With ``approval`` the approved head becomes ``approval.sha``; without it the PR must
        already be approved (else None: nothing to do), unless ``require_approval`` is
        False (a closed PR: the run only retires its alignment PRs). Returns whether the caller must
        enqueue: only the request that moves the PR to ``pending`` does; a request while
        pending is absorbed, one while running marks the run ``dirty`` (it re-queues itself).
        A dry-run request merged with a full one is a full run.
        """
        now = self.db.clock()
        with self.db.tx() as session:
            self.db.insert_ignore(
                session,
                Sync,
                {
                    "bench_repo": bench_repo,
                    "pr_number": pr_number,
                    "state": SyncState.IDLE,
                    "generation": 0,
                    "is_fork": approval.is_fork if approval else False,
                    "dry_run": dry_run,
                    "dirty": False,
                    "attempts": 0,
                    "created_at": now,
                    "updated_at": now,
                },
            )
        key = (Sync.bench_repo == bench_repo, Sync.pr_number == pr_number)
        approved: dict[str, Any] = (
            {"approved_sha": approval.sha, "approved_by": approval.by, "is_fork": approval.is_fork}
            if approval
            else {}
        )
        for _ in range(10):  # each step is atomic; loop only if the state moved in between
            with self.db.tx() as session:
                row = session.scalar(select(Sync).where(*key))
                assert row is not None
                if approval is None and row.approved_sha is None and require_approval:
                    return None
                started: Any = session.execute(
                    update(Sync)
                    .where(*key, Sync.state.in_(RESTARTABLE))
                    .values(
                        state=SyncState.PENDING,
                        generation=Sync.generation + 1,
                        dry_run=dry_run,
                        dirty=False,
                        attempts=0,
                        last_error=None,
                        enqueued_at=now,
                        updated_at=now,
                        **approved,
                    )
                )
                if started.rowcount == 1:
                    return SyncTicket(row.id, True, SyncState.PENDING)
                merged: Any = session.execute(
                    update(Sync)
                    .where(*key, Sync.state == SyncState.PENDING)
                    .values(updated_at=now, **approved, **({} if dry_run else {"dry_run": False}))
                )
                if merged.rowcount == 1:
                    return SyncTicket(row.id, False, SyncState.PENDING)
                next_dry = case((Sync.dirty, Sync.dry_run), else_=True) if dry_run else False
                marked: Any = session.execute(
                    update(Sync)
                    .where(*key, Sync.state == SyncState.RUNNING)
                    .values(dirty=True, dry_run=next_dry, updated_at=now, **approved)
                )
                if marked.rowcount == 1:
                    return SyncTicket(row.id, False, SyncState.RUNNING)
        raise RuntimeError(f"sync state of {bench_repo}#{pr_number} keeps changing")

    def revoke_approval(self, bench_repo: str, pr_number: int) -> None:
        with self.db.tx() as session:
            session.execute(
                update(Sync)
                .where(Sync.bench_repo == bench_repo, Sync.pr_number == pr_number)
                .values(approved_sha=None, approved_by=None, updated_at=self.db.clock())
            )

    def acquire(self, sync_id: int, owner: str, stale_after: float) -> SyncSnapshot | None:
        """Take the lease of a pending sync (or of a running one whose heartbeat stopped)."""
        now = self.db.clock()
        with self.db.tx() as session:
            result: Any = session.execute(
                update(Sync)
                .where(
                    Sync.id == sync_id,
                    # SyncState.sources(RUNNING): pending, or running with a stale lease
                    (Sync.state == SyncState.PENDING)
                    | ((Sync.state == SyncState.RUNNING) & (Sync.heartbeat_at < now - stale_after)),
                )
                .values(
                    state=SyncState.RUNNING,
                    lease_owner=owner,
                    heartbeat_at=now,
                    attempts=Sync.attempts + 1,
                    updated_at=now,
                )
            )
            if result.rowcount != 1:
                return None
            row = session.get(Sync, sync_id)
            assert row is not None
            return SyncSnapshot.of(row)

    def heartbeat(self, sync_id: int, owner: str) -> bool:
        """Extend the lease; False when it was lost (another worker took over)."""
        with self.db.tx() as session:
            result: Any = session.execute(
                update(Sync)
                .where(
                    Sync.id == sync_id, Sync.lease_owner == owner, Sync.state == SyncState.RUNNING
                )
                .values(heartbeat_at=self.db.clock())
            )
            return bool(result.rowcount == 1)

    def finish(
        self,
        sync_id: int,
        owner: str,
        *,
        state: SyncState = SyncState.DONE,
        error: str | None = None,
        result: str | None = None,
    ) -> bool:
        """Release the lease. True when a request arrived meanwhile: re-enqueue the sync."""
        target = SyncState.RUNNING.check(state)
        now = self.db.clock()
        with self.db.tx() as session:
            done: Any = session.execute(
                update(Sync)
                .where(Sync.id == sync_id, Sync.lease_owner == owner)
                .values(
                    state=case((Sync.dirty, SyncState.PENDING.value), else_=target.value),
                    generation=case((Sync.dirty, Sync.generation + 1), else_=Sync.generation),
                    enqueued_at=case((Sync.dirty, now), else_=Sync.enqueued_at),
                    dirty=False,
                    lease_owner=None,
                    heartbeat_at=None,
                    last_error=error,
                    last_result=result,
                    updated_at=now,
                )
            )
            if done.rowcount != 1:
                return False
            row = session.get(Sync, sync_id)
            return row is not None and row.state == SyncState.PENDING

    def release_for_retry(self, sync_id: int, owner: str, error: str) -> None:
        """Give the lease back after a transient error; the same generation runs again."""
        with self.db.tx() as session:
            session.execute(
                update(Sync)
                .where(Sync.id == sync_id, Sync.lease_owner == owner)
                .values(
                    state=SyncState.PENDING,
                    lease_owner=None,
                    heartbeat_at=None,
                    last_error=error,
                    enqueued_at=self.db.clock(),
                    updated_at=self.db.clock(),
                )
            )

    def requeue_stale(self, stale_after: float) -> list[int]:
        """Running syncs whose worker stopped heart-beating → pending (caller enqueues)."""
        now = self.db.clock()
        cutoff = now - stale_after
        requeued: list[int] = []
        with self.db.tx() as session:
            ids = list(
                session.scalars(
                    select(Sync.id).where(
                        Sync.state == SyncState.RUNNING, Sync.heartbeat_at < cutoff
                    )
                )
            )
            for sync_id in ids:
                result: Any = session.execute(
                    update(Sync)
                    .where(
                        Sync.id == sync_id,
                        Sync.state == SyncState.RUNNING,
                        Sync.heartbeat_at < cutoff,
                    )
                    .values(
                        state=SyncState.PENDING,
                        lease_owner=None,
                        heartbeat_at=None,
                        enqueued_at=now,
                        updated_at=now,
                    )
                )
                if result.rowcount == 1:
                    requeued.append(sync_id)
        return requeued

    def lost_pending(self, older_than: float) -> list[int]:
        """Pending syncs enqueued ``older_than`` seconds ago and never started."""
        now = self.db.clock()
        with self.db.tx() as session:
            ids = list(
                session.scalars(
                    select(Sync.id).where(
                        Sync.state == SyncState.PENDING, Sync.enqueued_at < now - older_than
                    )
                )
            )
            if ids:
                session.execute(update(Sync).where(Sync.id.in_(ids)).values(enqueued_at=now))
            return ids

    def record_audit(
        self,
        snapshot: SyncSnapshot,
        *,
        head_sha: str,
        conclusion: str,
        summary: str,
    ) -> None:
        with self.db.tx() as session:
            session.add(
                AuditResult(
                    bench_repo=snapshot.bench_repo,
                    pr_number=snapshot.pr_number,
                    sync_id=snapshot.id,
                    generation=snapshot.generation,
                    head_sha=head_sha,
                    conclusion=conclusion,
                    summary=summary[:4000],
                    created_at=self.db.clock(),
                )
            )

    def bench_repos(self) -> set[str]:
        """Every benchmark repository with a sync record."""
        with self.db.tx() as session:
            return set(session.scalars(select(Sync.bench_repo).distinct()))
