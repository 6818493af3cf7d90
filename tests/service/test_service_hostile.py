"""Hostile webhook input: 4xx never 5xx, a streamed body capped while it arrives, a lost
enqueue recovered by GitHub's redelivery, an unusable private key failed with its reason."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update
from starlette.requests import Request

from bot.github.signature import sign
from bot.service.ack import UNQUEUED_AFTER
from bot.service.boot import boot
from bot.service.reconcile import reconcile_once
from bot.service.runtime import Runtime
from bot.service.tasks import run_delivery
from bot.service.web import MAX_PAYLOAD, TooLarge, create_app, read_capped
from bot.settings import Settings
from bot.state.models import Delivery
from tests.service.conftest import SECRET
from tests.service.test_service_webhook import labeled, post, queued


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[Runtime, TestClient]]:
    rt = boot(Settings(webhook_secret=SECRET, data_dir=tmp_path / "data"))
    with TestClient(create_app(rt), raise_server_exceptions=False) as http:
        yield rt, http
    rt.close()


def test_a_chunked_body_without_length_is_cut_off_at_the_cap() -> None:
    sent = 0
    chunk = b"x" * (1024 * 1024)

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent > 200 * len(chunk):  # a client that would go on forever
            raise AssertionError("read past the cap")
        sent += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    scope = {"type": "http", "method": "POST", "path": "/", "headers": [], "query_string": b""}
    with pytest.raises(TooLarge):
        asyncio.run(read_capped(Request(scope, receive)))
    assert sent <= MAX_PAYLOAD + len(chunk)


def test_a_chunked_oversize_body_is_413(service: tuple[Runtime, TestClient]) -> None:
    rt, http = service

    def stream() -> Iterator[bytes]:
        for _ in range(27):
            yield b" " * (1024 * 1024)

    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "big",
        "X-Hub-Signature-256": "sha256=" + "0" * 64,
    }
    response = http.post("/webhooks/github", content=stream(), headers=headers)
    assert response.status_code == 413 and queued(rt) == 0


def test_non_ascii_signature_header_is_401(service: tuple[Runtime, TestClient]) -> None:
    rt, http = service
    body = json.dumps(labeled()).encode()
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "d",
        "X-Hub-Signature-256": "sha256=é".encode("latin-1"),
    }
    response = http.post("/webhooks/github", content=body, headers=headers)
    assert response.status_code == 401 and queued(rt) == 0


def test_non_ascii_event_and_delivery_headers_are_400(service: tuple[Runtime, TestClient]) -> None:
    rt, http = service
    body = json.dumps(labeled()).encode()
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "dé".encode("latin-1"),
        "X-Hub-Signature-256": sign(SECRET, body),
    }
    assert http.post("/webhooks/github", content=body, headers=headers).status_code == 400
    assert queued(rt) == 0


def test_deeply_nested_signed_json_is_400(service: tuple[Runtime, TestClient]) -> None:
    rt, http = service
    for depth in (1000, 100_000):
        response = post(http, b"[" * depth + b"]" * depth)
        assert response.status_code == 400, response.text
    # inside a real payload, where the label's name is expected: refused (beyond the parser's
    # 1,024 levels) or not our label (ignored); never accepted, never a 5xx
    for depth in (1000, 5000):
        nested = _mutate("label.name", "x").replace(b'"x"', b'{"a":' * depth + b"1" + b"}" * depth)
        assert post(http, nested).status_code in (200, 400)
    assert queued(rt) == 0
    # where nothing is read, it does not matter: the delivery is accepted as it stands
    nested = _mutate("pull_request.head.repo.owner", "x").replace(b'"x"', b"[" * 1000 + b"]" * 1000)
    assert post(http, nested).status_code == 202
    assert rt.store.deliveries.count() == 1 and len(rt.huey.pending()) == 1


def _mutate(path: str, value: Any) -> bytes:
    payload = labeled()
    node = payload
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value
    return json.dumps(payload).encode()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("pull_request.number", "seven"),
        ("pull_request.number", [1]),
        ("pull_request.number", {"n": 1}),
        ("pull_request.number", 1.5),
        ("pull_request.head.sha", {"x": ["y"] * 10}),
        ("pull_request.head", "a string"),
        ("label", "a string"),
        ("repository.full_name", ["a", "b"]),
        ("repository.full_name", "r" * 10_000),
        ("installation", {"id": "12"}),
        ("sender", {"login": 5}),
        ("pull_request", []),
    ],
)
def test_wrongly_typed_signed_fields_are_400(
    service: tuple[Runtime, TestClient], path: str, value: Any
) -> None:
    rt, http = service
    response = post(http, _mutate(path, value))
    assert response.status_code in (200, 400), response.text
    if response.status_code == 200:
        assert response.json()["status"] == "ignored"
    assert queued(rt) == 0


def test_invalid_content_length_is_400_not_500(service: tuple[Runtime, TestClient]) -> None:
    _, http = service
    body = b"{}"
    headers = {
        "X-GitHub-Event": "ping",
        "X-GitHub-Delivery": "d",
        "X-Hub-Signature-256": sign(SECRET, body),
        "Content-Length": "2x",
    }
    response = http.post("/webhooks/github", content=body, headers=headers)
    assert 400 <= response.status_code < 500


def test_redelivery_of_a_recorded_but_never_enqueued_delivery_is_enqueued(
    service: tuple[Runtime, TestClient],
) -> None:
    rt, http = service
    body = json.dumps(labeled()).encode()
    # what a web process killed between the insert and the enqueue leaves behind
    assert rt.store.deliveries.claim(
        "lost-1", event="pull_request", action="labeled", repo="o/r", trigger="{}"
    )
    redelivered = post(http, body, delivery="lost-1")  # at once: was "duplicate" for 10 s
    assert redelivered.status_code == 202 and redelivered.json()["status"] == "accepted"
    assert len(rt.huey.pending()) == 1
    # and exactly once: a third delivery is a duplicate again
    assert post(http, body, delivery="lost-1").json()["status"] == "duplicate"
    assert len(rt.huey.pending()) == 1


def test_a_delivery_that_never_reached_the_queue_is_enqueued_by_the_reconciler(
    service: tuple[Runtime, TestClient],
) -> None:
    rt, http = service
    accepted = post(http, json.dumps(labeled()).encode(), delivery="queued-1")
    assert accepted.status_code == 202
    # the ack marks a delivery queued after answering (off the answer's path): on a loaded
    # machine the mark may land a moment after the 202
    _until_queued(rt, "queued-1")
    assert rt.store.deliveries.claim(
        "lost-2", event="pull_request", action="labeled", repo="o/r", trigger="{}"
    )
    rt.huey.storage.flush_queue()
    assert reconcile_once(rt)["deliveries"] == []  # recorded just now: its enqueue may follow
    with rt.store.db.tx() as session:
        session.execute(update(Delivery).values(updated_at=rt.clock() - UNQUEUED_AFTER - 1))
    # was left to the 15-minute sweep of unfinished deliveries; one that reached the queue
    # (queued-1) is not enqueued again
    assert reconcile_once(rt)["deliveries"] == ["lost-2"]
    assert len(rt.huey.pending()) == 1
    assert reconcile_once(rt)["deliveries"] == []  # queued now
    assert rt.store.deliveries.get("lost-2") is not None


def _until_queued(rt: Runtime, delivery_id: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while (found := rt.store.deliveries.get(delivery_id)) is None or found[1] != "queued":
        assert time.monotonic() < deadline, f"{delivery_id} not marked queued: {found}"
        time.sleep(0.01)


def test_a_delivery_is_processed_by_one_worker_at_a_time(
    service: tuple[Runtime, TestClient],
) -> None:
    rt, _ = service
    assert rt.store.deliveries.claim(
        "twice", event="pull_request", action="labeled", repo="o/r", trigger="{}"
    )
    assert rt.store.deliveries.start("twice", stale_after=30)
    assert not rt.store.deliveries.start("twice", stale_after=30)  # a live worker has it
    assert rt.store.deliveries.stale_processing(30) == []
    with rt.store.db.tx() as session:
        session.execute(
            update(Delivery).where(Delivery.delivery_id == "twice").values(updated_at=0.0)
        )
    assert rt.store.deliveries.stale_processing(30) == ["twice"]  # its worker died: resumable
    assert rt.store.deliveries.start("twice", stale_after=30)


def test_an_unparseable_private_key_fails_the_delivery_with_the_reason(
    tmp_path: Path,
) -> None:
    key = tmp_path / "key.pem"
    key.write_text("-----BEGIN RSA PRIVATE KEY-----\nnot a key\n-----END RSA PRIVATE KEY-----\n")
    settings = Settings(
        webhook_secret=SECRET, data_dir=tmp_path / "data", app_id="1", private_key_path=key
    )
    rt = boot(settings)
    try:
        with TestClient(create_app(rt), raise_server_exceptions=False) as http:
            delivery = str(uuid.uuid4())
            assert post(http, json.dumps(labeled()).encode(), delivery=delivery).status_code == 202
            outcome = run_delivery(rt, delivery)
            assert outcome.startswith("failed: ") and "not a usable PEM private key" in outcome
            assert "not a key" not in outcome  # the key itself is never echoed
            found = rt.store.deliveries.get(delivery)
            assert found is not None and found[1] == "failed"
            assert run_delivery(rt, delivery) == "already failed"  # no retry loop
            ready = http.get("/readyz")
            assert ready.status_code == 503
            assert "not a usable PEM private key" in ready.json()["credentials"]
            assert b"recipe_sync_credentials_invalid 1.0" in http.get("/metrics").content
    finally:
        rt.close()


def _post_labeled(http: TestClient, content_type: str) -> Any:
    """A signed ``labeled`` delivery declared as ``content_type``."""
    body = json.dumps(labeled()).encode()
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(SECRET, body),
        "Content-Type": content_type,
    }
    return http.post("/webhooks/github", content=body, headers=headers)


@pytest.mark.parametrize(
    "content_type",
    ["application/x-www-form-urlencoded", "text/plain", "application/jsonp", "multipart/form-data"],
)
def test_a_body_that_is_not_declared_json_is_415(
    service: tuple[Runtime, TestClient], content_type: str
) -> None:
    rt, http = service
    response = _post_labeled(http, content_type)
    assert response.status_code == 415
    assert "application/json" in response.json()["error"]
    assert queued(rt) == 0


def test_json_with_a_charset_parameter_is_accepted(service: tuple[Runtime, TestClient]) -> None:
    rt, http = service
    assert _post_labeled(http, "Application/JSON; charset=utf-8").status_code == 202
    assert len(rt.huey.pending()) == 1 and rt.store.deliveries.count() == 1


@pytest.mark.parametrize(
    "body",
    [b'{"a": NaN}', b"\xff\xfe{}", b'{"a": 1}  x', b'"\\ud800"', b"[1, 2,]"],
)
def test_invalid_json_is_400(service: tuple[Runtime, TestClient], body: bytes) -> None:
    rt, http = service
    response = post(http, body)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "payload is not JSON"
    assert queued(rt) == 0
