"""The FastAPI app: ``POST /webhooks/github``, ``/healthz``, ``/readyz``, ``/metrics``.

A delivery is acknowledged in milliseconds: read at most 25 MB of body (streamed, counted
as it arrives: a chunked body without Content-Length is cut off at the cap; bodies not yet
verified share a memory budget, :mod:`bot.service.bodies`), verify the HMAC
over the raw body (before parsing anything), parse it (orjson: not recursive, at most 1,024
levels; any malformed or wrongly typed input is a 4xx, never a 500), classify the event
(allow-list, self-loop guard), claim the ``X-GitHub-Delivery`` id with one unique insert
(replays answer 200 "duplicate"), enqueue one small job, answer 202 (:mod:`bot.service.ack`:
claims are committed in groups). All GitHub work happens in the job.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import weakref
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from bot.digits import is_integer
from bot.github.signature import verify
from bot.service.ack import AckGroups
from bot.service.bodies import (
    BODY_MEMORY,
    MAX_PAYLOAD,
    BodyBudget,
    OverBudget,
    TooLarge,
    read_capped,
)
from bot.service.dashboard import dashboard_page
from bot.service.events import Ignored
from bot.service.intake import ALLOWED, INSTALLATION_EVENTS, PayloadError, classify
from bot.service.outage import describe
from bot.service.queue import ping as ping_queue
from bot.service.runtime import Runtime
from bot.settings import CredentialsMissing

log = logging.getLogger("recipe_sync.web")

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")  # an owner or repository name (no path tricks)
BODY_TIMEOUT = 10.0  # seconds to receive the body (GitHub itself gives a delivery 10 s)


def json_content_type(value: str | None) -> bool:
    """GitHub sends ``application/json`` unless the hook is set to form encoding, whose
    ``payload=`` body we do not parse; an absent header is tolerated."""
    if value is None:
        return True
    return value.split(";", 1)[0].strip().lower() == "application/json"


def _header_ok(value: str, limit: int) -> bool:
    return 0 < len(value) <= limit and value.isascii() and value.isprintable()


def _clean(event: str) -> str:
    """The event as a metrics label: forged values must not grow the label set unboundedly."""
    return event if event in KNOWN_EVENTS else "other"


KNOWN_EVENTS = frozenset({*ALLOWED, *INSTALLATION_EVENTS, "ping"})


WEBHOOK_PATH = "/webhooks/github"


@dataclass(frozen=True)
class WebApp:
    """The service's ASGI app: ``POST /webhooks/github`` straight to its endpoint, the rest
    through FastAPI. FastAPI's middleware stack (error, exception, exit-stack and routing
    layers, each wrapping ``send``) was ~15% of the event loop's time per delivery, and the
    endpoint catches its own errors (every malformed input is a 4xx)."""

    webhook: Callable[[Request], Awaitable[Response]]
    api: FastAPI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == WEBHOOK_PATH:
            if scope["method"] == "POST":
                response = await self.webhook(Request(scope, receive))
            else:
                response = JSONResponse(
                    {"detail": "Method Not Allowed"}, status_code=405, headers={"Allow": "POST"}
                )
            await response(scope, receive, send)
        else:
            await self.api(scope, receive, send)


def create_app(
    rt: Runtime,
    *,
    body_timeout: float = BODY_TIMEOUT,
    body_memory: int = BODY_MEMORY,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]] | None = None,
) -> WebApp:
    secret = rt.settings.require_webhook_secret()
    policy = rt.policy
    metrics = rt.metrics
    budget = BodyBudget(body_memory)  # this process's unverified bodies beyond their first KBs
    acks = AckGroups(rt)  # the durable insert + enqueue, in groups, off the event loop
    app = FastAPI(
        title="recipe-sync", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    weakref.finalize(app, acks.close)  # the writer thread ends with the app

    def answer(event: str, outcome: str, status: int, started: float, **body: str) -> JSONResponse:
        metrics.deliveries.labels(_clean(event), outcome).inc()
        metrics.ack_seconds.observe(time.perf_counter() - started)
        return JSONResponse({"status": outcome, **body}, status_code=status)

    async def webhook(request: Request) -> JSONResponse:
        started = time.perf_counter()
        event = request.headers.get("x-github-event", "")
        if not json_content_type(request.headers.get("content-type")):
            return answer(
                event,
                "bad_request",
                415,
                started,
                error="Content-Type must be application/json (the webhook's content type: JSON)",
            )
        declared = request.headers.get("content-length") or "0"
        if not is_integer(declared) or len(declared) > 12:
            return answer(event, "bad_request", 400, started, error="invalid Content-Length")
        if int(declared) > MAX_PAYLOAD:
            return answer(event, "bad_request", 413, started, error="payload too large")
        try:
            # a timeout scope, not wait_for: its task would keep a refused request's frames,
            # and their last chunk, in a reference cycle with the exception until a collection
            async with asyncio.timeout(body_timeout):
                body = await read_capped(request, budget=budget)
        except TooLarge:
            return answer(event, "bad_request", 413, started, error="payload too large")
        except OverBudget:
            return answer(event, "busy", 503, started, error="too many large bodies at once")
        except TimeoutError:
            return answer(event, "bad_request", 408, started, error="request body too slow")
        except ClientDisconnect:  # gone, or displaced to make room (bot.service.slots)
            return answer(event, "bad_request", 400, started, error="client disconnected")
        if not verify(secret, body, request.headers.get("x-hub-signature-256")):
            return answer(
                event,
                "unauthorized",
                401,
                started,
                error="missing or invalid X-Hub-Signature-256",
            )
        delivery_id = request.headers.get("x-github-delivery", "")
        if not _header_ok(delivery_id, 80) or not _header_ok(event, 40):
            return answer(
                _clean(event),
                "bad_request",
                400,
                started,
                error="X-GitHub-Event and X-GitHub-Delivery headers are required",
            )
        try:
            # 2.3x faster than json on a 30 KB GitHub payload; its parser is not recursive and
            # refuses nesting deeper than 1,024 (a 400 below), and classify() reads fixed paths
            payload = orjson.loads(body)
            result = classify(
                event,
                payload,
                trigger_label=policy.trigger_label,
                comment_command=policy.comment_command,
                bot_login=rt.settings.bot_login,
            )
        except PayloadError as err:
            return answer(event, "bad_request", 400, started, error=f"unreadable payload: {err}")
        except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError too
            return answer(event, "bad_request", 400, started, error="payload is not JSON")
        del body  # its budget is already returned: do not hold it across the await below
        if isinstance(result, Ignored):
            return answer(event, "ignored", 200, started, reason=result.reason)
        try:
            outcome = await acks.accept(delivery_id, event, result)
        except Exception as err:
            # one line per refused delivery: a traceback would carry the SQL and its
            # parameters (the payload) and repeat for every delivery of the outage
            log.error(
                "delivery %s (%s) refused with 503: queue or database unavailable: %s",
                delivery_id,
                _clean(event),
                describe(err),
            )
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
        try:  # a server without credentials accepts deliveries, but no job can run
            rt.settings.require_credentials()
        except CredentialsMissing as err:
            problems["credentials"] = str(err)
        else:
            credentials = rt.connector.credentials_problem()
            metrics.credentials_invalid.set(1 if credentials else 0)
            if credentials:
                problems["credentials"] = credentials
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

    return WebApp(webhook, app)
