"""The opt-in dashboard issue against the fake GitHub over real HTTP: created once, edited
only when its content changes, never duplicated (found by marker + bot author across
pages), refreshed after each sync and nightly, and off unless the policy turns it on."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.audit import AuditReport
from bot.fixtures import SeedFixtures
from bot.present.dashboard import parse_actions
from bot.present.posted import DASHBOARD_MARKER, MAX_BODY
from bot.service.dashboard import (
    NIGHTLY_TASK,
    claim,
    nightly,
    refresh_dashboard,
    request_dashboard,
)
from bot.service.dashboard_issue import dashboard_body
from bot.service.dispatch import dispatch
from bot.service.events import DashboardEdited, Ignored
from bot.service.intake import classify
from bot.sources import GitTreeSource
from bot.state.records import Approval
from tests.audit.issues_fake import IssuesFakeGitHub
from tests.audit.test_audit_render import DRIFT, big_report, row
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
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[IssuesFakeGitHub]:
    github = IssuesFakeGitHub(tmp_path / "remotes", public_key=app_key[1])
    github.enforce_git_permissions(monkeypatch)
    with ServerThread(github.app) as server:
        github.base_url = server.url
        github.create_repo(BENCH, files_at(seed.bench_repo, seed.bench_pr_head))
        github.create_repo(RECIPES, files_at(seed.recipes_repo, seed.recipes_base))
        github.set_permission(BENCH, MAINTAINER, "write", "maintain")
        github.add_token("ghp_personal", "someone")
        yield github
    github.check_contract()


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
    assert "| `models/deepseek-ai/DeepSeek-V4.1-Flash.yaml` | 7 | 0 | 0 | 0 |" in body
    assert "**drifted (3)**" in body
    assert "**unmapped**: no recipe for model zai-org/GLM-5-FP8" in body

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
    assert "**unresolved**" not in str(edited["body"])  # the h100 rows are compared now
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
    assert "| (no recipe) acme/Acme-7B | 2000 | 0 | 0 | 2000 |" in body
    assert max(len(line) for line in body.splitlines()) < 1000


def test_body_fits_by_design_one_line_per_recipe() -> None:
    rows = [
        row(f"key-{i}", "drifted", c, flags=(DRIFT,), recipe_file=f"models/o/M{i}.yaml")
        for i in range(600)
        for c in (4, 8, 16)
    ]
    report = AuditReport("b", "r", tuple(rows))
    body = dashboard_body(report, details_url="https://example.test/d.html")
    assert len(body) <= MAX_BODY
    assert body.count("| `models/o/M") == 600  # every recipe keeps its summary line
    cut = "more recipes are not shown (length limit); see [the full report]"
    assert cut in body and "(https://example.test/d.html)" in body
    assert body.rstrip().endswith("</details>") or cut in body


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


def edited_payload(fake: IssuesFakeGitHub, number: int, sender: str) -> dict[str, object]:
    issue = fake.issues[BENCH][number]
    return {
        "action": "edited",
        "issue": {"number": number, "user": {"login": issue["user"]}, "body": issue["body"]},
        "repository": {"full_name": BENCH},
        "sender": {"login": sender, "type": "User"},
    }


def tick(fake: IssuesFakeGitHub, number: int, box: str, mark: str = "x") -> None:
    """What a maintainer does in the browser: tick (or untick) one box of the body."""
    issue = fake.issues[BENCH][number]
    lines = str(issue["body"]).splitlines()
    (index,) = [i for i, line in enumerate(lines) if box in line]
    lines[index] = f"- [{mark}]" + lines[index][5:]
    issue["body"] = "\n".join(lines)


def test_boxes_ignore_a_flag_until_unticked(fake: IssuesFakeGitHub, harness: Harness) -> None:
    rt = harness.rt
    refresh_dashboard(rt, BENCH)
    (board,) = dashboards(fake)
    number = int(str(board["number"]))
    recipe = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"
    boxes = {(b.verb, b.recipe, b.flag): b.checked for b in parse_actions(str(board["body"]))}
    assert boxes[("ignore", recipe, "--moe-backend")] is False
    assert boxes[("rerun", recipe, "")] is False
    assert ("rerun", "models/deepseek-ai/DeepSeek-R1.yaml", "") not in boxes  # nothing drifts
    assert f"| `{recipe}` | 7 | 0 | 0 | 0 |" in str(board["body"])

    # someone without write permission ticks a box: nothing is recorded
    box = f"recipe-sync:ignore {recipe} --moe-backend -->"
    tick(fake, number, box)
    assert harness.deliver("issues", edited_payload(fake, number, "mallory")).status_code == 202
    harness.drain()
    assert rt.store.choices.ignored_flags(BENCH) == {}

    # a maintainer does: recorded, and the refreshed dashboard keeps the box ticked
    assert harness.deliver("issues", edited_payload(fake, number, MAINTAINER)).status_code == 202
    harness.drain()
    assert rt.store.choices.ignored_flags(BENCH) == {recipe: frozenset({"--moe-backend"})}
    body = str(fake.issues[BENCH][number]["body"])
    assert f"- [x] <!-- {box}" in body
    assert "`--moe-backend` `aiter`" not in body  # no longer listed as drift
    assert f"| `{recipe}` | 7 | 0 | 0 | 0 |" in body  # other flags still drift on these rows

    # later runs honour it: a fresh refresh (nightly) still leaves it out
    request_dashboard(rt, BENCH)
    harness.drain()
    assert "`--moe-backend` `aiter`" not in str(fake.issues[BENCH][number]["body"])

    # unticked: counted again
    tick(fake, number, box, mark=" ")
    harness.deliver("issues", edited_payload(fake, number, MAINTAINER))
    harness.drain()
    assert rt.store.choices.ignored_flags(BENCH) == {}
    assert "`--moe-backend` `aiter`" in str(fake.issues[BENCH][number]["body"])


def test_ignoring_every_drifting_flag_makes_the_rows_aligned(
    fake: IssuesFakeGitHub, harness: Harness
) -> None:
    rt = harness.rt
    recipe = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"
    for flag in ("--max-num-seqs", "--moe-backend", "AITER_TRITON_LOG_LEVEL", "image"):
        assert rt.store.choices.set_ignored(BENCH, recipe, flag, ignored=True, login=MAINTAINER)
    assert not rt.store.choices.set_ignored(BENCH, recipe, "image", ignored=True, login=MAINTAINER)
    refresh_dashboard(rt, BENCH)
    (board,) = dashboards(fake)
    body = str(board["body"])
    assert f"| `{recipe}` | 0 | 0 | 0 | 7 |" in body
    assert f"<!-- recipe-sync:rerun {recipe} -->" not in body  # nothing left to re-run
    assert body.count(f"- [x] <!-- recipe-sync:ignore {recipe} ") == 4


def test_rerun_box_syncs_the_recipes_benchmark_prs(
    fake: IssuesFakeGitHub, harness: Harness
) -> None:
    rt = harness.rt
    recipe = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"
    refresh_dashboard(rt, BENCH)
    (board,) = dashboards(fake)
    number = int(str(board["number"]))
    # benchmark PR 7 was synced before and has an open alignment PR for this recipe
    rt.store.syncs.request(BENCH, 7, approval=Approval("a" * 40, MAINTAINER, False), dry_run=False)
    rt.store.alignments.save(
        bench_repo=BENCH, bench_pr=7, recipe_path=recipe, recipes_repo=RECIPES, branch="b"
    )
    tick(fake, number, f"recipe-sync:rerun {recipe} -->")
    trigger = DashboardEdited(repo=BENCH, action="edited", sender=MAINTAINER, pr_number=number)
    assert dispatch(rt, trigger).startswith(f"re-run {recipe}: sync ")
    harness.drain()
    body = str(fake.issues[BENCH][number]["body"])
    assert f"- [ ] <!-- recipe-sync:rerun {recipe} -->" in body  # unticked by the refresh


def test_edits_by_the_bot_or_of_other_issues_are_not_dispatched() -> None:
    def payload(user: str, sender: str, body: str) -> dict[str, object]:
        return {
            "action": "edited",
            "issue": {"number": 3, "user": {"login": user}, "body": body},
            "repository": {"full_name": BENCH},
            "sender": {"login": sender, "type": "Bot" if sender == BOT else "User"},
        }

    def kind(event: dict[str, object]) -> str:
        found = classify(
            "issues", event, trigger_label="l", comment_command="/recipe-sync", bot_login=BOT
        )
        return "ignored" if isinstance(found, Ignored) else found.kind

    board = f"{DASHBOARD_MARKER}\n- [x] …"
    assert kind(payload(BOT, MAINTAINER, board)) == "dashboard_edit"
    assert kind(payload(BOT, BOT, board)) == "ignored"  # the bot's own refresh
    assert kind(payload("mallory", MAINTAINER, board)) == "ignored"  # a look-alike issue
    assert kind(payload(BOT, MAINTAINER, "another issue")) == "ignored"


def test_the_body_links_the_html_report_the_service_serves(
    fake: IssuesFakeGitHub, tmp_path: Path, app_key: tuple[str, str]
) -> None:
    h = Harness(
        fake,
        tmp_path,
        app_key,
        database_url=f"sqlite:///{tmp_path / 'c.db'}",
        public_url="https://rs.example",
    )
    h.rt.policy = h.rt.policy.model_copy(update={"dashboard": True})
    try:
        refresh_dashboard(h.rt, BENCH)
        (board,) = dashboards(fake)
        url = f"https://rs.example/dashboards/{BENCH}.html"
        assert f"[the full report]({url})" in str(board["body"])
        page = h.client.get(f"/dashboards/{BENCH}.html")
        assert page.status_code == 200 and page.text.startswith("<!DOCTYPE html>")
        assert "id=heatmap" in page.text
        assert h.client.get("/dashboards/nobody/none.html").status_code == 404
        assert h.client.get("/dashboards/..%2F..%2Fetc/passwd.html").status_code == 404
    finally:
        h.close()


def test_an_alias_bomb_master_config_fails_the_refresh_in_one_line(
    fake: IssuesFakeGitHub, harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.audit.test_audit_alias_bomb import BOMB

    fake.commit(BENCH, "main", {"configs/nvidia-master.yaml": BOMB})
    with caplog.at_level(logging.INFO, logger="recipe_sync"):
        result = refresh_dashboard(harness.rt, BENCH)
    assert result.startswith("failed: configs/nvidia-master.yaml"), result
    assert "aliases expand to more than" in result
    assert dashboards(fake) == []  # nothing posted from a repository that did not load
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None
    assert "configs/nvidia-master.yaml" in errors[0].getMessage()
