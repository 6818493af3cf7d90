"""Resume work a dead worker left behind.

Huey drops a task from the queue when a worker takes it, so a worker killed mid-job loses
it. The reconciler runs in every consumer process (several at once is fine: each requeue is
one conditional update, only one process wins it):

* a ``running`` sync whose heartbeat is older than ``RECIPE_SYNC_STALE_AFTER`` → pending,
  enqueued again (same generation: the resumed run finds what the dead one already did);
* a ``processing`` delivery whose heartbeat is older than ``RECIPE_SYNC_STALE_AFTER`` →
  enqueued again (:meth:`Store.start_delivery` lets exactly one worker take it);
* a delivery recorded but never queued (the web process died between the insert and the
  enqueue) for ``UNQUEUED_AFTER`` seconds → enqueued (within a minute of its arrival);
* a ``pending`` sync or an unprocessed delivery untouched for longer than any retry delay
  (its enqueue was lost) → enqueued again.
"""

from __future__ import annotations

import logging
import threading

from bot.service.ack import UNQUEUED_AFTER, mark_queued
from bot.service.outage import Outage
from bot.service.runtime import Runtime
from bot.service.tasks import MAX_DELAY

log = logging.getLogger("recipe_sync.reconcile")


def reconcile_once(rt: Runtime) -> dict[str, list[int] | list[str]]:
    stale = rt.settings.stale_after_seconds
    resumed = rt.store.syncs.requeue_stale(stale)
    lost = rt.store.syncs.lost_pending(MAX_DELAY + stale)
    deliveries = rt.store.deliveries.unfinished(MAX_DELAY + stale)
    unqueued = [d for d in rt.store.deliveries.unqueued(UNQUEUED_AFTER) if d not in deliveries]
    deliveries += unqueued
    # a worker killed mid-dispatch: its heartbeat stopped (seconds, not the sweep above)
    deliveries += [d for d in rt.store.deliveries.stale_processing(stale) if d not in deliveries]
    for sync_id in [*resumed, *lost]:
        rt.enqueue_sync(sync_id)
    for delivery_id in deliveries:
        rt.enqueue_delivery(delivery_id)
    mark_queued(rt, deliveries)
    if resumed or lost or deliveries:
        log.warning(
            "reconciler: resumed syncs %s, re-enqueued syncs %s, deliveries %s",
            resumed,
            lost,
            deliveries,
        )
    return {"resumed": resumed, "lost": lost, "deliveries": deliveries}


class Reconciler:
    """Runs :func:`reconcile_once` at start and then every ``interval`` seconds."""

    def __init__(self, rt: Runtime, interval: float | None = None) -> None:
        self.rt = rt
        self.outage = Outage("database or queue (reconciler)", log, rt.metrics)
        self.interval = interval or max(1.0, min(rt.settings.stale_after_seconds / 2, 30.0))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reconciler", daemon=True)

    def _run(self) -> None:
        while True:
            delay = self.interval
            try:
                reconcile_once(self.rt)
                self.outage.ok()
            except Exception as err:  # an outage: one line per outage, not per pass
                delay = min(self.interval, self.outage.failed(err))
            if self._stop.wait(delay):
                return

    def start(self) -> Reconciler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
