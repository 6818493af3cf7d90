"""``recipe-sync serve`` starts with only RECIPE_SYNC_WEBHOOK_SECRET set."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from bot.github.signature import sign
from tests.service.conftest import free_port, wait_for, wait_serving
from tests.shared import github_data_dir

ROOT = Path(__file__).resolve().parents[2]
DATA = github_data_dir()


def test_serve_without_a_secret_says_so_in_one_line(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "bot", "serve"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "recipe-sync: error: RECIPE_SYNC_WEBHOOK_SECRET is not set: the webhook endpoint cannot "
        "verify deliveries without the secret configured on the GitHub App"
    ]


@pytest.mark.slow
def test_serve_with_only_the_secret_accepts_deliveries(tmp_path: Path) -> None:
    # HOME is not a recipe-sync setting: it only keeps the default data dir inside tmp_path
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "RECIPE_SYNC_WEBHOOK_SECRET": "s3cret",
    }
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_serving(f"{base}/healthz", server, log)
        # deliveries are accepted, but no job can run: not ready, and it says why
        ready = httpx.get(f"{base}/readyz")
        assert ready.status_code == 503
        assert ready.json()["credentials"].startswith("no GitHub credentials: set")
        assert (
            f"serve: listening on http://127.0.0.1:{port} (1 process); no GitHub credentials"
            in (log.read_text())
        )
        payload = json.loads((DATA / "pull_request.labeled.json").read_text())
        payload["label"]["name"] = "recipe-sync"
        body = json.dumps(payload).encode()
        headers = {
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": "serve-1",
            "X-Hub-Signature-256": sign("s3cret", body),
        }
        response = httpx.post(f"{base}/webhooks/github", content=body, headers=headers)
        assert response.status_code == 202, response.text
        wait_for(lambda: "no GitHub credentials" in log.read_text(), 30, "the job's error", log)
        assert (tmp_path / ".local/share/recipe-sync/recipe-sync.db").is_file()
        assert (tmp_path / ".local/share/recipe-sync/queue.db").is_file()
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    text = log.read_text()
    assert "Traceback" not in text, text


def test_several_processes_need_postgresql_and_outside_workers(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "RECIPE_SYNC_WEBHOOK_SECRET": "s3cret",
    }
    command = [sys.executable, "-m", "bot", "serve", "--processes", "2", "--no-consumer"]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("recipe-sync: error: command line: key '--processes': more than one")
    assert "PostgreSQL" in line


def _children(pid: int) -> set[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return {int(child) for child in found}


@pytest.mark.slow
@pytest.mark.services
def test_several_processes_share_the_port_and_stop_together(
    tmp_path: Path, pg_url: str, redis_queue: tuple[str, str]
) -> None:
    redis_url, queue = redis_queue
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "RECIPE_SYNC_WEBHOOK_SECRET": "s3cret",
        "DATABASE_URL": pg_url,
        "REDIS_URL": redis_url,
        "RECIPE_SYNC_QUEUE_NAME": queue,
    }
    port = free_port()
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "bot", "serve", "--port", str(port), "--no-consumer"]
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [*command, "--processes", "2"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    payload = json.loads((DATA / "pull_request.labeled.json").read_text())
    payload["label"]["name"] = "recipe-sync"
    body = json.dumps(payload).encode()

    def deliver(delivery: str) -> int:
        headers = {
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": sign("s3cret", body),
        }
        return httpx.post(f"{base}/webhooks/github", content=body, headers=headers).status_code

    try:
        wait_serving(f"{base}/healthz", server, log)
        first = _children(server.pid)
        assert len(first) == 2
        assert [deliver(f"multi-{i}") for i in range(20)] == [202] * 20
        assert deliver("multi-3") == 200  # a replay, whichever process answers it
        # a server process that dies is replaced; the port keeps answering
        os.kill(min(first), signal.SIGKILL)

        def replaced() -> bool:
            return len(_children(server.pid) - {min(first)}) >= 2

        wait_for(replaced, 30, "a replacement server process", log)
        wait_serving(f"{base}/healthz", server, log)
        assert deliver("multi-after") == 202
        survivors = _children(server.pid)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            code = server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
    assert code == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in survivors)  # all stopped
    text = log.read_text()
    assert "Traceback" not in text.replace("ended (status 9)", ""), text


def _listening(port: int) -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen(1)
    return sock


@pytest.mark.parametrize("processes", [1, 2])
def test_a_port_in_use_is_one_line_and_exit_2(
    tmp_path: Path, processes: int, request: pytest.FixtureRequest
) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "RECIPE_SYNC_WEBHOOK_SECRET": "s3cret",
    }
    if processes > 1:  # more than one process needs PostgreSQL (a fresh schema: the
        # database's public schema may have been migrated by another version)
        env["DATABASE_URL"] = request.getfixturevalue("pg_url")
    port = free_port()
    command = [sys.executable, "-m", "bot", "serve", "--port", str(port), "--log-level", "warning"]
    if processes > 1:
        command += ["--processes", str(processes), "--no-consumer"]
    with _listening(port):
        result = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"recipe-sync: error: cannot listen on 127.0.0.1:{port}: address already in use "
        "(is another server running on it?)"
    ]


@pytest.mark.slow
@pytest.mark.services
def test_server_processes_exit_when_the_parent_is_killed(
    tmp_path: Path, pg_url: str, redis_queue: tuple[str, str]
) -> None:
    redis_url, queue = redis_queue
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "RECIPE_SYNC_WEBHOOK_SECRET": "s3cret",
        "DATABASE_URL": pg_url,
        "REDIS_URL": redis_url,
        "RECIPE_SYNC_QUEUE_NAME": queue,
    }
    port = free_port()
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "bot", "serve", "--port", str(port), "--no-consumer"]
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [*command, "--processes", "2"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    children: set[int] = set()
    try:
        wait_serving(f"http://127.0.0.1:{port}/healthz", server, log)
        children = _children(server.pid)
        assert len(children) == 2
        server.kill()  # SIGKILL: the parent gets no chance to stop them
        server.wait(timeout=10)

        def gone() -> bool:
            return not any(_alive(pid) for pid in children)

        wait_for(gone, 30, "the server processes to exit after their parent", log)
        with _listening(port):  # and the port is free again
            pass
    finally:
        for pid in children:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if server.poll() is None:
            server.kill()


def _alive(pid: int) -> bool:
    """Running (a zombie whose parent is gone is reaped by init: not running)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
