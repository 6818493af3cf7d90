"""Fixtures of the service tests: a served fake GitHub seeded with a benchmark repo and a
recipes repo, and a harness that signs deliveries, posts them to the app and runs the
queued jobs synchronously."""

from __future__ import annotations

import datetime
import json
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from bot.github.signature import sign
from bot.service.boot import boot
from bot.service.web import create_app
from bot.settings import Settings
from tests.service.fakegithub import FakeGitHub, ServerThread, app_keypair

SECRET = "It's a Secret to Everybody"
BENCH = "org/bench"
RECIPES = "org/recipes"
SCRIPT = "benchmarks/single_node/dsr1_fp8_h200.sh"
RECIPE = "models/deepseek-ai/DeepSeek-R1.yaml"
BOT = "recipe-sync[bot]"
MAINTAINER = "maintainer"
ENGINE = "tests.service.engine_double:DeterministicTestEngine"


def script(max_num_seqs: int, extra: str = "") -> str:
    return (
        "#!/usr/bin/env bash\n"
        f"# recipe: {RECIPE}\n"
        "# owner: @octocat fixes #12\n"
        "vllm serve deepseek-ai/DeepSeek-R1 \\\n"
        "  --tensor-parallel-size 8 \\\n"
        f"  --max-num-seqs {max_num_seqs}{extra}\n"
    )


RECIPE_TEXT = (
    "# DeepSeek-R1 recipe (comments and order must survive)\n"
    "model: deepseek-ai/DeepSeek-R1\n"
    "extra_args:\n"
    '  - "--tensor-parallel-size"\n'
    '  - "8"\n'
    '  - "--max-num-seqs"\n'
    '  - "128"\n'
)


@pytest.fixture(scope="session")
def app_key() -> tuple[str, str]:
    return app_keypair()


@pytest.fixture
def fake(
    tmp_path: Path, app_key: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeGitHub]:
    github = FakeGitHub(tmp_path / "remotes", public_key=app_key[1])
    github.enforce_git_permissions(monkeypatch)
    with ServerThread(github.app) as server:
        github.base_url = server.url
        github.create_repo(BENCH, {SCRIPT: script(128), "README.md": "bench\n"})
        github.create_repo(RECIPES, {RECIPE: RECIPE_TEXT, "README.md": "recipes\n"})
        github.set_permission(BENCH, MAINTAINER, "write", "maintain")
        github.add_token("ghp_personal", "someone")
        yield github
    github.check_contract()


def push(fake: FakeGitHub, value: int, *, branch: str = "bump", repo: str = BENCH) -> str:
    """Commit the script with ``--max-num-seqs value`` on ``branch`` (from main if new)."""
    target = fake.repos[repo]
    parent = target.ref_sha(f"refs/heads/{branch}") or target.ref_sha("refs/heads/main")
    return fake.commit(repo, branch, {SCRIPT: script(value)}, parent=parent)


class Harness:
    def __init__(
        self, fake: FakeGitHub, tmp_path: Path, app_key: tuple[str, str], **overrides: Any
    ) -> None:
        key_path = tmp_path / "app-key.pem"
        key_path.write_text(app_key[0])
        values: dict[str, Any] = {
            "webhook_secret": SECRET,
            "app_id": fake.app_id,
            "private_key_path": key_path,
            "recipes_repo": RECIPES,
            "data_dir": tmp_path / "data",
            "github_api_url": fake.base_url,
            "bot_login": BOT,
            "engine": ENGINE,
            "seconds_between_writes": 0.0,
            "stale_after_seconds": 5.0,
            "heartbeat_seconds": 1.0,
        }
        values.update(overrides)
        self.settings = Settings(**values)
        self.fake = fake
        self.sleeps: list[float] = []
        self.rt = boot(self.settings, sleep=self.sleeps.append)
        self.client = TestClient(create_app(self.rt))

    def deliver(
        self,
        event: str,
        payload: dict[str, Any],
        *,
        delivery: str | None = None,
        secret: str | None = SECRET,
    ) -> httpx.Response:
        body = json.dumps(payload).encode()
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
            "Content-Type": "application/json",
        }
        if secret is not None:
            headers["X-Hub-Signature-256"] = sign(secret, body)
        return self.client.post("/webhooks/github", content=body, headers=headers)

    def label(
        self, number: int, *, sender: str = MAINTAINER, delivery: str | None = None
    ) -> httpx.Response:
        pr = self.fake.pulls[BENCH][number]
        if "recipe-sync" not in pr["labels"]:
            pr["labels"].append("recipe-sync")
        payload = self.fake.pull_request_payload(
            BENCH, number, "labeled", sender=sender, label="recipe-sync"
        )
        return self.deliver("pull_request", payload, delivery=delivery)

    def drain(self, limit: int = 500) -> int:
        """Run queued and scheduled (retry) tasks until none is left; returns how many ran."""
        huey = self.rt.huey
        far = datetime.datetime(2100, 1, 1)
        ran = 0
        while ran < limit:
            task = huey.dequeue()
            if task is None:
                scheduled = huey.read_schedule(far)
                if not scheduled:
                    return ran
                for item in scheduled:
                    huey.enqueue(item)
                continue
            huey.execute(task, far)
            ran += 1
        raise AssertionError("the queue did not drain")

    def pending(self) -> int:
        return len(self.rt.huey.pending()) + len(self.rt.huey.scheduled())

    def close(self) -> None:
        self.client.close()
        self.rt.close()


@pytest.fixture
def harness(fake: FakeGitHub, tmp_path: Path, app_key: tuple[str, str]) -> Iterator[Harness]:
    h = Harness(fake, tmp_path, app_key)
    yield h
    h.close()


PG_SERVER = "postgresql://postgres@127.0.0.1:5432/test"
REDIS_SERVER = "redis://127.0.0.1:6379/0"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL URL whose search_path is a fresh schema (dropped afterwards), so
    parallel test workers never share tables."""
    psycopg = pytest.importorskip("psycopg")
    schema = f"rs_test_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(PG_SERVER, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as err:
        pytest.skip(f"PostgreSQL at 127.0.0.1:5432 is not reachable: {err}")
    with admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{schema}"
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def redis_queue() -> Iterator[tuple[str, str]]:
    """(REDIS_URL, a unique queue name); the queue's keys are deleted afterwards."""
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(REDIS_SERVER, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as err:
        pytest.skip(f"Redis at 127.0.0.1:6379 is not reachable: {err}")
    name = f"rs_test_{uuid.uuid4().hex[:12]}"  # Huey keeps only [A-Za-z0-9_] of the name
    try:
        yield REDIS_SERVER, name
    finally:
        for key in client.scan_iter(f"huey.*.{name}*"):
            client.delete(key)
        client.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(condition: Callable[[], bool], timeout: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}; log:\n{log.read_text()[-4000:]}")


def wait_serving(url: str, server: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    """Until ``GET url`` answers 200; fails with the log's tail if the server exits first."""

    def up() -> bool:
        assert server.poll() is None, log.read_text()[-4000:]
        try:
            return httpx.get(url, timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(up, timeout, f"{url} to answer", log)
