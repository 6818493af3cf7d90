"""Unauthenticated abuse is refused cheaply: bodies before their signature is known are capped
per request and in total and not kept after the answer (timing and memory figures:
``python -m bench.abuse``)."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.github.signature import sign
from bot.service.bodies import MAX_PAYLOAD, SMALL_BODY
from bot.service.boot import boot
from bot.service.runtime import Runtime
from bot.service.web import WebApp, create_app
from bot.settings import Settings
from tests.service.conftest import SECRET
from tests.service.test_service_webhook import labeled

MiB = 1024 * 1024
Receive = Callable[[], Awaitable[dict[str, Any]]]


@pytest.fixture
def rt(tmp_path: Path) -> Iterator[Runtime]:
    runtime = boot(Settings(webhook_secret=SECRET, data_dir=tmp_path / "data"))
    yield runtime
    runtime.close()


def endless(chunk: int = MiB) -> tuple[Receive, list[int]]:
    """A chunked body that never ends (an attacker's); ``sent[0]``: bytes handed over."""
    sent = [0]
    data = b"x" * chunk

    async def receive() -> dict[str, Any]:
        if sent[0] > 2 * MAX_PAYLOAD:
            raise AssertionError("the server went on reading past the cap")
        sent[0] += len(data)
        return {"type": "http.request", "body": data, "more_body": True}

    return receive, sent


def whole(body: bytes) -> Receive:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def call(app: WebApp, receive: Receive, headers: dict[str, str] | None = None) -> int:
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/webhooks/github",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "query_string": b"",
    }
    statuses: list[int] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    await app(scope, receive, send)
    return statuses[0]


def signed() -> tuple[bytes, dict[str, str]]:
    body = json.dumps(labeled()).encode()
    return body, {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(SECRET, body),
    }


def test_an_oversize_chunked_body_is_413_and_not_kept(rt: Runtime) -> None:
    app = create_app(rt)
    receive, sent = endless()
    gc.collect()
    gc.disable()  # what stays must not depend on a collection happening to run
    tracemalloc.start()
    try:
        status = asyncio.run(call(app, receive, {"X-GitHub-Event": "pull_request"}))
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
    assert status == 413
    assert sent[0] <= MAX_PAYLOAD + MiB  # discarded as it streams: never read whole
    assert peak < MAX_PAYLOAD + 8 * MiB  # never more than the cap held at once
    assert kept < 4 * MiB  # and freed with the answer, not held by the exception's frames


def test_bodies_share_a_budget_and_a_small_delivery_always_fits(rt: Runtime) -> None:
    app = create_app(rt, body_memory=MiB)

    async def scenario() -> tuple[int, int, int, int]:
        # a slow large body holds the whole budget beyond its first SMALL_BODY bytes...
        held = asyncio.Event()
        release = asyncio.Event()
        parts = [b"x" * SMALL_BODY, b"x" * MiB]

        async def slow() -> dict[str, Any]:
            if parts:
                return {"type": "http.request", "body": parts.pop(0), "more_body": True}
            held.set()
            await release.wait()
            return {"type": "http.disconnect"}  # ...and then goes away

        slow_call = asyncio.create_task(call(app, slow))
        await held.wait()
        refused = await call(app, whole(b"y" * (SMALL_BODY + 1024)))  # needs the budget: 503
        body, headers = signed()
        accepted = await call(app, whole(body), headers)  # a delivery of tens of KB: 202
        release.set()
        gone = await slow_call
        body, headers = signed()
        return refused, accepted, gone, await call(app, whole(body), headers)

    refused, accepted, gone, after = asyncio.run(scenario())
    assert (refused, accepted, gone, after) == (503, 202, 400, 202)
