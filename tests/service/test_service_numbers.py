"""Issue and pull request numbers in signed payloads, over real HTTP (uvicorn): a number
that is not an integer from 1 to 2**31-1 is a 400 naming the field, never a 500/503 from
the database and never coerced (``1.5`` must not act on #1)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.github.signature import sign
from bot.present.posted import DASHBOARD_MARKER
from bot.service.boot import boot
from bot.service.runtime import Runtime
from bot.service.web import create_app
from bot.settings import Settings
from tests.service.conftest import BOT, SECRET
from tests.service.fakegithub import ServerThread

REPO = {"full_name": "org/bench"}
SENDER = {"login": "maintainer", "type": "User"}


def dashboard_edit(number: Any) -> dict[str, Any]:
    issue = {"number": number, "user": {"login": BOT}, "body": f"{DASHBOARD_MARKER}\nboxes"}
    return {"action": "edited", "issue": issue, "repository": REPO, "sender": SENDER}


def command(number: Any, body: str = "/recipe-sync") -> dict[str, Any]:
    issue = {"number": number, "pull_request": {"url": "https://example/pr"}}
    return {
        "action": "created",
        "issue": issue,
        "comment": {"id": 17, "body": body},
        "repository": REPO,
        "sender": SENDER,
    }


def pull_request(number: Any) -> dict[str, Any]:
    head = {"sha": "a" * 40, "ref": "bump", "repo": REPO}
    pr = {"number": number, "head": head, "base": {"repo": REPO}, "labels": []}
    return {
        "action": "labeled",
        "label": {"name": "recipe-sync"},
        "pull_request": pr,
        "repository": REPO,
        "sender": SENDER,
    }


PAYLOADS = {
    "issues": dashboard_edit,
    "issue_comment": command,
    "issue_comment.drop": lambda n: command(n, "/recipe-sync drop --max-num-seqs"),
    "pull_request": pull_request,
}
BAD = [[7], {"n": 7}, None, True, False, 1.5, 7.0, "7", 0, -3, 2**31, 2**63, 2**70]


@pytest.fixture(params=["sqlite", "postgresql"])
def served(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Runtime, httpx.Client]]:
    values: dict[str, Any] = {"webhook_secret": SECRET, "data_dir": tmp_path / "data"}
    values["bot_login"] = BOT
    if request.param == "postgresql":  # where 2**31 overflowed the column: a 503 before
        values["database_url"] = request.getfixturevalue("pg_url")
    rt = boot(Settings(**values))
    with ServerThread(create_app(rt)) as server, httpx.Client(base_url=server.url) as http:
        yield rt, http
    rt.close()


def deliver(http: httpx.Client, kind: str, number: Any) -> httpx.Response:
    event = kind.split(".")[0]
    body = json.dumps(PAYLOADS[kind](number)).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(SECRET, body),
        "Content-Type": "application/json",
    }
    return http.post("/webhooks/github", content=body, headers=headers)


@pytest.mark.parametrize("kind", list(PAYLOADS))
def test_a_number_that_is_not_a_positive_int32_is_400_naming_the_field(
    served: tuple[Runtime, httpx.Client], kind: str
) -> None:
    rt, http = served
    field = "pull_request.number" if kind == "pull_request" else "issue.number"
    for value in BAD:
        response = deliver(http, kind, value)
        assert response.status_code == 400, (value, response.text)
        error = response.json()["error"]
        assert f"'{field}' is not an issue or pull request number" in error, error
    assert rt.store.deliveries.count() == 0 and len(rt.huey.pending()) == 0
    # the largest valid number goes through: the bound is the column's, not a guess
    assert deliver(http, kind, 2**31 - 1).status_code == 202
    assert deliver(http, kind, 1).status_code == 202
    assert rt.store.deliveries.count() == 2
