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
import time
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.github.signature import sign
from bot.service.bodies import MAX_PAYLOAD, SMALL_BODY
from bot.service.boot import boot
from bot.service.runtime import Runtime
from bot.service.slots import GITHUB_HOOK_RANGES, AddressPolicy, ConnectionSlots, Standing
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
    shown: Standing = Standing.SILENT
    evicted: bool = False

    def standing(self) -> Standing:
        return self.shown

    def evict(self) -> None:
        self.evicted = True


@dataclass
class Clock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


def test_below_capacity_every_connection_is_admitted_whatever_its_address() -> None:
    slots = ConnectionSlots(capacity=200)
    conns = [Conn() for _ in range(128)]
    assert all(slots.admit(c, "10.0.0.1") for c in conns)  # GitHub's burst, or a proxy
    assert len(slots) == 128 and not any(c.evicted for c in conns)


def test_a_full_server_displaces_the_least_shown_of_the_biggest_holder() -> None:
    clock = Clock()
    slots = ConnectionSlots(capacity=6, clock=clock)
    flood = [Conn() for _ in range(3)]
    for conn in flood:
        assert slots.admit(conn, "10.0.0.9")
    partial, signed, busy = Conn(Standing.PARTIAL), Conn(Standing.SIGNED), Conn(Standing.BUSY)
    for conn in (partial, signed, busy):
        assert slots.admit(conn, "10.0.0.2")
    clock.now += 5  # the flood's connections have shown nothing for 5 s
    delivery = Conn()
    assert slots.admit(delivery, "10.0.0.3")
    assert flood[0].evicted and not partial.evicted and not signed.evicted
    # the flooder holds its fair share (6 // 4) of stalling connections: refused, and
    # nobody is displaced for its reconnect
    assert not slots.admit(Conn(), "10.0.0.9")
    assert [c.evicted for c in flood] == [True, False, False]
    # a newcomer from elsewhere displaces the flood's silent ones before any request
    for _ in range(2):
        assert slots.admit(Conn(), "10.0.0.4")
    assert all(c.evicted for c in flood) and not partial.evicted
    assert slots.displaced == 3 and slots.refused == 1


def test_a_burst_that_just_connected_is_not_held_against_its_address() -> None:
    clock = Clock()
    slots = ConnectionSlots(capacity=8, clock=clock)
    flood = [Conn() for _ in range(8)]
    for index, conn in enumerate(flood):
        assert slots.admit(conn, f"10.0.1.{index % 2}")
    clock.now += 5
    burst = [Conn() for _ in range(6)]
    for conn in burst:  # all connected, none has sent its request yet
        assert slots.admit(conn, "10.0.0.1")
    assert not any(c.evicted for c in burst)  # the flood's old silent ones made room
    assert sum(c.evicted for c in flood) == 6


def test_every_connection_busy_with_a_request_refuses_the_newcomer() -> None:
    slots = ConnectionSlots(capacity=2)
    first, second = Conn(Standing.BUSY), Conn(Standing.BUSY)
    assert slots.admit(first, "10.0.0.1") and slots.admit(second, "10.0.0.2")
    assert not slots.admit(Conn(), "10.0.0.3")
    slots.release(first)
    assert slots.admit(Conn(), "10.0.0.3")


def test_github_and_trusted_proxies_are_never_refused_for_their_share() -> None:
    clock = Clock()
    policy = AddressPolicy.of(["10.9.0.0/16"], GITHUB_HOOK_RANGES)
    slots = ConnectionSlots(capacity=4, policy=policy, clock=clock)
    hooks = [Conn() for _ in range(4)]
    for conn in hooks:
        assert slots.admit(conn, "140.82.115.10")
    clock.now += 5
    assert slots.admit(Conn(), "140.82.115.11")  # GitHub again: displaces, never refused
    other = Conn()
    assert slots.admit(other, "203.0.113.7")
    clock.now += 5
    assert slots.admit(Conn(), "10.9.1.1")  # the proxy: displaces the other one first
    assert other.evicted


