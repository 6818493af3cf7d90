"""``make image-smoke``: the image built here (deploy/podman.py: a debootstrapped bookworm
base, no image registry) and run with podman: it runs as a non-root user, keeps no build
secret, answers /readyz against this machine's PostgreSQL and Redis, passes its own
HEALTHCHECK and turns one signed delivery into the seed's alignment PR on the fake GitHub."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from deploy.podman import build, missing_tools, podman_env
from tests.deploy.stack import ready, signed_label, wait_until
from tests.service.conftest import SECRET, free_port
from tests.service.fakegithub import FakeGitHub
from tests.service.seeded import BENCH, RECIPES, SEED_PR_TITLE, open_seed_pull

TAG = "localhost/recipe-sync:smoke"

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(
        os.environ.get("RECIPE_SYNC_SMOKE") != "image",
        reason="the image smoke runs with `make image-smoke` (RECIPE_SYNC_SMOKE=image)",
    ),
    pytest.mark.skipif(
        bool(missing_tools()),
        reason=f"{', '.join(missing_tools())} not installed (`make podman` apt-installs them)",
    ),
]


@pytest.fixture(scope="module")
def image() -> Iterator[dict[str, str]]:
    """The podman environment, after building the image."""
    with tempfile.TemporaryDirectory(prefix="recipe-sync-image-") as scratch:
        env = podman_env(Path(scratch))
        build(TAG, Path(scratch))
        yield env


def podman(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["podman", *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_image_runs_as_non_root_with_a_healthcheck_and_keeps_no_build_secret(
    image: dict[str, str],
) -> None:
    (config,) = json.loads(podman(image, "image", "inspect", TAG))
    assert config["Config"]["User"] == "10001:10001"
    assert config["Config"]["Entrypoint"] == ["recipe-sync"]
    assert "/readyz" in " ".join(config["Healthcheck"]["Test"])  # podman: top level
    assert not any(v.startswith("PIP_") for v in config["Config"]["Env"])
    inside = podman(
        image, "run", "--rm", "--runtime=runc", "--network=host", "--entrypoint=sh", TAG, "-c",
        "id -u; ls -A /run/secrets 2>/dev/null | wc -l; pip config list | wc -l; "
        "recipe-sync --version",
    ).split()  # fmt: skip
    assert inside == ["10001", "0", "0", "recipe-sync", "0.1.0"]


def test_the_image_serves_readyz_and_handles_a_signed_delivery(
    image: dict[str, str],
    tmp_path: Path,
    github: FakeGitHub,
    app_key: tuple[str, str],
    pg_url: str,
    redis_queue: tuple[str, str],
) -> None:
    # the container's user (10001) pushes into the fake's repositories, mounted at their path
    subprocess.run(["chmod", "-R", "a+rwX", str(github.root)], check=True)
    key = tmp_path / "github-app-key.pem"
    key.write_text(app_key[0])
    key.chmod(0o644)
    redis_url, queue = redis_queue
    port = free_port()
    name = f"recipe-sync-smoke-{port}"
    settings = {
        "RECIPE_SYNC_WEBHOOK_SECRET": SECRET,
        "RECIPE_SYNC_APP_ID": github.app_id,
        "RECIPE_SYNC_PRIVATE_KEY_PATH": "/run/secrets/github-app-key",
        "RECIPE_SYNC_GITHUB_API_URL": github.base_url,
        "RECIPE_SYNC_RECIPES_REPO": RECIPES,
        "RECIPE_SYNC_SECONDS_BETWEEN_WRITES": "0",
        "RECIPE_SYNC_HEALTH_URL": f"http://127.0.0.1:{port}/readyz",
        "DATABASE_URL": pg_url,
        "REDIS_URL": redis_url,
        "RECIPE_SYNC_QUEUE_NAME": queue,
        # the fake's repositories belong to the test's user, not to the container's: git
        # takes safe.directory from a global (or system) configuration only
        "GIT_CONFIG_GLOBAL": "/run/smoke/gitconfig",
    }
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[safe]\n\tdirectory = *\n")
    gitconfig.chmod(0o644)
    environment = [f"--env={k}={v}" for k, v in settings.items()]
    podman(
        image, "run", "--detach", "--name", name, "--runtime=runc", "--network=host",
        f"--volume={key}:/run/secrets/github-app-key:ro",
        f"--volume={gitconfig}:/run/smoke/gitconfig:ro",
        f"--volume={github.root}:{github.root}",
        *environment, TAG, "serve", "--host", "127.0.0.1", "--port", str(port),
    )  # fmt: skip
    log = tmp_path / "container.log"

    def save_log() -> None:
        done = subprocess.run(["podman", "logs", name], env=image, capture_output=True, text=True)
        log.write_text(done.stdout + done.stderr)

    try:
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until(lambda: ready(f"{base}/readyz"), 120, "/readyz from the container", [])
        finally:
            save_log()
        assert f"serve: listening on http://127.0.0.1:{port} (1 process); GitHub App" in (
            log.read_text()
        )
        podman(image, "healthcheck", "run", name)  # the image's own HEALTHCHECK passes

        number = open_seed_pull(github, github.built)  # type: ignore[attr-defined]
        body, headers = signed_label(github, BENCH, number, SECRET)
        answer = httpx.post(f"{base}/webhooks/github", content=body, headers=headers)
        assert answer.status_code == 202, answer.text
        try:
            wait_until(lambda: len(github.pulls[RECIPES]) == 1, 180, "the alignment PR", [])
        finally:
            save_log()
    finally:
        subprocess.run(["podman", "rm", "--force", name], env=image, capture_output=True)
    (pr,) = github.pulls[RECIPES].values()
    assert pr["title"] == SEED_PR_TITLE
    assert "Traceback" not in log.read_text(), log.read_text()[-4000:]
