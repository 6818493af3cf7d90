"""The FastAPI app: ``POST /webhooks/github``, ``/healthz``, ``/readyz``, ``/metrics``.

A delivery is acknowledged in milliseconds: verify the HMAC over the raw body (before
parsing anything), classify the event (allow-list, self-loop guard), claim the
``X-GitHub-Delivery`` id with a unique insert (replays and redeliveries of a processed
delivery answer 200 "duplicate"), enqueue one small job, answer 202. All GitHub work happens
in the job.
"""

from __future__ import annotations

import json
import logging
import re
import time

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from bot.github.signature import verify
from bot.service.dashboard import dashboard_page
from bot.service.queue import ping as ping_queue
from bot.service.runtime import Runtime
from bot.service.triggers import Ignored, PayloadError, Trigger, classify

log = logging.getLogger("recipe_sync.web")

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")  # an owner or repository name (no path tricks)
MAX_PAYLOAD = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB


def accept(rt: Runtime, delivery_id: str, event: str, trigger: Trigger) -> str:
    """Claim the delivery and enqueue its job; 'duplicate' when it was already claimed."""
    claimed = rt.store.claim_delivery(
        delivery_id,
        event=event,
        action=trigger.action,
        repo=trigger.repo,
        trigger=trigger.to_json(),
    )
    if not claimed:
        return "duplicate"
    try:
        rt.enqueue_delivery(delivery_id)
    except Exception:
        rt.store.unclaim_delivery(delivery_id)  # let GitHub's retry through
        raise
    return "accepted"


def create_app(rt: Runtime) -> FastAPI:
    secret = rt.settings.require_webhook_secret()
    policy = rt.policy
    metrics = rt.metrics
    app = FastAPI(title="recipe-sync", docs_url=None, redoc_url=None, openapi_url=None)

    def answer(event: str, outcome: str, status: int, started: float, **body: str) -> JSONResponse:
        metrics.deliveries.labels(event or "-", outcome).inc()
        metrics.ack_seconds.observe(time.perf_counter() - started)
        return JSONResponse({"status": outcome, **body}, status_code=status)

    @app.post("/webhooks/github")
    async def webhook(request: Request) -> JSONResponse:
        started = time.perf_counter()
        event = request.headers.get("x-github-event", "")
        length = int(request.headers.get("content-length") or 0)
        if length > MAX_PAYLOAD:
            return answer(event, "bad_request", 413, started, error="payload too large")
        body = await request.body()
        if not verify(secret, body, request.headers.get("x-hub-signature-256")):
            return answer(
                event,
                "unauthorized",
                401,
                started,
                error="missing or invalid X-Hub-Signature-256",
            )
        delivery_id = request.headers.get("x-github-delivery", "")
        if not delivery_id or len(delivery_id) > 80 or not event:
            return answer(
                event,
                "bad_request",
                400,
                started,
                error="X-GitHub-Event and X-GitHub-Delivery headers are required",
            )
        try:
            payload = json.loads(body)
            result = classify(
                event,
                payload,
                trigger_label=policy.trigger_label,
                comment_command=policy.comment_command,
                bot_login=rt.settings.bot_login,
            )
        except (ValueError, PayloadError) as err:
            return answer(event, "bad_request", 400, started, error=f"unreadable payload: {err}")
        if isinstance(result, Ignored):
            return answer(event, "ignored", 200, started, reason=result.reason)
        try:
            outcome = await run_in_threadpool(accept, rt, delivery_id, event, result)
        except Exception:
            log.exception("delivery %s could not be queued", delivery_id)
            return answer(event, "unavailable", 503, started, error="queue or database unavailable")
        status = 202 if outcome == "accepted" else 200
        return answer(event, outcome, status, started, delivery=delivery_id)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    def readyz() -> JSONResponse:
        problems = {}
        try:
            rt.store.ping()
        except Exception as err:
            problems["database"] = type(err).__name__
        try:
            ping_queue(rt.huey)
        except Exception as err:
            problems["queue"] = type(err).__name__
        if problems:
            return JSONResponse({"status": "unavailable", **problems}, status_code=503)
        return JSONResponse({"status": "ready"})

    @app.get("/dashboards/{owner}/{name}.html")
    def dashboard_html(owner: str, name: str) -> Response:
        """The latest HTML audit behind a dashboard issue (linked from its body)."""
        if not (_NAME.match(owner) and _NAME.match(name)):
            return Response("not found", status_code=404)
        page = dashboard_page(rt.settings.data_dir, f"{owner}/{name}")
        if not page.is_file():
            return Response("not found", status_code=404)
        return Response(page.read_text(encoding="utf-8"), media_type="text/html; charset=utf-8")

    @app.get("/metrics")
    def prometheus() -> Response:
        return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return app
