"""Unauthenticated abuse is refused cheaply: bodies before their signature is known are capped
per request and in total and not kept after the answer; idle connections cannot keep a
signed delivery out (timing and memory figures: ``python -m bench.abuse``)."""

from __future__ import annotations

import asyncio
import gc
import json
import signal
import socket
import subprocess
import sys
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.github.signature import sign
from bot.service.bodies import MAX_PAYLOAD, SMALL_BODY
from bot.service.boot import boot
from bot.service.runtime import Runtime
from bot.service.slots import ConnectionSlots
from bot.service.web import WebApp, create_app
from bot.settings import Settings
from tests.service.conftest import SECRET, free_port, wait_serving
from tests.service.test_service_limits import ROOT, _env
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


@dataclass(eq=False)
class Conn:
    busy: bool = False
    evicted: bool = False

    def evictable(self) -> bool:
        return not self.busy

    def evict(self) -> None:
        self.evicted = True


def test_slots_bound_each_address_and_make_room_for_a_newcomer() -> None:
    slots = ConnectionSlots(capacity=4, per_ip=2)
    a1, a2, a3 = Conn(), Conn(), Conn()
    assert slots.admit(a1, "10.0.0.1") and slots.admit(a2, "10.0.0.1")
    assert not slots.admit(a3, "10.0.0.1")  # the address has its two
    b1, b2 = Conn(busy=True), Conn()
    assert slots.admit(b1, "10.0.0.2") and slots.admit(b2, "10.0.0.2")
    # full: the oldest connection without a complete request makes room
    delivery = Conn()
    assert slots.admit(delivery, "10.0.0.3") and a1.evicted and len(slots) == 4
    assert slots.admit(a3, "10.0.0.1")  # a1's slot and its address's count are free again
    assert a2.evicted and not b1.evicted
    for conn in (b2, delivery, a3):
        conn.busy = True
    assert not slots.admit(Conn(), "10.0.0.4")  # every slot busy with a request: refused
    slots.release(b1)
    assert slots.admit(Conn(), "10.0.0.4")


def _hold(port: int, source: str) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def _refused(sock: socket.socket) -> bool:
    sock.settimeout(0.5)
    try:
        return sock.recv(100).startswith(b"HTTP/1.1 503")
    except TimeoutError:
        return False  # held open: not refused


@pytest.mark.slow
def test_a_signed_delivery_gets_in_while_idle_connections_are_held(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--no-consumer", "--port", str(port),
             "--limit-concurrency", "16", "--connections-per-ip", "6",
             "--header-timeout", "120", "--log-level", "warning"],
            cwd=ROOT, env=_env(tmp_path, RECIPE_SYNC_WEBHOOK_SECRET=SECRET),
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    held: list[socket.socket] = []
    try:
        wait_serving(f"http://127.0.0.1:{port}/healthz", proc, log)
        # one address past its bound: the extra connections are refused at once
        held += [_hold(port, "127.0.0.2") for _ in range(10)]
        assert [_refused(s) for s in held] == [False] * 6 + [True] * 4
        # 30 more silent ones from five other addresses, past the capacity of 16
        held += [_hold(port, f"127.0.0.{3 + i % 5}") for i in range(30)]
        body, headers = signed()
        with _hold(port, "127.0.0.1") as sock:
            head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            sock.sendall(
                f"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
                f"{head}Connection: close\r\n\r\n".encode()
                + body
            )
            sock.settimeout(30)
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 202"), answer
    finally:
        for sock in held:
            sock.close()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
