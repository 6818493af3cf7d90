"""Run Huey consumers: in-process threads (``serve``) or the blocking worker (``worker``)."""

from __future__ import annotations

import logging
from typing import Any

from huey.consumer import Consumer

from bot.service.outage import Outage, guard_queue
from bot.service.reconcile import Reconciler
from bot.service.runtime import Runtime

log = logging.getLogger("recipe_sync.consumer")


class _ThreadedConsumer(Consumer):  # type: ignore[misc]
    """A consumer that runs beside a web server: no signal handlers (the server owns them)."""

    def _set_signal_handlers(self) -> None:
        pass


# how either consumer runs tasks; periodic: the nightly dashboard refresh (claimed once a day)
_CONSUMER: dict[str, Any] = {
    "worker_type": "thread",
    "periodic": True,
    "initial_delay": 0.05,
    "max_delay": 1.0,
}


class EmbeddedConsumer:
    def __init__(self, rt: Runtime, workers: int = 2) -> None:
        self.rt = rt
        self.consumer = _ThreadedConsumer(
            rt.huey, workers=workers, check_worker_health=False, **_CONSUMER
        )
        self.reconciler = Reconciler(rt)
        guard_queue(rt.huey, Outage("queue", log, rt.metrics))

    def start(self) -> EmbeddedConsumer:
        self.consumer.start()
        self.reconciler.start()
        log.info("embedded consumer started (%s threads)", self.consumer.workers)
        return self

    def stop(self) -> None:
        self.reconciler.stop()
        self.consumer.stop(graceful=True)


def run_worker(rt: Runtime, workers: int, **options: Any) -> None:
    """Blocking consumer for ``recipe-sync worker`` (SIGINT: finish tasks, SIGTERM: stop)."""
    guard_queue(rt.huey, Outage("queue", log, rt.metrics))
    reconciler = Reconciler(rt).start()
    try:
        consumer = Consumer(rt.huey, workers=workers, **_CONSUMER, **options)
        consumer.run()
    finally:
        reconciler.stop()
