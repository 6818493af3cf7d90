"""The opt-in dashboard issue against the fake GitHub over real HTTP: created once, edited
only when its content changes, never duplicated (found by marker + bot author across
pages), refreshed after each sync and nightly, and off unless the policy turns it on."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.audit import AuditReport
from bot.fixtures import SeedFixtures
from bot.github.sanitize import MAX_BODY
from bot.service.dashboard import (
    NIGHTLY_TASK,
    claim,
    nightly,
    refresh_dashboard,
    request_dashboard,
)
from bot.service.dashboard_issue import DASHBOARD_MARKER, dashboard_body
from bot.sources import GitTreeSource
from tests.audit.issues_fake import IssuesFakeGitHub
from tests.audit.test_audit_render import big_report
from tests.service.conftest import BENCH, BOT, MAINTAINER, RECIPES, Harness
from tests.service.fakegithub import ServerThread

H100_SCRIPT = "benchmarks/single_node/fixed_seq_len/gptoss_fp4_h100.sh"


def files_at(repo: Path, ref: str) -> dict[str, str]:
    source = GitTreeSource(repo, ref)
    return {path: source.read_bytes(path).decode() for path in source.iter_files()}


@pytest.fixture
def fake(
    seed: SeedFixtures,
    tmp_path: Path,
    app_key: tuple[str, str],
) -> Iterator[IssuesFakeGitHub]:
    github = IssuesFakeGitHub(tmp_path / "remotes", public_key=app_key[1])
    with ServerThread(github.app) as server:
        github.base_url = server.url
        github.create_repo(BENCH, files_at(seed.bench_repo, seed.bench_pr_head))
        github.create_repo(RECIPES, files_at(seed.recipes_repo, seed.recipes_base))
        github.set_permission(BENCH, MAINTAINER, "write", "maintain")
        github.add_token("ghp_personal", "someone")
        yield github


def make_harness(
    fake: IssuesFakeGitHub, tmp_path: Path, key: tuple[str, str], *, on: bool, db: str = "a"
) -> Harness:
    harness = Harness(fake, tmp_path, key, database_url=f"sqlite:///{tmp_path / f'{db}.db'}")
    harness.rt.policy = harness.rt.policy.model_copy(update={"dashboard": on})
    return harness


@pytest.fixture
def harness(
    fake: IssuesFakeGitHub,
    tmp_path: Path,
    app_key: tuple[str, str],
) -> Iterator[Harness]:
    h = make_harness(fake, tmp_path, app_key, on=True)
    yield h
    h.close()


def dashboards(fake: IssuesFakeGitHub) -> list[dict[str, object]]:
    return [i for i in fake.issues_of(BENCH, BOT) if str(i["body"]).startswith(DASHBOARD_MARKER)]


def issue_writes(fake: IssuesFakeGitHub) -> list[tuple[str, str, int]]:
    return [r for r in fake.requests if r[0] in ("POST", "PATCH") and "/issues" in r[1]]


def test_disabled_by_default(
    fake: IssuesFakeGitHub,
    tmp_path: Path,
    app_key: tuple[str, str],
) -> None:
    h = Harness(fake, tmp_path, app_key)
    try:
        assert h.rt.policy.dashboard is False  # rules/policy.yaml ships it off
        assert request_dashboard(h.rt, BENCH) is False
        assert refresh_dashboard(h.rt, BENCH) == "disabled"
        assert nightly(h.rt) == []
        assert not [r for r in fake.requests if "/issues" in r[1]]
    finally:
        h.close()


def test_created_once_then_edited_only_on_change(
    fake: IssuesFakeGitHub,
    harness: Harness,
    tmp_path: Path,
    app_key: tuple[str, str],
) -> None:
    rt = harness.rt
    first = refresh_dashboard(rt, BENCH)
    (board,) = dashboards(fake)
    assert first == f"created #{board['number']}"
    assert board["title"] == "recipe-sync: recipe drift dashboard" and board["state"] == "open"
    body = str(board["body"])
    assert len(body) <= MAX_BODY
    assert "**40 launch lines** of **6 vLLM config keys**" in body
    assert "## Drifted (7)" in body and "drifted (3)" in body
    assert "unmapped (no recipe for model zai-org/GLM-5-FP8)" in body

    # nothing changed: no write at all
    writes = len(issue_writes(fake))
    assert refresh_dashboard(rt, BENCH) == f"unchanged #{board['number']}"
    assert len(issue_writes(fake)) == writes

    # the default branch changes: the same issue is edited in place
    script = files_at(fake.repos[BENCH].path, "main")[H100_SCRIPT]
    fixed = script.replace("NUM_GPUS=$(nvidia-smi -L | wc -l)", "NUM_GPUS=2")
    parent = fake.repos[BENCH].ref_sha("refs/heads/main")
    fake.commit(BENCH, "main", {H100_SCRIPT: fixed}, message="pin TP", parent=parent)
    assert refresh_dashboard(rt, BENCH) == f"updated #{board['number']}"
    (edited,) = dashboards(fake)
    assert edited["number"] == board["number"] and edited["body"] != body
    assert "## Unresolved" not in str(edited["body"])  # the h100 rows are compared now
    assert [r[0] for r in issue_writes(fake)[writes:]] == ["PATCH"]

    # a new process with an empty store: found again by marker + author, across pages
    for n in range(130):  # newer issues by the bot push the dashboard to page 2
        fake.add_issue(BENCH, f"other {n}", "not a dashboard", BOT)
    fake.add_issue(BENCH, "quoting", f"{DASHBOARD_MARKER}\nhijack?", "mallory")
    fresh = make_harness(fake, tmp_path, app_key, on=True, db="b")
    try:
        assert refresh_dashboard(fresh.rt, BENCH) == f"unchanged #{board['number']}"
        listed = [r for r in fake.requests if r[0] == "GET" and r[1].endswith(f"{BENCH}/issues")]
        assert len(listed) >= 2  # paginated
    finally:
        fresh.close()
    assert len(dashboards(fake)) == 1


def test_a_user_quoting_the_marker_does_not_hijack_it(
    fake: IssuesFakeGitHub, harness: Harness
) -> None:
    mallory = fake.add_issue(BENCH, "dashboard?", f"{DASHBOARD_MARKER}\nmine", "mallory")
    result = refresh_dashboard(harness.rt, BENCH)
    (board,) = dashboards(fake)
    assert result == f"created #{board['number']}" and board["number"] != mallory
    assert fake.issues[BENCH][mallory]["body"] == f"{DASHBOARD_MARKER}\nmine"


def test_duplicates_left_by_a_race_are_closed(fake: IssuesFakeGitHub, harness: Harness) -> None:
    body = f"{DASHBOARD_MARKER}\nold"
    older = fake.add_issue(BENCH, "recipe-sync: recipe drift dashboard", body, BOT)
    newer = fake.add_issue(BENCH, "recipe-sync: recipe drift dashboard", body, BOT)
    assert refresh_dashboard(harness.rt, BENCH) == f"updated #{older}"
    assert fake.issues[BENCH][newer]["state"] == "closed"
    assert fake.issues[BENCH][older]["state"] == "open"


def test_body_stays_under_the_limit() -> None:
    report: AuditReport = big_report(2000)
    body = dashboard_body(report)
    assert body.startswith(DASHBOARD_MARKER) and len(body) <= MAX_BODY < 65_536
    assert "more launch lines are not shown (length limit)" in body
    assert "| drifted | 2000 |" in body


def test_refreshed_after_each_sync_and_nightly(fake: IssuesFakeGitHub, harness: Harness) -> None:
    parent = fake.repos[BENCH].ref_sha("refs/heads/main")
    fake.commit(BENCH, "bump", {"README.md": "bench\n"}, parent=parent)
    number = fake.open_pull(BENCH, head_ref="bump")
    assert harness.label(number).status_code == 202
    harness.drain()
    assert len(dashboards(fake)) == 1  # the sync asked for a refresh, the queue ran it
    assert fake.calls("POST", rf"/repos/{BENCH}/issues$") == 1

    rt = harness.rt
    # what the consumer's scheduler enqueues at a given minute (UTC)
    due = [t.name for t in rt.huey.read_periodic(datetime.datetime(2026, 9, 14, 3, 17))]
    assert due == [NIGHTLY_TASK]
    assert rt.huey.read_periodic(datetime.datetime(2026, 9, 14, 4, 17)) == []
    assert nightly(rt) == [BENCH]
    assert nightly(rt) == []  # claimed for today (several consumers fire it)
    harness.drain()
    assert len(dashboards(fake)) == 1 and fake.calls("POST", rf"/repos/{BENCH}/issues$") == 1

    # a burst of requests coalesces into one waiting refresh
    assert request_dashboard(rt, BENCH) is True
    assert request_dashboard(rt, BENCH) is False
    assert harness.drain() == 1


def test_refresh_lease_is_exclusive_until_stale(harness: Harness) -> None:
    rt = harness.rt
    assert claim(rt, "k", 60.0) is True
    assert claim(rt, "k", 60.0) is False
    now = rt.clock
    rt.clock = lambda: now() + 120.0
    try:
        assert claim(rt, "k", 60.0) is True  # its holder died: taken over
    finally:
        rt.clock = now
