"""GitHub's side of the REST contract: the fake refuses what GitHub refuses (its OpenAPI
description and documented limits, tests/service/openapi_contract.py), and the bot stays
within every limit by construction."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bot.contract import Annotation, SyncOutcome
from bot.markdown import truncate_utf8
from bot.service.checks import annotation_payload
from tests.service.conftest import BENCH, RECIPES, SCRIPT, Harness, push
from tests.service.engine_double import DeterministicTestEngine
from tests.service.fakegithub import FakeGitHub, TokenInfo
from tests.service.openapi_contract import contract, missing_reason

TOKEN = {"Authorization": "token ghp_personal"}


@pytest.fixture
def http(fake: FakeGitHub) -> Iterator[httpx.Client]:
    fake.rejections_expected = True  # these tests send what GitHub refuses, on purpose
    with httpx.Client(base_url=fake.base_url, headers=TOKEN) as client:
        yield client


def installation_token(fake: FakeGitHub) -> dict[str, str]:
    """Headers with an installation token for the benchmark repository (check runs need one)."""
    fake.tokens["ghs_contract"] = TokenInfo(
        "recipe-sync[bot]", frozenset({BENCH}), {"checks": "write", "pull_requests": "write"}
    )
    return {"Authorization": "token ghs_contract"}


def refused(response: httpx.Response) -> str:
    assert response.status_code == 422, (response.status_code, response.text[:300])
    return " ".join(e["message"] for e in response.json()["errors"])


def test_the_fake_holds_githubs_documented_limits(fake: FakeGitHub, http: httpx.Client) -> None:
    number = fake.open_pull(BENCH, head_ref="main")
    long_body = refused(http.patch(f"/repos/{BENCH}/pulls/{number}", json={"body": "x" * 70_000}))
    assert "maximum is 65536 characters" in long_body  # was accepted
    assert "256" in refused(http.patch(f"/repos/{BENCH}/pulls/{number}", json={"title": "t" * 257}))
    comment = http.post(f"/repos/{BENCH}/issues/{number}/comments", json={"body": "hi"}).json()
    edit = http.patch(
        f"/repos/{BENCH}/issues/comments/{comment['id']}", json={"body": "x" * 70_000}
    )
    assert "65536" in refused(edit)  # was accepted
    assert "per_page" in refused(http.get(f"/repos/{BENCH}/pulls", params={"per_page": 150}))
    http.headers.update(installation_token(fake))
    run = {"name": "n", "head_sha": "a" * 40}
    many = [{"path": "a", "start_line": 1, "end_line": 1, "annotation_level": "notice",
             "message": "m"}] * 51  # fmt: skip
    over = refused(http.post(f"/repos/{BENCH}/check-runs", json={**run, "output": {
        "title": "t", "summary": "s", "annotations": many}}))  # fmt: skip
    assert "50" in over
    wide = [{**many[0], "message": "é" * 40_000}]  # 40,000 characters, 80,000 bytes
    assert "64 KB" in refused(http.post(f"/repos/{BENCH}/check-runs", json={**run, "output": {
        "title": "t", "summary": "s", "annotations": wide}}))  # fmt: skip
    assert [method for method, _, _ in fake.rejected] == ["PATCH", "PATCH", "PATCH", "GET", "POST",
                                                          "POST"]  # fmt: skip


@pytest.mark.skipif(missing_reason() is not None, reason=missing_reason() or "")
def test_the_fake_checks_requests_and_responses_against_githubs_description(
    fake: FakeGitHub, http: httpx.Client
) -> None:
    assert contract().described
    number = fake.open_pull(BENCH, head_ref="main")
    http.headers.update(installation_token(fake))
    created = http.post(f"/repos/{BENCH}/check-runs", json={"name": "n", "head_sha": "a" * 40})
    run_id = created.json()["id"]
    assert "status" in refused(http.patch(f"/repos/{BENCH}/check-runs/{run_id}",
                                          json={"status": "bogus"}))  # fmt: skip
    assert "conclusion" in refused(http.patch(f"/repos/{BENCH}/check-runs/{run_id}",
                                              json={"conclusion": "great"}))  # fmt: skip
    assert "state" in refused(http.get(f"/repos/{BENCH}/pulls", params={"state": "merged"}))
    assert "required" in refused(http.post(f"/repos/{BENCH}/pulls", json={"title": "t"}))
    assert http.get(f"/repos/{BENCH}/pulls/not-a-number").status_code == 422
    # what it serves is GitHub's shape, timestamps in whole seconds
    pull = http.get(f"/repos/{BENCH}/pulls/{number}")
    assert pull.status_code == 200 and not fake.invalid_responses
    assert "." not in pull.json()["base"]["repo"]["pushed_at"]


def test_link_pagination_is_githubs(fake: FakeGitHub, http: httpx.Client) -> None:
    for index in range(5):
        fake.open_pull(BENCH, head_ref="main", title=f"p{index}")
    first = http.get(f"/repos/{BENCH}/pulls", params={"per_page": 2})
    assert len(first.json()) == 2
    links = dict(
        (part.split('; rel="')[1].rstrip('"'), part.split(">")[0].lstrip("<"))
        for part in first.headers["link"].split(", ")
    )
    assert set(links) == {"next", "last"} and "page=3" in links["last"]
    last = http.get(links["last"].removeprefix(fake.base_url))
    assert [p["title"] for p in last.json()] == ["p0"]
    assert 'rel="prev"' in last.headers["link"] and 'rel="next"' not in last.headers["link"]


def test_titles_keep_their_suffix_within_githubs_256_characters(
    harness: Harness, fake: FakeGitHub
) -> None:
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    harness.label(number)
    harness.drain()
    (pr,) = fake.pulls[RECIPES].values()
    pr["title"] = "A maintainer's long title " + "x" * 224  # 250 characters
    fake.close_pull(BENCH, number)
    payload = fake.pull_request_payload(BENCH, number, "closed", sender="author")
    harness.deliver("pull_request", payload)
    harness.drain()
    assert pr["state"] == "closed"  # was: a 263-character title, 422, the PR left open
    assert len(pr["title"]) <= 256 and pr["title"].endswith(" — autoclosed")
    assert not fake.rejected


def test_annotation_messages_are_cut_by_bytes() -> None:
    wide = Annotation(SCRIPT, 1, 1, "warning", "é" * 40_000, "t")  # 80,000 bytes
    message = annotation_payload(wide)["message"]
    assert len(message.encode()) <= 64 * 1024 and message.endswith(" …")
    assert truncate_utf8("ab", 2) == "ab" and truncate_utf8("aé€", 5, "…") == "a…"


def test_a_long_non_ascii_annotation_completes_the_check_run(
    harness: Harness, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = DeterministicTestEngine.sync

    def wide(self: DeterministicTestEngine, request: Any) -> SyncOutcome:
        outcome = original(self, request)
        note = Annotation(SCRIPT, 1, 1, "warning", "é" * 40_000, "long")
        return SyncOutcome(**{**outcome.__dict__, "annotations": (note,)})

    monkeypatch.setattr(DeterministicTestEngine, "sync", wide)
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    harness.label(number)
    harness.drain()
    (check,) = fake.check_runs_on(BENCH)
    assert check["conclusion"] == "action_required"  # was failure: 422 on 80,000 bytes
    assert not fake.rejected


def test_a_422_on_creating_a_pull_request_is_permanent_with_githubs_message(
    harness: Harness, fake: FakeGitHub
) -> None:
    fake.inject(
        "POST",
        r"/repos/org/recipes/pulls$",
        422,
        message="Validation Failed",
        errors=["No commits between main and recipe-sync/bench-1"],
        times=10,
    )
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    harness.label(number)
    harness.drain()
    assert fake.calls("POST", r"/repos/org/recipes/pulls$") == 0
    posts = [r for r in fake.requests if r[0] == "POST" and r[1].endswith("/recipes/pulls")]
    assert len(posts) == 1  # was retried 6 times as transient
    (check,) = fake.check_runs_on(BENCH)
    assert check["conclusion"] == "failure"
    assert "No commits between main and recipe-sync/bench-1" in check["output"]["summary"]
