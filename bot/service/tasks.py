"""Huey tasks: ``handle_delivery`` (dispatch) and ``run_sync`` (the sync job).

Retries are counted in the store, not by Huey: a transient failure (GitHub 5xx/network,
rate limit, missing credentials, engine not installed) gives the work back and reschedules
it with exponential backoff (or GitHub's ``Retry-After``); after ``MAX_ATTEMPTS`` it is
marked failed with the error. A failed delivery can be redelivered from GitHub; a failed
sync runs again on the next trigger.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from typing import Any

from huey.exceptions import RetryTask

from bot.contract import EngineUnavailable
from bot.errors import RecipeSyncError
from bot.github.errors import CredentialsInvalid, HeadMoved, LeaseLost, TransientGitHubError
from bot.service.dashboard import register_dashboard, request_dashboard
from bot.service.dispatch import dispatch
from bot.service.events import event_from_json
from bot.service.runtime import Runtime, Tasks
from bot.service.sync import Heartbeat, execute
from bot.settings import CredentialsMissing
from bot.state.states import SyncState

log = logging.getLogger("recipe_sync.jobs")

MAX_ATTEMPTS = 6
BASE_DELAY = 15.0
MAX_DELAY = 900.0
RETRYABLE = (TransientGitHubError, CredentialsMissing, EngineUnavailable)


def backoff(attempt: int, err: BaseException) -> float:
    hinted: object = getattr(err, "retry_after", None)
    if isinstance(hinted, int | float) and hinted > 0:
        return float(hinted)
    exponent: int = max(0, attempt - 1)
    return min(MAX_DELAY, BASE_DELAY * float(2**exponent))


def run_delivery(rt: Runtime, delivery_id: str) -> str:
    found = rt.store.deliveries.get(delivery_id)
    if found is None:
        return "unknown delivery"
    _, status, trigger_json = found
    if status in ("done", "failed"):
        return f"already {status}"
    # one worker at a time (a redelivery or the reconciler may have enqueued it twice)
    if not rt.store.deliveries.start(delivery_id, rt.settings.stale_after_seconds):
        return "being processed elsewhere"
    trigger = event_from_json(trigger_json)
    started = time.perf_counter()
    try:
        with DeliveryHeartbeat(rt, delivery_id):
            account = dispatch(rt, trigger)
    except RETRYABLE as err:
        attempts = rt.store.deliveries.attempts(delivery_id)
        log.error("delivery %s (%s): %s", delivery_id, trigger.kind, err)
        rt.metrics.jobs.labels("delivery", "retry").observe(time.perf_counter() - started)
        if attempts >= MAX_ATTEMPTS:
            rt.store.deliveries.set_status(delivery_id, "failed", str(err))
            return f"failed: {err}"
        rt.store.deliveries.set_status(delivery_id, "enqueued", str(err))
        raise RetryTask(str(err), delay=backoff(attempts, err)) from err
    except RecipeSyncError as err:
        if isinstance(err, CredentialsInvalid):
            rt.metrics.credentials_invalid.set(1)
        log.error("delivery %s (%s) failed: %s", delivery_id, trigger.kind, err)
        rt.store.deliveries.set_status(delivery_id, "failed", str(err))
        rt.metrics.jobs.labels("delivery", "failed").observe(time.perf_counter() - started)
        return f"failed: {err}"
    except Exception as err:  # a bug: a bounded number of retries, then failed with the reason
        detail = "".join(traceback.format_exception_only(err)).strip()[:500]
        log.exception("delivery %s (%s) crashed", delivery_id, trigger.kind)
        rt.metrics.jobs.labels("delivery", "error").observe(time.perf_counter() - started)
        attempts = rt.store.deliveries.attempts(delivery_id)
        if attempts >= MAX_ATTEMPTS:
            rt.store.deliveries.set_status(delivery_id, "failed", detail)
            return f"failed: {detail}"
        rt.store.deliveries.set_status(delivery_id, "enqueued", detail)
        raise RetryTask(detail, delay=backoff(attempts, err)) from err
    rt.store.deliveries.set_status(delivery_id, "done", account)
    rt.metrics.jobs.labels("delivery", "done").observe(time.perf_counter() - started)
    log.info("delivery %s (%s %s): %s", delivery_id, trigger.kind, trigger.serial_key, account)
    return account


class DeliveryHeartbeat:
    """Touches a delivery while it is dispatched, so one whose worker died is recognised by
    its silence (``RECIPE_SYNC_STALE_AFTER``) and resumed in seconds, not after a sweep."""

    def __init__(self, rt: Runtime, delivery_id: str) -> None:
        self.rt = rt
        self.delivery_id = delivery_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="delivery-heartbeat", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.rt.settings.heartbeat_seconds):
            try:
                self.rt.store.deliveries.touch(self.delivery_id)
            except Exception:  # a DB hiccup: try again on the next beat
                log.warning("heartbeat of delivery %s failed", self.delivery_id)

    def __enter__(self) -> DeliveryHeartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def run_sync(rt: Runtime, sync_id: int) -> str:
    lease = rt.store.syncs.acquire(sync_id, rt.owner, rt.settings.stale_after_seconds)
    if lease is None:
        return "not pending (done, or running elsewhere)"
    started = time.perf_counter()
    outcome = "done"
    requeue = False
    try:
        with Heartbeat(rt, sync_id) as heartbeat:
            report = execute(rt, lease, heartbeat)
        outcome = report.status
        request_dashboard(rt, lease.bench_repo)  # opt-in; coalesced; never raises
        requeue = rt.store.syncs.finish(sync_id, rt.owner, result=report.status)
        return report.status
    except HeadMoved as err:
        outcome = "superseded"
        log.info("sync %s superseded: %s", sync_id, err)
        requeue = rt.store.syncs.finish(sync_id, rt.owner, result=f"superseded: {err}")
        return "superseded"
    except LeaseLost as err:
        outcome = "lease-lost"
        log.warning("sync %s: %s", sync_id, err)
        return "lease lost"
    except RETRYABLE as err:
        outcome = "retry"
        log.error("sync %s attempt %s: %s", sync_id, lease.attempts, err)
        if lease.attempts >= MAX_ATTEMPTS:
            outcome = "failed"
            requeue = rt.store.syncs.finish(
                sync_id, rt.owner, state=SyncState.FAILED, error=str(err)
            )
            return f"failed: {err}"
        rt.store.syncs.release_for_retry(sync_id, rt.owner, str(err))
        raise RetryTask(str(err), delay=backoff(lease.attempts, err)) from err
    except RecipeSyncError as err:
        outcome = "failed"
        log.error("sync %s failed: %s", sync_id, err)
        requeue = rt.store.syncs.finish(sync_id, rt.owner, state=SyncState.FAILED, error=str(err))
        return f"failed: {err}"
    except Exception as err:  # a bug, or an unexpected outage: retry a few times, then fail
        outcome = "error"
        log.exception("sync %s crashed", sync_id)
        detail = "".join(traceback.format_exception_only(err)).strip()
        if lease.attempts >= MAX_ATTEMPTS:
            requeue = rt.store.syncs.finish(sync_id, rt.owner, state=SyncState.FAILED, error=detail)
            return f"failed: {detail}"
        rt.store.syncs.release_for_retry(sync_id, rt.owner, detail)
        raise RetryTask(detail, delay=backoff(lease.attempts, err)) from err
    finally:
        rt.metrics.jobs.labels("sync", outcome).observe(time.perf_counter() - started)
        if requeue:
            rt.enqueue_sync(sync_id)


def register(rt: Runtime) -> Tasks:
    huey = rt.huey

    @huey.task(name="recipe_sync.handle_delivery")  # type: ignore[untyped-decorator]
    def handle_delivery(delivery_id: str) -> Any:
        return run_delivery(rt, delivery_id)

    @huey.task(name="recipe_sync.run_sync")  # type: ignore[untyped-decorator]
    def run_sync_task(sync_id: int) -> Any:
        return run_sync(rt, sync_id)

    refresh_dashboard, nightly_dashboard = register_dashboard(rt)
    return Tasks(
        handle_delivery=handle_delivery,
        run_sync=run_sync_task,
        refresh_dashboard=refresh_dashboard,
        nightly_dashboard=nightly_dashboard,
    )
