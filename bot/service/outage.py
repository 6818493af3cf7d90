"""The database or the queue is unreachable: one log line per outage, back-off, no tracebacks.

Without this, every worker thread's poll logged a traceback (Redis down: ~200 a minute) and
a PostgreSQL that is down at start printed a 130-line traceback. :class:`Outage` logs one
line when an outage starts (the error's type and first line, never a traceback) and one when
it ends, and gives the back-off delay before the next try.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from bot.service.metrics import Metrics

MAX_BACKOFF = 5.0  # seconds: short enough for a prompt recovery and shutdown


def describe(err: BaseException) -> str:
    """``Type: first line of the message`` (bounded; driver errors span many lines)."""
    lines = str(err).strip().splitlines()
    first = lines[0][:200] if lines else ""
    return f"{type(err).__name__}: {first}" if first else type(err).__name__


class Outage:
    def __init__(
        self,
        backend: str,
        log: logging.Logger,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.backend = backend
        self.log = log
        self.metrics = metrics
        self.clock = clock
        self.since: float | None = None
        self.failures = 0
        self._lock = threading.Lock()

    def failed(self, err: BaseException) -> float:
        """Record a failure; logs only the first of an outage. Returns the back-off delay."""
        with self._lock:
            self.failures += 1
            if self.since is None:
                self.since = self.clock()
                if self.metrics is not None:
                    self.metrics.outages.labels(self.backend).inc()
                self.log.error(
                    "%s unreachable: %s (retrying with back-off; logged once per outage)",
                    self.backend,
                    describe(err),
                )
            return float(min(MAX_BACKOFF, 0.25 * 2 ** min(self.failures, 8)))

    def ok(self) -> None:
        if self.since is None:
            return
        with self._lock:
            if self.since is not None:
                self.log.warning(
                    "%s reachable again after %.0f s", self.backend, self.clock() - self.since
                )
            self.since = None
            self.failures = 0


def guard_queue(huey: Any, outage: Outage, sleep: Callable[[float], None] = time.sleep) -> None:
    """Make the consumer's polls outage-aware: a failed ``dequeue`` / ``read_schedule`` logs
    once per outage, backs off, and reports "nothing to do" instead of raising (Huey would
    log a traceback per poll and per thread)."""
    storage = huey.storage
    dequeue, read_schedule = storage.dequeue, storage.read_schedule

    def guarded_dequeue() -> Any:
        try:
            item = dequeue()
        except Exception as err:
            sleep(outage.failed(err))
            return None
        outage.ok()
        return item

    def guarded_read_schedule(timestamp: Any) -> Any:
        try:
            items = read_schedule(timestamp)
        except Exception as err:
            sleep(outage.failed(err))
            return []
        outage.ok()
        return items

    storage.dequeue = guarded_dequeue
    storage.read_schedule = guarded_read_schedule
