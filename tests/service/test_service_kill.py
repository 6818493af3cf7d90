"""A worker killed with SIGKILL in the middle of a sync: after a restart the job completes
and nothing is duplicated (PR, comment, check run, commit)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bot.present.posted import VERIFY_MARKER
from tests.service.conftest import BENCH, RECIPES, Harness, push, wait_for
from tests.service.fakegithub import FakeGitHub, git

ROOT = Path(__file__).resolve().parents[2]


def service_env(harness: Harness, pythonpath: str = str(ROOT)) -> dict[str, str]:
    """The environment a `recipe-sync` process of the harness's deployment starts with."""
    settings = harness.settings
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(settings.data_dir.parent),
        "PYTHONPATH": pythonpath,
        "RECIPE_SYNC_WEBHOOK_SECRET": settings.webhook_secret,
        "RECIPE_SYNC_APP_ID": settings.app_id,
        "RECIPE_SYNC_PRIVATE_KEY_PATH": str(settings.private_key_path),
        "RECIPE_SYNC_RECIPES_REPO": settings.recipes_repo,
        "RECIPE_SYNC_DATA_DIR": str(settings.data_dir),
        "RECIPE_SYNC_GITHUB_API_URL": settings.github_api_url,
        "RECIPE_SYNC_BOT_LOGIN": settings.bot_login,
        "RECIPE_SYNC_ENGINE": settings.engine,
        "RECIPE_SYNC_SECONDS_BETWEEN_WRITES": "0",
    }


def worker(harness: Harness, log: Path) -> subprocess.Popen[bytes]:
    settings = harness.settings
    env = {
        **service_env(harness),
        "RECIPE_SYNC_STALE_AFTER": str(settings.stale_after_seconds),
        "RECIPE_SYNC_HEARTBEAT": str(settings.heartbeat_seconds),
    }
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "bot", "worker", "--workers", "1"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


@pytest.mark.slow
def test_sigkilled_worker_resumes_without_duplicate_side_effects(
    fake: FakeGitHub, tmp_path: Path, app_key: tuple[str, str]
) -> None:
    harness = Harness(fake, tmp_path, app_key, stale_after_seconds=3.0, heartbeat_seconds=0.5)
    log = tmp_path / "worker.log"
    # the comment is created on GitHub, but the worker never receives the answer
    hold = fake.hold("POST", r"/repos/org/bench/issues/\d+/comments$")
    first = worker(harness, log)
    try:
        push(fake, 256)
        number = fake.open_pull(BENCH, head_ref="bump")
        assert harness.label(number).status_code == 202
        wait_for(hold.entered.is_set, 60, "the comment request", log)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
    fake.holds.remove(hold)
    hold.release.set()

    # mid-job state: PR pushed and opened, comment created, check run in progress
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.state == "running"
    assert len(fake.pulls[RECIPES]) == 1 and len(fake.comments_on(BENCH, number)) == 1
    assert [c["status"] for c in fake.check_runs_on(BENCH)] == ["in_progress"]

    second = worker(harness, log)
    try:

        def finished() -> bool:
            current = harness.rt.store.syncs.find(BENCH, number)
            return current is not None and current.state == "done"

        wait_for(finished, 60, "the resumed sync", log)
    finally:
        second.send_signal(signal.SIGINT)
        try:
            second.wait(timeout=20)
        except subprocess.TimeoutExpired:
            second.kill()

    assert "resumed syncs [1]" in log.read_text()
    pr = next(iter(fake.pulls[RECIPES].values()))
    assert len(fake.pulls[RECIPES]) == 1
    comments = [c for c in fake.comments_on(BENCH, number) if c["body"].startswith(VERIFY_MARKER)]
    assert len(comments) == 1 and f"{RECIPES}#{pr['number']}" in comments[0]["body"]
    check = fake.check_runs_on(BENCH)
    assert len(check) == 1 and check[0]["history"] == ["queued", "in_progress", "completed"]
    assert len(check[0]["annotations"]) == 1
    recipes = fake.repos[RECIPES].path
    assert git(recipes, "rev-list", "--count", f"main..{pr['head_ref']}") == "1"
    assert fake.calls("POST", r"/repos/org/recipes/pulls$") == 1
    harness.close()
