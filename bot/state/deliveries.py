"""Webhook deliveries: claimed by their id before anything runs, then received → queued →
processing → done | failed (``enqueued``: a retry is scheduled)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, func, select, update
from sqlalchemy.exc import DBAPIError

from bot.state.db import Database
from bot.state.models import (
    Delivery,
)
from bot.state.records import DeliveryClaim


class Deliveries:
    """The deliveries table: claims, heartbeats and statuses."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def claim(self, delivery_id: str, *, event: str, action: str, repo: str, trigger: str) -> bool:
        """Claim one delivery id atomically; False when it was already claimed (a replay)."""
        claim = DeliveryClaim(delivery_id, event, action, repo, trigger)
        return delivery_id in self.claim_all([claim])

    def claim_all(self, claims: Sequence[DeliveryClaim]) -> set[str]:
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
        now = self.db.clock()
        # Core on one connection, not an ORM session: this is the webhook ack's only write.
        # Each statement is atomic alone (the UPDATE re-checks ``failed``), so PostgreSQL runs
        # them in autocommit: one round trip instead of BEGIN, INSERT, COMMIT (the ack waited
        # on three). SQLite keeps its BEGIN IMMEDIATE (local, and the driver's own mode).
        if self.db.single_writer:
            with self.db.engine.begin() as conn:
                return self._claim_on(conn, claims, now)
        with self.db.autocommit.connect() as conn:
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
        claimed = {row[0] for row in conn.execute(self.db.insert_ignore_statement(Delivery), rows)}
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

    def unclaim(self, delivery_id: str) -> None:
        """Forget a claim whose enqueue failed, so GitHub's retry is accepted."""
        with self.db.tx() as session:
            row = session.get(Delivery, delivery_id)
            if row is not None and row.status == "received":
                session.delete(row)

    def mark_queued(self, delivery_ids: Sequence[str]) -> None:
        """The deliveries reached the queue: ``received`` → ``queued`` (one statement)."""
        if not delivery_ids:
            return
        with self.db.tx() as session:
            session.execute(
                update(Delivery)
                .where(Delivery.delivery_id.in_(delivery_ids), Delivery.status == "received")
                .values(status="queued")
            )

    def reclaim_unqueued(self, delivery_id: str) -> bool:
        """A redelivery of a delivery that was recorded but never reached the queue (its
        process died between the insert and the enqueue): True → enqueue it again."""
        with self.db.tx() as session:
            result: Any = session.execute(
                update(Delivery)
                .where(Delivery.delivery_id == delivery_id, Delivery.status == "received")
                .values(updated_at=self.db.clock())
            )
            return bool(result.rowcount == 1)

    def unqueued(self, older_than: float) -> list[str]:
        """Deliveries recorded ``older_than`` seconds ago that never reached the queue;
        each is touched, so one reconciler pass takes it (the caller enqueues it)."""
        now = self.db.clock()
        with self.db.tx() as session:
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

    def start(self, delivery_id: str, stale_after: float) -> bool:
        """Take a delivery for processing (one worker at a time); a ``processing`` one whose
        heartbeat (``updated_at``) is older than ``stale_after`` was left by a dead worker."""
        now = self.db.clock()
        with self.db.tx() as session:
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

    def touch(self, delivery_id: str) -> None:
        """Heartbeat of a delivery being processed."""
        with self.db.tx() as session:
            session.execute(
                update(Delivery)
                .where(Delivery.delivery_id == delivery_id, Delivery.status == "processing")
                .values(updated_at=self.db.clock())
            )

    def stale_processing(self, stale_after: float) -> list[str]:
        """Deliveries whose worker stopped heart-beating (killed mid-dispatch)."""
        cutoff = self.db.clock() - stale_after
        with self.db.tx() as session:
            return list(
                session.scalars(
                    select(Delivery.delivery_id).where(
                        Delivery.status == "processing", Delivery.updated_at < cutoff
                    )
                )
            )

    def set_status(self, delivery_id: str, status: str, error: str | None = None) -> None:
        with self.db.tx() as session:
            session.execute(
                update(Delivery)
                .where(Delivery.delivery_id == delivery_id)
                .values(
                    status=status,
                    error=error,
                    updated_at=self.db.clock(),
                    attempts=Delivery.attempts + (1 if status == "processing" else 0),
                )
            )

    def get(self, delivery_id: str) -> tuple[str, str, str] | None:
        """(event, status, trigger JSON) of a delivery."""
        with self.db.tx() as session:
            row = session.get(Delivery, delivery_id)
            return None if row is None else (row.event, row.status, row.trigger)

    def count(self) -> int:
        with self.db.tx() as session:
            return int(session.scalar(select(func.count()).select_from(Delivery)) or 0)

    def unfinished(self, older_than: float) -> list[str]:
        """Deliveries accepted but not processed for ``older_than`` seconds (lost enqueue)."""
        cutoff = self.db.clock() - older_than
        with self.db.tx() as session:
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
                    .values(updated_at=self.db.clock())
                )
            return ids

    def attempts(self, delivery_id: str) -> int:
        """How often a delivery was taken for processing."""
        with self.db.tx() as session:
            return int(
                session.scalar(select(Delivery.attempts).where(Delivery.delivery_id == delivery_id))
                or 0
            )