def test_x_forwarded_for_counts_only_from_a_trusted_proxy() -> None:
    policy = AddressPolicy.of(["10.9.0.0/16"], ())
    assert policy.client("203.0.113.7", "198.51.100.1") == "203.0.113.7"  # not a proxy
    assert policy.client("10.9.0.2", "1.2.3.4, 198.51.100.1") == "198.51.100.1"
    assert policy.client("10.9.0.2", "198.51.100.1, 10.9.0.5") == "198.51.100.1"
    assert policy.client("10.9.0.2", "not-an-ip") == "10.9.0.2"
    assert policy.account("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64"
    assert policy.account("::ffff:192.0.2.1") == "192.0.2.1"
    slots = ConnectionSlots(capacity=4, policy=policy)
    conn = Conn()
    slots.admit(conn, "10.9.0.2")
    slots.move(conn, policy.client("10.9.0.2", "198.51.100.1"))
    assert slots.held("198.51.100.1") == 1 and slots.held("10.9.0.2") == 0


def _hold(port: int, source: str) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


@pytest.fixture
def served(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[int]:
    """A real ``serve`` with the default limits (plus the test's ``serve_args`` marker)."""
    extra = list(getattr(request, "param", []))
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--no-consumer", "--port", str(port),
             "--log-level", "warning", *extra],
            cwd=ROOT, env=_env(tmp_path, RECIPE_SYNC_WEBHOOK_SECRET=SECRET),
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_serving(f"http://127.0.0.1:{port}/healthz", proc, log)
        yield port
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def signed_wire() -> bytes:
    body, headers = signed()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (
        f"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
        f"{head}Connection: close\r\n\r\n"
    ).encode() + body


async def _deliver_all(port: int, count: int, source: str = "127.0.0.1") -> list[bytes]:
    """``count`` signed deliveries from one address, every connection open before any sends."""
    opened = [
        await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        for _ in range(count)
    ]

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
        try:
            writer.write(signed_wire())
            await writer.drain()
            return await asyncio.wait_for(reader.read(12), 10)
        except (OSError, TimeoutError) as err:
            return type(err).__name__.encode()
        finally:
            writer.close()

    return await asyncio.gather(*(one(r, w) for r, w in opened))


@pytest.mark.slow
def test_github_burst_from_one_address_is_accepted_with_the_defaults(served: int) -> None:
    answers = asyncio.run(_deliver_all(served, 128))
    assert answers == [b"HTTP/1.1 202"] * 128  # was 64 x 503: a bound of 64 per address


@pytest.mark.slow
@pytest.mark.parametrize("served", [["--limit-concurrency", "40"]], indirect=True)
def test_a_full_server_lets_deliveries_in_without_a_reconnect_storm(served: int) -> None:
    # 120 silent connections from 4 addresses, 3x the capacity: the oldest make room for
    # the newcomers, then each flooding address holds its share and is refused
    held = [_hold(served, f"127.0.0.{2 + i % 4}") for i in range(120)]
    try:
        time.sleep(1.5)  # past the patience for connections that show nothing
        refused = [_hold(served, "127.0.0.2") for _ in range(5)]
        for sock in refused:
            sock.settimeout(2)
            assert sock.recv(100).startswith(b"HTTP/1.1 503"), "a flooder's reconnect got in"
            sock.close()
        answers = asyncio.run(_deliver_all(served, 24))
        assert answers == [b"HTTP/1.1 202"] * 24
        assert httpx.get(f"http://127.0.0.1:{served}/healthz", timeout=5).status_code == 200
    finally:
        for sock in held:
            sock.close()


def _send_until_closed(port: int, head: bytes, filler: bytes, limit: int) -> tuple[bytes, int]:
    """Send ``head`` then ``filler`` until the server closes (at most ``limit`` bytes):
    (its answer, bytes sent)."""
    sock = _hold(port, "127.0.0.2")
    sent = 0
    try:
        sock.sendall(head)
        sock.settimeout(5)
        while sent < limit:
            try:
                sock.sendall(filler)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(filler)
        try:
            return sock.recv(100), sent
        except ConnectionResetError:
            return b"reset", sent
    finally:
        sock.close()


@pytest.mark.slow
def test_endless_headers_are_cut_at_64_kib(served: int) -> None:
    head = b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\n"
    lines, sent = _send_until_closed(served, head, b"X-A: b\r\n" * 512, 64 * MiB)
    assert sent < 8 * MiB, "the server kept reading header lines"
    assert lines.startswith(b"HTTP/1.1 431") or lines == b"reset", lines
    _, sent = _send_until_closed(served, head + b"X-Endless: ", b"a" * 4096, 64 * MiB)
    assert sent < 8 * MiB, "the server kept reading one header value"
    many = head + b"".join(b"X-%d: 1\r\n" % i for i in range(101)) + b"\r\n"
    answer, _ = _send_until_closed(served, many, b"", 0)
    assert answer.startswith(b"HTTP/1.1 431"), answer
    # a delivery whose head and body come in one write is not counted as a head
    body = b"x" * (300 * 1024)
    sock = _hold(served, "127.0.0.1")
    with sock:
        sock.sendall(
            b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
            b"X-GitHub-Event: ping\r\nX-GitHub-Delivery: d\r\nConnection: close\r\n\r\n"
            % len(body)
            + body
        )
        sock.settimeout(5)
        assert sock.recv(12) == b"HTTP/1.1 401"  # read whole, then refused for its signature
    assert httpx.get(f"http://127.0.0.1:{served}/healthz", timeout=5).status_code == 200
