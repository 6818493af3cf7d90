"""Service state: atomic, short transactions over the tables in :mod:`bot.state.models`.

Every state transition is one conditional ``UPDATE … WHERE state = …`` (or a unique insert),
so concurrent web processes and workers on several machines agree without locks held across
GitHub calls. SQLite runs every transaction as ``BEGIN IMMEDIATE`` (one writer at a time,
no lock upgrades that fail under WAL); PostgreSQL uses its default READ COMMITTED.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    case,
    create_engine,
    delete,
    event,
    func,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import QueuePool

from bot.state.models import (
    AlignmentPr,
    AuditResult,
    CheckRunRecord,
    ClosedFingerprint,
    Delivery,
    DroppedHunk,
    IgnoredFlag,
    Refusal,
    RepositoryRename,
    StickyComment,
    Sync,
)

RESTARTABLE = ("idle", "done", "failed")


@dataclass(frozen=True)
class DeliveryClaim:
    """A webhook delivery to record: its ``X-GitHub-Delivery`` id and what it asks for."""

    delivery_id: str
    event: str
    action: str
    repo: str
    trigger: str  # the classified trigger, as JSON


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        # pooled: connecting and the PRAGMAs below cost ~30 ms, which the webhook ack paid on
        # every delivery when each transaction opened its own connection
        engine = create_engine(
            url,
            connect_args={"timeout": 30, "check_same_thread": False},
            poolclass=QueuePool,
            pool_size=8,
            max_overflow=56,
        )

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            # with WAL, NORMAL survives any process crash (the failure we design for) and
            # only risks the last commits on power loss; FULL fsyncs every commit
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    # no pre-ping (a round trip per checkout, ~1 ms CPU on the ack path): a connection that
    # died with a server restart invalidates the pool and the claim retries once
    return create_engine(url, pool_pre_ping=False, pool_size=10, max_overflow=30)


@dataclass(frozen=True)
class SyncSnapshot:
    id: int
    bench_repo: str
    pr_number: int
    state: str
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
            state=row.state,
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
    state: str


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
    state: str

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
            state=row.state,
        )


class Store:
    def __init__(self, url: str, *, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.clock = clock
        self._insert_ignore_statements: dict[type[Any], Any] = {}
        self._autocommit = self.engine.execution_options(isolation_level="AUTOCOMMIT")

    @classmethod
    def open(cls, url: str, *, clock: Callable[[], float] = time.time) -> Store:
        """Connect and apply pending migrations."""
        from bot.state.migrate import upgrade

        store = cls(url, clock=clock)
        upgrade(store.engine)
        return store

    @property
    def single_writer(self) -> bool:
        """SQLite admits one writer at a time: concurrent writers wait in its busy handler,
        which sleeps 1…100 ms between tries, so callers should queue writes themselves."""
        return self.engine.dialect.name == "sqlite"

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def tx(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

    def revision(self) -> str:
        """The alembic revision the database is at ("" before the first migration)."""
        from alembic.runtime.migration import MigrationContext

        with self.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision() or ""

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    def _insert_ignore(
        self, session: Session | Connection, model: type[Any], values: dict[str, Any]
    ) -> bool:
        """INSERT unless a unique key already exists; True when this call inserted."""
        return session.execute(self._insert_ignore_statement(model), values).first() is not None

    def _insert_ignore_statement(self, model: type[Any]) -> Any:
        """``INSERT … ON CONFLICT DO NOTHING RETURNING <primary key>`` for ``model``."""
        statement = self._insert_ignore_statements.get(model)
        if statement is None:
            dialect = self.engine.dialect.name
            builder = postgresql.insert if dialect == "postgresql" else sqlite.insert
            key = next(iter(model.__table__.primary_key.columns))
            # RETURNING, not rowcount: psycopg reports -1 for INSERT … ON CONFLICT
            statement = builder(model).on_conflict_do_nothing().returning(key)
            # built once, values bound per call: rebuilding it was half the ack's claim CPU
            self._insert_ignore_statements[model] = statement
        return statement

    # --- deliveries ------------------------------------------------------------------------

    def claim_delivery(
        self, delivery_id: str, *, event: str, action: str, repo: str, trigger: str
    ) -> bool:
        """Claim one delivery id atomically; False when it was already claimed (a replay)."""
        claim = DeliveryClaim(delivery_id, event, action, repo, trigger)
        return delivery_id in self.claim_deliveries([claim])

    def claim_deliveries(self, claims: Sequence[DeliveryClaim]) -> set[str]:
        """Claim several delivery ids in one transaction; the ids this call claimed (the
        others were claimed before: replays).

        The webhook ack commits the deliveries that arrive together as one group (one round
        trip, one commit), so a burst does not pay a transaction per delivery. A delivery
        that ended ``failed`` can be claimed again, so GitHub's "Redeliver" retries it once
        the cause (e.g. missing credentials) is fixed.
        """
        if not claims:
            return set()
        try:
            return self._claim(claims)
        except DBAPIError as err:
            if not err.connection_invalidated:
                raise
            return self._claim(claims)  # a fresh connection

    def _claim(self, claims: Sequence[DeliveryClaim]) -> set[str]:
        now = self.clock()
        # Core on one connection, not an ORM session: this is the webhook ack's only write.
        # Each statement is atomic alone (the UPDATE re-checks ``failed``), so PostgreSQL runs
        # them in autocommit: one round trip instead of BEGIN, INSERT, COMMIT (the ack waited
        # on three). SQLite keeps its BEGIN IMMEDIATE (local, and the driver's own mode).
        if self.single_writer:
            with self.engine.begin() as conn:
                return self._claim_on(conn, claims, now)
        with self._autocommit.connect() as conn:
            return self._claim_on(conn, claims, now)

    def _claim_on(self, conn: Connection, claims: Sequence[DeliveryClaim], now: float) -> set[str]:
        rows = [
            {
                "delivery_id": claim.delivery_id,
                "event": claim.event,
                "action": claim.action,
                "repo": claim.repo,
                "trigger": claim.trigger,
                "status": "received",
                "attempts": 0,
                "received_at": now,
                "updated_at": now,
            }
            for claim in claims
        ]
        # one multi-row INSERT … ON CONFLICT DO NOTHING RETURNING (SQLAlchemy batches the
        # parameter sets into VALUES lists); an id twice in one group is inserted once
        claimed = {row[0] for row in conn.execute(self._insert_ignore_statement(Delivery), rows)}
        replays = {claim.delivery_id for claim in claims} - claimed
        if replays:
            result = conn.execute(
                update(Delivery)
                .where(Delivery.delivery_id.in_(replays), Delivery.status == "failed")
                .values(status="received", error=None, updated_at=now)
                .returning(Delivery.delivery_id)
            )
            claimed.update(row[0] for row in result)
        return claimed

    def unclaim_delivery(self, delivery_id: str) -> None:
        """Forget a claim whose enqueue failed, so GitHub's retry is accepted."""
        with self.tx() as session:
            row = session.get(Delivery, delivery_id)
            if row is not None and row.status == "received":
                session.delete(row)

    def mark_queued(self, delivery_ids: Sequence[str]) -> None:
        """The deliveries reached the queue: ``received`` → ``queued`` (one statement)."""
        if not delivery_ids:
            return
        with self.tx() as session:
            session.execute(
                update(Delivery)
                .where(Delivery.delivery_id.in_(delivery_ids), Delivery.status == "received")
                .values(status="queued")
            )

    def reclaim_unqueued(self, delivery_id: str) -> bool:
        """A redelivery of a delivery that was recorded but never reached the queue (its
        process died between the insert and the enqueue): True → enqueue it again."""
        with self.tx() as session:
            result: Any = session.execute(
                update(Delivery)
                .where(Delivery.delivery_id == delivery_id, Delivery.status == "received")
                .values(updated_at=self.clock())
            )
            return bool(result.rowcount == 1)

    def unqueued_deliveries(self, older_than: float) -> list[str]:
        """Deliveries recorded ``older_than`` seconds ago that never reached the queue;
        each is touched, so one reconciler pass takes it (the caller enqueues it)."""
        now = self.clock()
        with self.tx() as session:
            ids = list(
                session.scalars(
                    select(Delivery.delivery_id).where(
                        Delivery.status == "received", Delivery.updated_at < now - older_than
                    )
                )
            )
            if ids:
                session.execute(
                    update(Delivery)
                    .where(Delivery.delivery_id.in_(ids), Delivery.status == "received")
                    .values(updated_at=now)
                )
            return ids

    def start_delivery(self, delivery_id: str, stale_after: float) -> bool:
        """Take a delivery for processing (one worker at a time); a ``processing`` one whose
        heartbeat (``updated_at``) is older than ``stale_after`` was left by a dead worker."""
        now = self.clock()
        with self.tx() as session:
            result: Any = session.execute(
                update(Delivery)
                .where(
                    Delivery.delivery_id == delivery_id,
                    Delivery.status.in_(("received", "queued", "enqueued"))
                    | (
                        (Delivery.status == "processing")
                        & (Delivery.updated_at < now - stale_after)
                    ),
                )
                .values(status="processing", updated_at=now, attempts=Delivery.attempts + 1)
            )
            return bool(result.rowcount == 1)

    def touch_delivery(self, delivery_id: str) -> None:
        """Heartbeat of a delivery being processed."""
        with self.tx() as session:
            session.execute(
                update(Delivery)
                .where(Delivery.delivery_id == delivery_id, Delivery.status == "processing")
                .values(updated_at=self.clock())
            )

    def stale_processing(self, stale_after: float) -> list[str]:
        """Deliveries whose worker stopped heart-beating (killed mid-dispatch)."""
        cutoff = self.clock() - stale_after
        with self.tx() as session:
            return list(
                session.scalars(
                    select(Delivery.delivery_id).where(
                        Delivery.status == "processing", Delivery.updated_at < cutoff
                    )
                )
            )

    def set_delivery_status(self, delivery_id: str, status: str, error: str | None = None) -> None:
        with self.tx() as session:
            session.execute(
                update(Delivery)
                .where(Delivery.delivery_id == delivery_id)
                .values(
                    status=status,
                    error=error,
                    updated_at=self.clock(),
                    attempts=Delivery.attempts + (1 if status == "processing" else 0),
                )
            )

    def delivery(self, delivery_id: str) -> tuple[str, str, str] | None:
        """(event, status, trigger JSON) of a delivery."""
        with self.tx() as session:
            row = session.get(Delivery, delivery_id)
            return None if row is None else (row.event, row.status, row.trigger)

    def delivery_count(self) -> int:
        with self.tx() as session:
            return int(session.scalar(select(func.count()).select_from(Delivery)) or 0)

    def unfinished_deliveries(self, older_than: float) -> list[str]:
        """Deliveries accepted but not processed for ``older_than`` seconds (lost enqueue)."""
        cutoff = self.clock() - older_than
        with self.tx() as session:
            rows = session.scalars(
                select(Delivery.delivery_id).where(
                    Delivery.status.in_(("received", "queued", "enqueued", "processing")),
                    Delivery.updated_at < cutoff,
                )
            )
            ids = list(rows)
            if ids:
                session.execute(
                    update(Delivery)
                    .where(Delivery.delivery_id.in_(ids))
                    .values(updated_at=self.clock())
                )
            return ids

    # --- syncs -----------------------------------------------------------------------------

    def sync(self, sync_id: int) -> SyncSnapshot | None:
        with self.tx() as session:
            row = session.get(Sync, sync_id)
            return None if row is None else SyncSnapshot.of(row)

    def find_sync(self, bench_repo: str, pr_number: int) -> SyncSnapshot | None:
        with self.tx() as session:
            row = session.scalar(
                select(Sync).where(Sync.bench_repo == bench_repo, Sync.pr_number == pr_number)
            )
            return None if row is None else SyncSnapshot.of(row)

    def syncs_approved_at(self, bench_repo: str, head_sha: str) -> list[SyncSnapshot]:
        """Syncs whose approved head is ``head_sha`` (maps fork workflow runs to PRs)."""
        with self.tx() as session:
            rows = session.scalars(
                select(Sync).where(Sync.bench_repo == bench_repo, Sync.approved_sha == head_sha)
            )
            return [SyncSnapshot.of(row) for row in rows]

    def request_sync(
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
        now = self.clock()
        with self.tx() as session:
            self._insert_ignore(
                session,
                Sync,
                {
                    "bench_repo": bench_repo,
                    "pr_number": pr_number,
                    "state": "idle",
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
            with self.tx() as session:
                row = session.scalar(select(Sync).where(*key))
                assert row is not None
                if approval is None and row.approved_sha is None and require_approval:
                    return None
                started: Any = session.execute(
                    update(Sync)
                    .where(*key, Sync.state.in_(RESTARTABLE))
                    .values(
                        state="pending",
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
                    return SyncTicket(row.id, True, "pending")
                merged: Any = session.execute(
                    update(Sync)
                    .where(*key, Sync.state == "pending")
                    .values(updated_at=now, **approved, **({} if dry_run else {"dry_run": False}))
                )
                if merged.rowcount == 1:
                    return SyncTicket(row.id, False, "pending")
                next_dry = case((Sync.dirty, Sync.dry_run), else_=True) if dry_run else False
                marked: Any = session.execute(
                    update(Sync)
                    .where(*key, Sync.state == "running")
                    .values(dirty=True, dry_run=next_dry, updated_at=now, **approved)
                )
                if marked.rowcount == 1:
                    return SyncTicket(row.id, False, "running")
        raise RuntimeError(f"sync state of {bench_repo}#{pr_number} keeps changing")

    def revoke_approval(self, bench_repo: str, pr_number: int) -> None:
        with self.tx() as session:
            session.execute(
                update(Sync)
                .where(Sync.bench_repo == bench_repo, Sync.pr_number == pr_number)
                .values(approved_sha=None, approved_by=None, updated_at=self.clock())
            )

    def acquire(self, sync_id: int, owner: str, stale_after: float) -> SyncSnapshot | None:
        """Take the lease of a pending sync (or of a running one whose heartbeat stopped)."""
        now = self.clock()
        with self.tx() as session:
            result: Any = session.execute(
                update(Sync)
                .where(
                    Sync.id == sync_id,
                    (Sync.state == "pending")
                    | ((Sync.state == "running") & (Sync.heartbeat_at < now - stale_after)),
                )
                .values(
                    state="running",
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
        with self.tx() as session:
            result: Any = session.execute(
                update(Sync)
                .where(Sync.id == sync_id, Sync.lease_owner == owner, Sync.state == "running")
                .values(heartbeat_at=self.clock())
            )
            return bool(result.rowcount == 1)

    def finish(
        self,
        sync_id: int,
        owner: str,
        *,
        state: str = "done",
        error: str | None = None,
        result: str | None = None,
    ) -> bool:
        """Release the lease. True when a request arrived meanwhile: re-enqueue the sync."""
        now = self.clock()
        with self.tx() as session:
            done: Any = session.execute(
                update(Sync)
                .where(Sync.id == sync_id, Sync.lease_owner == owner)
                .values(
                    state=case((Sync.dirty, "pending"), else_=state),
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
            return row is not None and row.state == "pending"

    def release_for_retry(self, sync_id: int, owner: str, error: str) -> None:
        """Give the lease back after a transient error; the same generation runs again."""
        with self.tx() as session:
            session.execute(
                update(Sync)
                .where(Sync.id == sync_id, Sync.lease_owner == owner)
                .values(
                    state="pending",
                    lease_owner=None,
                    heartbeat_at=None,
                    last_error=error,
                    enqueued_at=self.clock(),
                    updated_at=self.clock(),
                )
            )

    def requeue_stale(self, stale_after: float) -> list[int]:
        """Running syncs whose worker stopped heart-beating → pending (caller enqueues)."""
        now = self.clock()
        cutoff = now - stale_after
        requeued: list[int] = []
        with self.tx() as session:
            ids = list(
                session.scalars(
                    select(Sync.id).where(Sync.state == "running", Sync.heartbeat_at < cutoff)
                )
            )
            for sync_id in ids:
                result: Any = session.execute(
                    update(Sync)
                    .where(Sync.id == sync_id, Sync.state == "running", Sync.heartbeat_at < cutoff)
                    .values(
                        state="pending",
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
        now = self.clock()
        with self.tx() as session:
            ids = list(
                session.scalars(
                    select(Sync.id).where(
                        Sync.state == "pending", Sync.enqueued_at < now - older_than
                    )
                )
            )
            if ids:
                session.execute(update(Sync).where(Sync.id.in_(ids)).values(enqueued_at=now))
            return ids

    # --- alignment PRs -------------------------------------------------------------------

    def alignment_by_branch(self, recipes_repo: str, branch: str) -> AlignmentRecord | None:
        with self.tx() as session:
            row = session.scalar(
                select(AlignmentPr).where(
                    AlignmentPr.recipes_repo == recipes_repo, AlignmentPr.branch == branch
                )
            )
            return None if row is None else AlignmentRecord.of(row)

    def alignment_by_pr(self, recipes_repo: str, pr_number: int) -> AlignmentRecord | None:
        """The alignment record of a PR in the recipes repository (None: not ours)."""
        with self.tx() as session:
            row = session.scalar(
                select(AlignmentPr)
                .where(AlignmentPr.recipes_repo == recipes_repo, AlignmentPr.pr_number == pr_number)
                .order_by(AlignmentPr.id.desc())
            )
            return None if row is None else AlignmentRecord.of(row)

    def alignments_for(self, bench_repo: str, bench_pr: int) -> list[AlignmentRecord]:
        with self.tx() as session:
            rows = session.scalars(
                select(AlignmentPr)
                .where(AlignmentPr.bench_repo == bench_repo, AlignmentPr.bench_pr == bench_pr)
                .order_by(AlignmentPr.id)
            )
            return [AlignmentRecord.of(row) for row in rows]

    def alignments_for_recipe(self, bench_repo: str, recipe_path: str) -> list[AlignmentRecord]:
        with self.tx() as session:
            rows = session.scalars(
                select(AlignmentPr)
                .where(AlignmentPr.bench_repo == bench_repo, AlignmentPr.recipe_path == recipe_path)
                .order_by(AlignmentPr.id)
            )
            return [AlignmentRecord.of(row) for row in rows]

    def save_alignment(
        self,
        *,
        bench_repo: str,
        bench_pr: int,
        recipe_path: str,
        recipes_repo: str,
        branch: str,
        **values: Any,
    ) -> AlignmentRecord:
        now = self.clock()
        with self.tx() as session:
            self._insert_ignore(
                session,
                AlignmentPr,
                {
                    "bench_repo": bench_repo,
                    "bench_pr": bench_pr,
                    "recipe_path": recipe_path,
                    "recipes_repo": recipes_repo,
                    "branch": branch,
                    "state": values.get("state", "open"),
                    "created_at": now,
                    "updated_at": now,
                },
            )
            session.execute(
                update(AlignmentPr)
                .where(AlignmentPr.recipes_repo == recipes_repo, AlignmentPr.branch == branch)
                .values(updated_at=now, **values)
            )
            row = session.scalar(
                select(AlignmentPr).where(
                    AlignmentPr.recipes_repo == recipes_repo, AlignmentPr.branch == branch
                )
            )
            assert row is not None
            return AlignmentRecord.of(row)

    def count_open_alignments(self, recipes_repo: str) -> int:
        with self.tx() as session:
            return int(
                session.scalar(
                    select(func.count())
                    .select_from(AlignmentPr)
                    .where(
                        AlignmentPr.recipes_repo == recipes_repo,
                        AlignmentPr.state.in_(("open", "edited", "abandoned")),
                        AlignmentPr.pr_number.is_not(None),
                    )
                )
                or 0
            )

    def count_alignments_created_since(self, recipes_repo: str, since: float) -> int:
        with self.tx() as session:
            return int(
                session.scalar(
                    select(func.count())
                    .select_from(AlignmentPr)
                    .where(
                        AlignmentPr.recipes_repo == recipes_repo,
                        AlignmentPr.pr_number.is_not(None),
                        AlignmentPr.created_at >= since,
                    )
                )
                or 0
            )

    def add_declined(
        self, recipes_repo: str, recipe_path: str, fingerprint: str, pr_number: int | None
    ) -> None:
        with self.tx() as session:
            self._insert_ignore(
                session,
                ClosedFingerprint,
                {
                    "recipes_repo": recipes_repo,
                    "recipe_path": recipe_path,
                    "fingerprint": fingerprint,
                    "pr_number": pr_number,
                    "closed_at": self.clock(),
                },
            )

    def is_declined(self, recipes_repo: str, recipe_path: str, fingerprint: str) -> bool:
        with self.tx() as session:
            return (
                session.scalar(
                    select(ClosedFingerprint.id).where(
                        ClosedFingerprint.recipes_repo == recipes_repo,
                        ClosedFingerprint.recipe_path == recipe_path,
                        ClosedFingerprint.fingerprint == fingerprint,
                    )
                )
                is not None
            )

    # --- sticky comments, check runs, refusals, audit ------------------------------------

    def sticky_comment(self, repo: str, issue_number: int, purpose: str) -> int | None:
        with self.tx() as session:
            return session.scalar(
                select(StickyComment.comment_id).where(
                    StickyComment.repo == repo,
                    StickyComment.issue_number == issue_number,
                    StickyComment.purpose == purpose,
                )
            )

    def set_sticky_comment(
        self, repo: str, issue_number: int, purpose: str, comment_id: int | None
    ) -> None:
        with self.tx() as session:
            row = session.scalar(
                select(StickyComment).where(
                    StickyComment.repo == repo,
                    StickyComment.issue_number == issue_number,
                    StickyComment.purpose == purpose,
                )
            )
            if comment_id is None:
                if row is not None:
                    session.delete(row)
                return
            if row is None:
                session.add(
                    StickyComment(
                        repo=repo,
                        issue_number=issue_number,
                        purpose=purpose,
                        comment_id=comment_id,
                        updated_at=self.clock(),
                    )
                )
            else:
                row.comment_id = comment_id
                row.updated_at = self.clock()

    def check_run(self, repo: str, external_id: str) -> tuple[int, str, int] | None:
        """(check run id, status, annotation batches sent) of a logical run."""
        with self.tx() as session:
            row = session.scalar(
                select(CheckRunRecord).where(
                    CheckRunRecord.repo == repo, CheckRunRecord.external_id == external_id
                )
            )
            return (
                None if row is None else (row.check_run_id, row.status, row.annotation_batches_sent)
            )

    def save_check_run(
        self,
        repo: str,
        external_id: str,
        *,
        head_sha: str,
        check_run_id: int,
        status: str,
        batches_sent: int | None = None,
    ) -> None:
        now = self.clock()
        with self.tx() as session:
            self._insert_ignore(
                session,
                CheckRunRecord,
                {
                    "repo": repo,
                    "external_id": external_id,
                    "head_sha": head_sha,
                    "check_run_id": check_run_id,
                    "status": status,
                    "annotation_batches_sent": 0,
                    "updated_at": now,
                },
            )
            values: dict[str, Any] = {"check_run_id": check_run_id, "status": status}
            if batches_sent is not None:
                values["annotation_batches_sent"] = batches_sent
            session.execute(
                update(CheckRunRecord)
                .where(CheckRunRecord.repo == repo, CheckRunRecord.external_id == external_id)
                .values(updated_at=now, **values)
            )

    def sync_for_check_run(self, repo: str, check_run_id: int) -> int | None:
        """The benchmark PR number a check run of ours belongs to."""
        with self.tx() as session:
            external = session.scalar(
                select(CheckRunRecord.external_id).where(
                    CheckRunRecord.repo == repo, CheckRunRecord.check_run_id == check_run_id
                )
            )
            if external is None:
                return None
            row = session.get(Sync, int(external.split(":", 1)[0]))
            return None if row is None else row.pr_number

    def claim_refusal(self, repo: str, pr_number: int, login: str) -> bool:
        """True the first time ``login`` is refused on this PR (one polite reply only)."""
        with self.tx() as session:
            return self._insert_ignore(
                session,
                Refusal,
                {"repo": repo, "pr_number": pr_number, "login": login, "created_at": self.clock()},
            )

    def record_audit(
        self,
        snapshot: SyncSnapshot,
        *,
        head_sha: str,
        conclusion: str,
        summary: str,
    ) -> None:
        with self.tx() as session:
            session.add(
                AuditResult(
                    bench_repo=snapshot.bench_repo,
                    pr_number=snapshot.pr_number,
                    sync_id=snapshot.id,
                    generation=snapshot.generation,
                    head_sha=head_sha,
                    conclusion=conclusion,
                    summary=summary[:4000],
                    created_at=self.clock(),
                )
            )

    # --- flags ignored from the dashboard issue ----------------------------------------------

    def ignored_flags(self, bench_repo: str) -> dict[str, frozenset[str]]:
        """recipe path → the flags a maintainer ignored for it on the dashboard."""
        with self.tx() as session:
            rows = session.execute(
                select(IgnoredFlag.recipe_path, IgnoredFlag.flag).where(
                    IgnoredFlag.bench_repo == bench_repo
                )
            ).all()
        found: dict[str, set[str]] = {}
        for recipe, flag in rows:
            found.setdefault(recipe, set()).add(flag)
        return {recipe: frozenset(flags) for recipe, flags in sorted(found.items())}

    def set_ignored(
        self, bench_repo: str, recipe_path: str, flag: str, *, ignored: bool, login: str
    ) -> bool:
        """Record or drop one ignore; True when the stored state changed."""
        with self.tx() as session:
            if ignored:
                return self._insert_ignore(
                    session,
                    IgnoredFlag,
                    {
                        "bench_repo": bench_repo,
                        "recipe_path": recipe_path,
                        "flag": flag,
                        "ignored_by": login,
                        "created_at": self.clock(),
                    },
                )
            result = session.execute(
                delete(IgnoredFlag).where(
                    IgnoredFlag.bench_repo == bench_repo,
                    IgnoredFlag.recipe_path == recipe_path,
                    IgnoredFlag.flag == flag,
                )
            )
            return bool(getattr(result, "rowcount", 0))

    # --- hunks dropped on an alignment PR (`/recipe-sync drop`) -----------------------------

    def dropped_hunks(self, bench_repo: str, bench_pr: int) -> dict[str, dict[str, str]]:
        """recipe path (``*``: every recipe file) → flag or env var → who dropped it."""
        return self._hunks(bench_repo, bench_pr, "drop")

    def added_hunks(self, bench_repo: str, bench_pr: int) -> dict[str, dict[str, str]]:
        """recipe path (``*``: every recipe file) → flag or env var → who asked to add it."""
        return self._hunks(bench_repo, bench_pr, "add")

    def _hunks(self, bench_repo: str, bench_pr: int, choice: str) -> dict[str, dict[str, str]]:
        with self.tx() as session:
            rows = session.execute(
                select(DroppedHunk.recipe_path, DroppedHunk.subject, DroppedHunk.dropped_by)
                .where(
                    DroppedHunk.bench_repo == bench_repo,
                    DroppedHunk.bench_pr == bench_pr,
                    DroppedHunk.choice == choice,
                )
                .order_by(DroppedHunk.id)
            ).all()
        found: dict[str, dict[str, str]] = {}
        for recipe, subject, login in rows:
            found.setdefault(recipe, {})[subject] = login
        return found

    def drop_hunk(
        self, bench_repo: str, bench_pr: int, recipe_path: str, subject: str, *, login: str
    ) -> bool:
        """Record one dropped hunk; True when it was not so already."""
        return self.choose_hunk(bench_repo, bench_pr, recipe_path, subject, "drop", login=login)

    def choose_hunk(
        self,
        bench_repo: str,
        bench_pr: int,
        recipe_path: str,
        subject: str,
        choice: str,
        *,
        login: str,
    ) -> bool:
        """Record a drop or an add of one hunk (an add replaces a drop and the other way
        round); True when the choice was not recorded yet."""
        values = {
            "bench_repo": bench_repo,
            "bench_pr": bench_pr,
            "recipe_path": recipe_path,
            "subject": subject,
            "dropped_by": login,
            "created_at": self.clock(),
            "choice": choice,
        }
        with self.tx() as session:
            if self._insert_ignore(session, DroppedHunk, values):
                return True
            result = session.execute(
                update(DroppedHunk)
                .where(
                    DroppedHunk.bench_repo == bench_repo,
                    DroppedHunk.bench_pr == bench_pr,
                    DroppedHunk.recipe_path == recipe_path,
                    DroppedHunk.subject == subject,
                    DroppedHunk.choice != choice,
                )
                .values(choice=choice, dropped_by=login, created_at=values["created_at"])
            )
            return bool(getattr(result, "rowcount", 0))

    def keep_hunk(
        self, bench_repo: str, bench_pr: int, recipe_path: str | None, subject: str
    ) -> bool:
        """Forget the choices (drop or add) of ``subject`` for ``recipe_path`` (and those for
        every file of the benchmark PR): back to recipe-sync's own judgement; ``None``: for
        every recipe file. True when one was recorded."""
        with self.tx() as session:
            where = [
                DroppedHunk.bench_repo == bench_repo,
                DroppedHunk.bench_pr == bench_pr,
                DroppedHunk.subject == subject,
            ]
            if recipe_path is not None:
                where.append(DroppedHunk.recipe_path.in_((recipe_path, "*")))
            result = session.execute(delete(DroppedHunk).where(*where))
            return bool(getattr(result, "rowcount", 0))

    # --- renamed repositories ----------------------------------------------------------------

    def record_rename(self, old: str, new: str) -> None:
        """GitHub calls the repository the service knew as ``old`` (or as what ``old`` was
        renamed from) ``new`` now. Records keep the first name; calls use the newest."""
        with self.tx() as session:
            first = session.scalar(
                select(RepositoryRename.old_name).where(RepositoryRename.new_name == old)
            )
            known = first or old
            if known == new:
                session.execute(delete(RepositoryRename).where(RepositoryRename.old_name == known))
                return
            row = session.get(RepositoryRename, known)
            if row is None:
                session.add(RepositoryRename(old_name=known, new_name=new, renamed_at=self.clock()))
            else:
                row.new_name, row.renamed_at = new, self.clock()

    def current_repo_name(self, name: str) -> str:
        """What GitHub calls the repository the service knows as ``name`` now."""
        with self.tx() as session:
            return (
                session.scalar(
                    select(RepositoryRename.new_name).where(RepositoryRename.old_name == name)
                )
                or name
            )

    def known_repo_name(self, name: str) -> str:
        """The name the service's records use for the repository GitHub now calls ``name``
        (a webhook of a renamed repository carries the new name)."""
        with self.tx() as session:
            return (
                session.scalar(
                    select(RepositoryRename.old_name).where(RepositoryRename.new_name == name)
                )
                or name
            )
