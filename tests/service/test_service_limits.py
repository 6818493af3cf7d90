"""Slow clients, unreachable backends: bounded and quiet (real ``serve`` subprocesses)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.service.outage import Outage, guard_queue
from tests.service.conftest import free_port, wait_serving

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "RECIPE_SYNC_WEBHOOK_SECRET": "s3cret",
        **extra,
    }


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--no-consumer", "--port", str(port),
             "--header-timeout", "1", "--body-timeout", "1", "--log-level", "warning"],
            cwd=ROOT, env=_env(tmp_path), stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_serving(f"{base}/healthz", proc, log)
        yield f"127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1024) == b""
    except (TimeoutError, ConnectionResetError):
        return False


@pytest.mark.slow
def test_header_dribbling_connections_are_closed(server: str) -> None:
    host, port = server.split(":")
    socks = []
    for _ in range(50):
        sock = socket.create_connection((host, int(port)), timeout=5)
        sock.sendall(b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        socks.append(sock)
    started = time.monotonic()
    try:
        for sock in socks:
            sock.sendall(b"a")  # still dribbling
        assert all(_closed_by_server(s, 5.0) for s in socks)
        assert time.monotonic() - started < 8
        assert httpx.get(f"http://{server}/healthz", timeout=5).status_code == 200
    finally:
        for sock in socks:
            sock.close()


@pytest.mark.slow
def test_a_slow_body_is_answered_408(server: str) -> None:
    host, port = server.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
            b'X-GitHub-Event: ping\r\nX-GitHub-Delivery: d\r\n\r\n{"zen"'
        )
        sock.settimeout(10)
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408")


def test_postgres_unreachable_at_start_is_one_line(tmp_path: Path) -> None:
    env = _env(tmp_path, DATABASE_URL="postgresql://postgres:pw@127.0.0.1:1/x")
    result = subprocess.run(
        [sys.executable, "-m", "bot", "serve", "--log-level", "warning", "--port", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("recipe-sync: error: database postgresql://postgres:***@")
    assert "unreachable" in lines[0] and "pw" not in lines[0]


class _DownStorage:
    blocking = False

    def __init__(self) -> None:
        self.up = False
        self.calls = 0

    def dequeue(self) -> bytes | None:
        self.calls += 1
        if not self.up:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        return None

    def read_schedule(self, timestamp: object) -> list[bytes]:
        if not self.up:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        return []


class _Huey:
    def __init__(self) -> None:
        self.storage = _DownStorage()


def test_a_queue_outage_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    huey = _Huey()
    waits: list[float] = []
    guard_queue(huey, Outage("queue", logging.getLogger("t.outage")), sleep=waits.append)
    with caplog.at_level(logging.INFO, logger="t.outage"):
        for _ in range(200):  # 200 polls of a dead Redis
            assert huey.storage.dequeue() is None
            assert huey.storage.read_schedule(0) == []
        huey.storage.up = True
        huey.storage.dequeue()
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert messages[0].startswith("queue unreachable: ConnectionError: Error 111")
    assert "reachable again" in messages[1]
    assert not any(r.exc_info for r in caplog.records)
    assert max(waits) <= 5.0 and waits[0] < waits[5]  # back-off, bounded
