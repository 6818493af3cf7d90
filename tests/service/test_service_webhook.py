"""The webhook endpoint: signature before parsing, allow-list, dedupe, fast 2xx, health."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bot.github.signature import sign
from bot.service.boot import boot
from bot.service.runtime import Runtime
from bot.service.web import create_app
from bot.settings import Settings
from tests.service.conftest import SECRET
from tests.shared import github_data_dir

DATA = github_data_dir()


def labeled() -> dict[str, Any]:
    payload = json.loads((DATA / "pull_request.labeled.json").read_text())
    payload["label"]["name"] = "recipe-sync"
    return dict(payload)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[Runtime, TestClient]]:
    # no GitHub credentials at all: the endpoint must still accept deliveries
    rt = boot(Settings(webhook_secret=SECRET, data_dir=tmp_path / "data"))
    with TestClient(create_app(rt)) as http:
        yield rt, http
    rt.close()


def post(
    http: TestClient,
    body: bytes,
    *,
    event: str = "pull_request",
    signature: str | None = "auto",
    delivery: str | None = None,
) -> Any:
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4())}
    if signature == "auto":
        headers["X-Hub-Signature-256"] = sign(SECRET, body)
    elif signature is not None:
        headers["X-Hub-Signature-256"] = signature
    return http.post("/webhooks/github", content=body, headers=headers)


def queued(rt: Runtime) -> int:
    return len(rt.huey.pending()) + rt.store.deliveries.count()


@pytest.mark.parametrize(
    "signature",
    [None, "", "sha256=" + "0" * 64, sign("wrong secret", b"{}"), "sha1=whatever"],
    ids=["missing", "empty", "zeros", "other-secret", "sha1"],
)
def test_bad_or_missing_signature_is_401_and_nothing_is_enqueued(
    service: tuple[Runtime, TestClient], signature: str | None
) -> None:
    rt, http = service
    response = post(http, json.dumps(labeled()).encode(), signature=signature)
    assert response.status_code == 401
    assert queued(rt) == 0
    assert (
        rt.metrics.value(
            "recipe_sync_webhook_deliveries_total",
            {"event": "pull_request", "outcome": "unauthorized"},
        )
        == 1
    )


def test_signature_is_checked_over_the_exact_raw_body(service: tuple[Runtime, TestClient]) -> None:
    rt, http = service
    body = json.dumps(labeled()).encode()
    tampered = body.replace(b'"recipe-sync"', b'"recipe-synd"')
    assert post(http, tampered, signature=sign(SECRET, body)).status_code == 401
    # not even parsed: a garbage body with a bad signature is still 401, not 400
    assert post(http, b"\xff not json", signature="sha256=00").status_code == 401
    assert queued(rt) == 0


def test_accepted_then_duplicates(service: tuple[Runtime, TestClient]) -> None:
    rt, http = service
    body = json.dumps(labeled()).encode()
    first = post(http, body, delivery="d-1")
    assert first.status_code == 202 and first.json() == {"status": "accepted", "delivery": "d-1"}
    for _ in range(49):
        again = post(http, body, delivery="d-1")
        assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert len(rt.huey.pending()) == 1 and rt.store.deliveries.count() == 1


def test_ignored_events_answer_200_without_enqueueing(service: tuple[Runtime, TestClient]) -> None:
    rt, http = service
    push = (DATA / "push.json").read_bytes()
    response = post(http, push, event="push")
    assert response.status_code == 200 and response.json()["status"] == "ignored"
    assert post(http, b'{"zen": "hi"}', event="ping").json() == {
        "status": "ignored",
        "reason": "ping",
    }
    other_label = (DATA / "pull_request.labeled.json").read_bytes()
    assert post(http, other_label).json()["reason"] == "another label"
    assert queued(rt) == 0


def test_malformed_requests_are_400(service: tuple[Runtime, TestClient]) -> None:
    rt, http = service
    assert post(http, b"not json").status_code == 400
    response = post(http, b'{"action": "labeled"}')
    assert response.status_code == 400 and "repository.full_name" in response.json()["error"]
    body = json.dumps(labeled()).encode()
    headers = {"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(SECRET, body)}
    assert http.post("/webhooks/github", content=body, headers=headers).status_code == 400
    assert queued(rt) == 0


def test_a_failed_enqueue_answers_503_and_releases_the_claim(
    service: tuple[Runtime, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, http = service
    body = json.dumps(labeled()).encode()

    def broken(delivery_ids: object) -> None:
        raise ConnectionError("queue down")

    monkeypatch.setattr(rt, "enqueue_deliveries", broken)
    assert post(http, body, delivery="d-2").status_code == 503
    monkeypatch.undo()
    assert post(http, body, delivery="d-2").status_code == 202  # GitHub's retry gets through


def test_health_readiness_and_metrics(
    service: tuple[Runtime, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, http = service
    monkeypatch.setattr(rt, "settings", replace(rt.settings, github_token="ghp_personal"))
    assert http.get("/healthz").json() == {"status": "ok"}
    assert http.get("/readyz").json() == {"status": "ready"}
    post(http, json.dumps(labeled()).encode())
    text = http.get("/metrics").text
    assert (
        'recipe_sync_webhook_deliveries_total{event="pull_request",outcome="accepted"} 1.0' in text
    )
    assert "recipe_sync_webhook_ack_seconds_count 1.0" in text

    def down() -> None:
        raise OSError("database is gone")

    monkeypatch.setattr(rt.store, "ping", down)
    response = http.get("/readyz")
    assert response.status_code == 503 and response.json()["database"] == "OSError"


def test_readyz_is_503_without_github_credentials(service: tuple[Runtime, TestClient]) -> None:
    _, http = service  # configured without credentials
    response = http.get("/readyz")
    assert response.status_code == 503  # was 200 "ready" (issue #35)
    assert response.json()["credentials"].startswith(
        "no GitHub credentials: set RECIPE_SYNC_APP_ID and RECIPE_SYNC_PRIVATE_KEY_PATH"
    )


def test_without_credentials_the_job_fails_clearly_and_stays_retryable(
    service: tuple[Runtime, TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    rt, http = service
    assert post(http, json.dumps(labeled()).encode(), delivery="d-3").status_code == 202
    task = rt.huey.dequeue()
    rt.huey.execute(task)
    assert "no GitHub credentials: set RECIPE_SYNC_APP_ID" in caplog.text
    found = rt.store.deliveries.get("d-3")
    assert found is not None and found[1] == "enqueued"  # not failed: retried later
    assert len(rt.huey.scheduled()) == 1  # rescheduled with backoff


def test_the_webhook_path_answers_only_post(service: tuple[Runtime, TestClient]) -> None:
    _, http = service
    response = http.get("/webhooks/github")
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    assert http.get("/webhooks/github/").status_code == 404  # only the exact path is the hook
