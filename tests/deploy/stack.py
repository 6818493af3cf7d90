"""What compose.yaml and .env.example say, read as data: the smoke tests run the stack's own
commands with the stack's own settings, only the addresses swapped for this machine's."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import yaml

from bot.github.signature import sign
from tests.service.fakegithub import FakeGitHub

ROOT = Path(__file__).resolve().parents[2]
APP_SERVICES = ("migrate", "serve", "worker")


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    return data


def env_example() -> dict[str, str]:
    """``KEY=VALUE`` lines of .env.example (comments and blank lines skipped)."""
    values: dict[str, str] = {}
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def with_option(command: list[str], option: str, value: str) -> list[str]:
    """``command`` with ``option``'s value replaced (it must be there)."""
    index = command.index(option)
    return [*command[: index + 1], value, *command[index + 2 :]]


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ``${NAME}``, ``${NAME:-default}`` and ``${NAME:?error}``."""

    def one(match: re.Match[str]) -> str:
        name, op, rest = match.group(1), match.group(2) or "", match.group(3) or ""
        found = env.get(name, "")
        if op == ":?":
            assert found, f"compose needs {name}: {rest}"
        return found or (rest if op == ":-" else "")

    return re.sub(r"\$\{([A-Z_][A-Z0-9_]*)(:[-?])?([^}]*)\}", one, value)


def stack_env(filled: dict[str, str]) -> dict[str, str]:
    """The environment compose gives the app services: .env (from .env.example with
    ``filled``), then the services' ``environment`` interpolated from it."""
    env = {**env_example(), **filled}
    anchor = compose()["x-recipe-sync"]
    for key, value in anchor["environment"].items():
        env[key] = interpolate(str(value), env)
    return env


def signed_label(
    fake: FakeGitHub, bench: str, number: int, secret: str
) -> tuple[bytes, dict[str, str]]:
    """The ``pull_request.labeled`` delivery of a maintainer labelling PR ``number``."""
    fake.pulls[bench][number]["labels"].append("recipe-sync")
    payload = fake.pull_request_payload(
        bench, number, "labeled", sender="maintainer", label="recipe-sync"
    )
    body = json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(secret, body),
        "Content-Type": "application/json",
    }
    return body, headers


def wait_until(condition: Any, timeout: float, what: str, logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    tails = "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in logs)
    raise AssertionError(f"timed out waiting for {what}\n{tails}")


def ready(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
