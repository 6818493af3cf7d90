"""``make stack-smoke``: the compose stack's commands (compose.yaml: migrate, then serve and
worker), with its settings (.env.example filled in), run as processes against this machine's
PostgreSQL and Redis instead of the stack's containers. A signed ``pull_request.labeled``
delivery of the seed PR goes in; the alignment PR comes out on the fake GitHub."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.deploy.stack import (
    ROOT,
    compose,
    ready,
    signed_label,
    stack_env,
    stop,
    wait_until,
    with_option,
)
from tests.service.conftest import SECRET, free_port
from tests.service.fakegithub import FakeGitHub
from tests.service.seeded import BENCH, RECIPES, SEED_PR_TITLE, open_seed_pull

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(
        os.environ.get("RECIPE_SYNC_SMOKE") != "stack",
        reason="the stack smoke runs with `make stack-smoke` (RECIPE_SYNC_SMOKE=stack)",
    ),
]


def test_compose_commands_turn_a_signed_delivery_into_an_alignment_pr(
    tmp_path: Path,
    github: FakeGitHub,
    app_key: tuple[str, str],
    pg_url: str,
    redis_queue: tuple[str, str],
) -> None:
    services = compose()["services"]
    key = tmp_path / "github-app-key.pem"
    key.write_text(app_key[0])
    env = stack_env(
        {
            "RECIPE_SYNC_WEBHOOK_SECRET": SECRET,
            "RECIPE_SYNC_APP_ID": github.app_id,
            "POSTGRES_PASSWORD": "unused-here",
            "RECIPE_SYNC_GITHUB_API_URL": github.base_url,
        }
    )
    # the stack's addresses, swapped for this machine's services and files
    assert env["DATABASE_URL"].startswith("postgresql+psycopg://recipe-sync:unused-here@postgres:")
    assert env["REDIS_URL"] == "redis://redis:6379/0"
    assert env["RECIPE_SYNC_RECIPES_REPO"] == RECIPES
    redis_url, queue = redis_queue
    env.update(
        DATABASE_URL=pg_url,
        REDIS_URL=redis_url,
        RECIPE_SYNC_QUEUE_NAME=queue,
        RECIPE_SYNC_PRIVATE_KEY_PATH=str(key),
        RECIPE_SYNC_DATA_DIR=str(tmp_path / "data"),  # the stack's `data` volume
        RECIPE_SYNC_SECONDS_BETWEEN_WRITES="0",
        PATH=os.environ.get("PATH", ""),
        HOME=str(tmp_path),
        PYTHONPATH=str(ROOT),
    )
    recipe_sync = [sys.executable, "-m", "bot"]  # the image's ENTRYPOINT, from this checkout

    migrated = subprocess.run(
        [*recipe_sync, *services["migrate"]["command"]],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert migrated.returncode == 0, migrated.stderr
    assert "migrate: postgresql+psycopg://postgres@127.0.0.1:5432/test" in migrated.stdout

    port, metrics = free_port(), free_port()
    serve_command = with_option(services["serve"]["command"], "--port", str(port))
    serve_command = with_option(serve_command, "--host", "127.0.0.1")
    worker_command = with_option(services["worker"]["command"], "--metrics-port", str(metrics))
    logs = [tmp_path / "serve.log", tmp_path / "worker.log"]
    processes = []
    try:
        for command, log in zip((serve_command, worker_command), logs, strict=True):
            with open(log, "wb") as out:
                processes.append(
                    subprocess.Popen(
                        [*recipe_sync, *command], env=env, stdout=out, stderr=subprocess.STDOUT
                    )
                )
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: ready(f"{base}/readyz"), 90, "serve's /readyz", logs)
        wait_until(lambda: ready(f"http://127.0.0.1:{metrics}/metrics"), 60, "worker", logs)
        assert f"serve: listening on http://127.0.0.1:{port} (1 process); GitHub App " in (
            logs[0].read_text()
        )
        assert "jobs run by `recipe-sync worker` processes" in logs[0].read_text()
        assert f"queue Redis {redis_url}" in logs[1].read_text()

        number = open_seed_pull(github, github.built)  # type: ignore[attr-defined]
        body, headers = signed_label(github, BENCH, number, SECRET)
        answer = httpx.post(f"{base}/webhooks/github", content=body, headers=headers)
        assert answer.status_code == 202, answer.text
        wait_until(lambda: len(github.pulls[RECIPES]) == 1, 180, "the alignment PR", logs)
    finally:
        for process in processes:
            stop(process)
    (pr,) = github.pulls[RECIPES].values()
    assert pr["title"] == SEED_PR_TITLE
    for log in logs:
        assert "Traceback" not in log.read_text(), log.read_text()
