"""The webhook ack's one durable write, committed in groups.

Every accepted delivery is recorded (a unique insert of its ``X-GitHub-Delivery`` id) and
enqueued before GitHub gets its 202. Done one delivery at a time, a burst queued behind a
transaction per delivery (2,000 deliveries at concurrency 64 on 2 CPUs: p99 ~190 ms on
PostgreSQL). :class:`AckGroups` commits the deliveries that arrive while the previous group
is being written as one group instead (group commit): one transaction, one round trip, then
one enqueue per delivery, each request still answered only after its own record and enqueue.
One group is in flight at a time, in one thread off the event loop (SQLite admits one writer
anyway; a group takes ~1 ms on PostgreSQL).

The process can die between the insert and the enqueue. A delivery is marked ``queued``
once its enqueue succeeded, so one still ``received`` never reached the queue: GitHub's
redelivery of it (same id) is enqueued again rather than answered "duplicate", and the
reconciler enqueues it after ``UNQUEUED_AFTER`` seconds without one
(:mod:`bot.service.reconcile`). Enqueued twice (a redelivery racing the original's enqueue
in another process) is harmless: one worker takes a delivery (``Store.start_delivery``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from bot.service.events import Event, event_json
from bot.service.runtime import Runtime
from bot.state.records import DeliveryClaim

UNQUEUED_AFTER = 10.0  # seconds: longer than any insert→enqueue gap of a live process
log = logging.getLogger("recipe_sync.ack")
MAX_GROUP = 200  # deliveries per transaction: bounds one statement's size


def accept_group(rt: Runtime, claims: Sequence[DeliveryClaim]) -> list[str | Exception]:
    """:func:`record_and_enqueue`, then mark the accepted deliveries queued."""
    outcomes = record_and_enqueue(rt, claims)
    mark_queued(rt, accepted_ids(claims, outcomes))
    return outcomes


def accepted_ids(
    claims: Sequence[DeliveryClaim], outcomes: Sequence[str | BaseException]
) -> list[str]:
    return [c.delivery_id for c, o in zip(claims, outcomes, strict=True) if o == "accepted"]


def record_and_enqueue(rt: Runtime, claims: Sequence[DeliveryClaim]) -> list[str | Exception]:
    """Record and enqueue ``claims``; per claim 'accepted', 'duplicate' (claimed before, or
    earlier in this group) or the exception the enqueue raised (those claims are undone, so
    GitHub's retries are accepted). A failed insert raises: no claim of the group was made."""
    claimed = rt.store.deliveries.claim_all(claims)
    outcomes: list[str | Exception] = []
    to_enqueue: list[str] = []
    seen: set[str] = set()
    for claim in claims:
        delivery_id = claim.delivery_id
        if delivery_id in seen:  # a second copy in this group
            outcomes.append("duplicate")
            continue
        seen.add(delivery_id)
        if delivery_id not in claimed and not rt.store.deliveries.reclaim_unqueued(delivery_id):
            outcomes.append("duplicate")
            continue
        to_enqueue.append(delivery_id)
        outcomes.append("accepted")
    if to_enqueue:
        try:
            rt.enqueue_deliveries(to_enqueue)
        except Exception as err:
            for delivery_id in to_enqueue:
                rt.store.deliveries.unclaim(delivery_id)
            return [err if outcome == "accepted" else outcome for outcome in outcomes]
    return outcomes


def mark_queued(rt: Runtime, delivery_ids: Sequence[str]) -> None:
    """Record that the deliveries reached the queue. A failure only costs a second enqueue
    by the reconciler (harmless), so the deliveries stay accepted."""
    try:
        rt.store.deliveries.mark_queued(delivery_ids)
    except Exception as err:
        log.warning("deliveries %s enqueued but not marked queued: %s", delivery_ids, err)


@dataclass
class _Waiting:
    claim: DeliveryClaim
    answer: asyncio.Future[str]


@dataclass
class AckGroups:
    """Group commit for the ack: requests wait on their own outcome; at most one group is
    being written, and whatever arrived meanwhile is the next group."""

    rt: Runtime
    writer: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="ack")
    )
    _waiting: list[_Waiting] = field(default_factory=list)
    _writing: bool = False

    async def accept(self, delivery_id: str, event: str, trigger: Event) -> str:
        """'accepted' or 'duplicate' once recorded and enqueued; raises if either failed."""
        claim = DeliveryClaim(delivery_id, event, trigger.action, trigger.repo, event_json(trigger))
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Waiting(claim, answer))
        if not self._writing:
            self._write_next()
        return await answer

    def _write_next(self) -> None:
        group, self._waiting = self._waiting[:MAX_GROUP], self._waiting[MAX_GROUP:]
        loop = asyncio.get_running_loop()
        claims = [waiting.claim for waiting in group]

        def write() -> None:
            """Record + enqueue, answer the group, then mark it queued: the mark is not
            on the answer's path (the next group waits for it in this thread)."""
            try:
                outcomes: Sequence[str | BaseException] = record_and_enqueue(self.rt, claims)
            except Exception as err:
                outcomes = [err] * len(claims)
            if not loop.is_closed():  # a group finishing after shutdown has nobody to answer
                loop.call_soon_threadsafe(self._written, group, outcomes)
            mark_queued(self.rt, accepted_ids(claims, outcomes))

        try:
            self.writer.submit(write)
        except RuntimeError as err:  # the writer was shut down: the app is stopping
            self._written(group, [err] * len(group))
            return
        self._writing = True

    def _written(self, group: list[_Waiting], outcomes: Sequence[str | BaseException]) -> None:
        self._writing = False
        for waiting, outcome in zip(group, outcomes, strict=True):
            if waiting.answer.done():  # the client went away; the delivery stands
                continue
            if isinstance(outcome, BaseException):
                waiting.answer.set_exception(outcome)
            else:
                waiting.answer.set_result(outcome)
        if self._waiting:
            self._write_next()

    def close(self) -> None:
        self.writer.shutdown(wait=False)
