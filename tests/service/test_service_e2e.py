"""End to end: signed deliveries → the app → queued jobs → the fake GitHub's state."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from bot.present.posted import (
    APPROVED_MARKER,
    EDITED_MARKER,
    REAPPROVE_MARKER,
    REBASE_LABEL,
    VERIFY_MARKER,
    parse_meta,
)
from bot.service.intake import CHECK_NAME
from tests.service.conftest import (
    BENCH,
    BOT,
    MAINTAINER,
    RECIPE,
    RECIPE_TEXT,
    RECIPES,
    SCRIPT,
    Harness,
    push,
)
from tests.service.engine_double import DeterministicTestEngine
from tests.service.fakegithub import FakeGitHub, git, template
from tests.shared import corpus_dir

BRANCH = "recipe-sync/bench-1/deepseek-ai-deepseek-r1"


def recipe_at(fake: FakeGitHub, ref: str) -> str:
    return git(fake.repos[RECIPES].path, "show", f"{ref}:{RECIPE}")


def only(items: list[dict]) -> dict:  # type: ignore[type-arg]
    assert len(items) == 1, items
    return items[0]


def alignment_prs(fake: FakeGitHub) -> list[dict]:  # type: ignore[type-arg]
    return list(fake.pulls[RECIPES].values())


def verify_comments(fake: FakeGitHub, number: int) -> list[dict]:  # type: ignore[type-arg]
    return [c for c in fake.comments_on(BENCH, number) if c["body"].startswith(VERIFY_MARKER)]


def open_labelled_pr(harness: Harness, fake: FakeGitHub, value: int = 256) -> tuple[int, str]:
    head = push(fake, value)
    number = fake.open_pull(BENCH, head_ref="bump")
    assert harness.label(number).status_code == 202
    harness.drain()
    return number, head


def test_labeled_delivery_opens_alignment_pr_comment_and_check_run(
    harness: Harness, fake: FakeGitHub
) -> None:
    number, head = open_labelled_pr(harness, fake)

    pr = only(alignment_prs(fake))
    assert pr["head_ref"] == BRANCH and pr["base_ref"] == "main"
    assert pr["draft"] is True and pr["user"] == BOT
    assert pr["labels"] == ["automated", "recipe-sync"]
    assert pr["title"] == f"[recipe-sync] Align {RECIPE}"
    meta = parse_meta(pr["body"])
    assert meta is not None and meta["source"] == f"{BENCH}#{number}@{head}"
    assert meta["target"] == RECIPE and len(meta["fingerprint"]) == 64
    assert "@\u200boctocat" in pr["body"] and "fixes #\u200b12" in pr["body"]  # defused

    # the patch: one bot commit on main, only the value line changed
    recipes = fake.repos[RECIPES].path
    tip = fake.repos[RECIPES].ref_sha(f"refs/heads/{BRANCH}")
    assert git(recipes, "rev-parse", f"{tip}^") == fake.repos[RECIPES].ref_sha("refs/heads/main")
    assert (
        git(recipes, "log", "-1", "--format=%an <%ae>", tip)
        == f"{BOT} <{BOT}@users.noreply.github.com>"
    )
    assert recipe_at(fake, tip) == RECIPE_TEXT.replace('"128"', '"256"').rstrip("\n")
    assert git(recipes, "diff", "--stat", "main", tip).splitlines()[-1].strip() == (
        "1 file changed, 1 insertion(+), 1 deletion(-)"
    )

    comment = only(verify_comments(fake, number))
    assert comment["user"] == BOT
    assert f"[{RECIPES}#{pr['number']}]" in comment["body"] and "proposed in" in comment["body"]
    assert "@octocat" not in comment["body"]

    check = only(fake.check_runs_on(BENCH))
    assert check["name"] == CHECK_NAME and check["head_sha"] == head
    assert check["history"] == ["queued", "in_progress", "completed"]
    assert check["conclusion"] == "action_required"
    assert check["details_url"] == f"https://github.com/{RECIPES}/pull/{pr['number']}"
    annotation = only(check["annotations"])
    assert annotation["path"] == SCRIPT and annotation["start_line"] == 6

    # least privilege: every installation token reaches exactly one repository
    minted = [t for t in fake.tokens.values() if t.repos is not None]
    assert minted and all(len(t.repos or ()) == 1 for t in minted)
    bench_tokens = [t for t in minted if t.repos == frozenset({BENCH})]
    assert all(t.permissions.get("contents") == "read" for t in bench_tokens)
    # the token never lands in a git config
    for config in harness.settings.data_dir.rglob("config"):
        assert "ghs_" not in config.read_text()

    calls = "recipe_sync_github_api_calls_total"
    metrics = harness.rt.metrics
    assert metrics.value(calls, {"operation": "create pull", "outcome": "ok"}) == 1
    # installation lookups and tokens for two repositories
    assert metrics.value(calls, {"operation": "app auth", "outcome": "ok"}) >= 3
    assert metrics.value("recipe_sync_job_seconds_count", {"job": "sync", "outcome": "done"}) == 1


def test_same_delivery_fifty_times_is_processed_once(harness: Harness, fake: FakeGitHub) -> None:
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    DeterministicTestEngine.calls = 0
    statuses = [harness.label(number, delivery="same-guid").status_code for _ in range(50)]
    assert statuses[0] == 202 and set(statuses[1:]) == {200}
    assert harness.rt.store.deliveries.count() == 1
    harness.drain()
    assert DeterministicTestEngine.calls == 1
    assert len(alignment_prs(fake)) == 1
    assert len(verify_comments(fake, number)) == 1
    assert len(fake.check_runs_on(BENCH)) == 1


def test_burst_of_labeled_and_synchronize_gives_one_pr_and_one_comment(
    harness: Harness, fake: FakeGitHub
) -> None:
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    harness.label(number)
    second = push(fake, 512)
    fake.refresh_pull_head(BENCH, number)
    for _ in range(3):
        payload = fake.pull_request_payload(BENCH, number, "synchronize", sender="author")
        assert harness.deliver("pull_request", payload).status_code == 202
    harness.label(number)
    harness.drain()

    pr = only(alignment_prs(fake))
    assert '"512"' in recipe_at(fake, f"refs/heads/{pr['head_ref']}")
    assert len(verify_comments(fake, number)) == 1
    assert [c["head_sha"] for c in fake.check_runs_on(BENCH)] == [second]

    third = push(fake, 1024)
    fake.refresh_pull_head(BENCH, number)
    harness.deliver(
        "pull_request", fake.pull_request_payload(BENCH, number, "synchronize", sender="author")
    )
    harness.label(number)
    harness.drain()
    pr = only(alignment_prs(fake))
    assert '"1024"' in recipe_at(fake, f"refs/heads/{pr['head_ref']}")
    comment = only(verify_comments(fake, number))
    assert third[:12] in comment["body"]
    assert {c["head_sha"] for c in fake.check_runs_on(BENCH)} == {second, third}


def test_rerun_without_changes_writes_nothing_new(harness: Harness, fake: FakeGitHub) -> None:
    number, head = open_labelled_pr(harness, fake)
    tip = fake.repos[RECIPES].ref_sha(f"refs/heads/{BRANCH}")
    writes = len([r for r in fake.requests if r[0] in ("POST", "PATCH", "DELETE")])
    harness.label(number)  # a new request on the same head
    harness.drain()
    new_writes = [r for r in fake.requests if r[0] in ("POST", "PATCH", "DELETE")][writes:]
    # only the new check run's lifecycle: no comment edit, no PR edit, no push
    assert all("check-runs" in path for _, path, _ in new_writes), new_writes
    assert fake.repos[RECIPES].ref_sha(f"refs/heads/{BRANCH}") == tip
    assert len(fake.check_runs_on(BENCH, head)) == 2


def test_head_moving_mid_run_aborts_before_writing(harness: Harness, fake: FakeGitHub) -> None:
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")

    def author_pushes() -> None:
        push(fake, 999)
        fake.refresh_pull_head(BENCH, number)

    # the head moves while the bot is creating the check run
    fake.before("POST", r"/check-runs$", author_pushes)
    harness.label(number)
    harness.drain()
    assert alignment_prs(fake) == []
    assert verify_comments(fake, number) == []
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and (sync.last_result or "").startswith("superseded")
    cancelled = only(fake.check_runs_on(BENCH))  # the old head's run does not hang forever
    assert cancelled["conclusion"] == "cancelled" and cancelled["status"] == "completed"

    harness.deliver(
        "pull_request", fake.pull_request_payload(BENCH, number, "synchronize", sender="author")
    )
    harness.drain()
    assert '"999"' in recipe_at(fake, f"refs/heads/{BRANCH}")


def test_fork_pr_push_requires_reapproval(harness: Harness, fake: FakeGitHub) -> None:
    fake.fork(BENCH, "contrib/bench")
    push(fake, 256, repo="contrib/bench", branch="tune")
    number = fake.open_pull(BENCH, head_ref="tune", head_repo="contrib/bench", user="contrib")
    harness.label(number)
    harness.drain()
    pr = only(alignment_prs(fake))
    tip = fake.repos[RECIPES].ref_sha(f"refs/heads/{pr['head_ref']}")

    # the contributor pushes again: the bot withdraws approval, removes the label, says so
    new_head = push(fake, 4096, repo="contrib/bench", branch="tune")
    fake.refresh_pull_head(BENCH, number)
    payload = fake.pull_request_payload(BENCH, number, "synchronize", sender="contrib")
    assert harness.deliver("pull_request", payload).status_code == 202
    harness.drain()
    assert "recipe-sync" not in fake.pulls[BENCH][number]["labels"]
    notes = [c for c in fake.comments_on(BENCH, number) if c["body"].startswith(REAPPROVE_MARKER)]
    assert len(notes) == 1 and "apply" in notes[0]["body"]
    assert fake.check_runs_on(BENCH, new_head) == []  # nothing ran on unapproved code
    assert fake.repos[RECIPES].ref_sha(f"refs/heads/{pr['head_ref']}") == tip
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.approved_sha is None
    # PR code is read from the base repo's refs/pull/<n>/head, never from the fork's URL
    assert not list((harness.settings.data_dir / "git" / "mirrors").glob("contrib*"))

    # a maintainer re-applies the label: the new head is synced, the note goes away
    harness.label(number)
    harness.drain()
    assert '"4096"' in recipe_at(fake, f"refs/heads/{pr['head_ref']}")
    assert [
        c for c in fake.comments_on(BENCH, number) if c["body"].startswith(REAPPROVE_MARKER)
    ] == []
    assert len(fake.check_runs_on(BENCH, new_head)) == 1


def approved_notes(fake: FakeGitHub, number: int) -> list[str]:
    return [
        c["body"] for c in fake.comments_on(BENCH, number) if c["body"].startswith(APPROVED_MARKER)
    ]


def reapprove_notes(fake: FakeGitHub, number: int) -> list[str]:
    return [
        c["body"] for c in fake.comments_on(BENCH, number) if c["body"].startswith(REAPPROVE_MARKER)
    ]


def test_a_command_approves_the_fork_head_it_was_written_at(
    harness: Harness, fake: FakeGitHub
) -> None:
    fake.fork(BENCH, "contrib/bench")
    push(fake, 256, repo="contrib/bench", branch="tune")
    number = fake.open_pull(BENCH, head_ref="tune", head_repo="contrib/bench", user="contrib")
    fake.repos["contrib/bench"].pushed_at -= 120  # the maintainer read it for two minutes
    command = fake.comment_payload(BENCH, number, "/recipe-sync", sender=MAINTAINER)
    assert harness.deliver("issue_comment", command).status_code == 202
    # the contributor pushes after the comment, before the job runs (and before GitHub's
    # synchronize delivery): the job must not take the new head as the one approved
    new_head = push(fake, 4096, repo="contrib/bench", branch="tune")
    fake.refresh_pull_head(BENCH, number)
    harness.drain()
    assert alignment_prs(fake) == [] and fake.check_runs_on(BENCH, new_head) == []
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is None or sync.approved_sha != new_head
    (note,) = reapprove_notes(fake, number)
    assert f"`{new_head[:12]}`, was pushed less than a minute before" in note
    assert f"commenting `/recipe-sync {new_head[:12]}`" in note
    # the synchronize delivery arriving now changes nothing: still one note, nothing synced
    payload = fake.pull_request_payload(BENCH, number, "synchronize", sender="contrib")
    harness.deliver("pull_request", payload)
    harness.drain()
    assert alignment_prs(fake) == []

    # a command naming the commit the maintainer reviewed approves it, and says so
    command = fake.comment_payload(
        BENCH, number, f"/recipe-sync {new_head[:12]}", sender=MAINTAINER
    )
    harness.deliver("issue_comment", command)
    harness.drain()
    pr = only(alignment_prs(fake))
    assert '"4096"' in recipe_at(fake, f"refs/heads/{pr['head_ref']}")
    assert reapprove_notes(fake, number) == []
    (reply,) = approved_notes(fake, number)
    assert f"approved `{new_head[:12]}` (the commit the command names)" in reply


def test_a_bare_command_approves_a_fork_head_only_a_minute_after_its_push(
    harness: Harness, fake: FakeGitHub
) -> None:
    fake.fork(BENCH, "contrib/bench")
    first = push(fake, 256, repo="contrib/bench", branch="tune")
    number = fake.open_pull(BENCH, head_ref="tune", head_repo="contrib/bench", user="contrib")
    # a push 150 ms before the comment: the maintainer was looking at the previous head
    second = push(fake, 4096, repo="contrib/bench", branch="tune")
    fake.refresh_pull_head(BENCH, number)
    time.sleep(0.15)
    harness.deliver(
        "issue_comment", fake.comment_payload(BENCH, number, "/recipe-sync", sender=MAINTAINER)
    )
    harness.drain()
    assert alignment_prs(fake) == []  # was approved, and 4096 landed in the patch
    (note,) = reapprove_notes(fake, number)
    assert second[:12] in note and first[:12] not in note
    # a command naming a commit that is no longer the head approves nothing either
    harness.deliver(
        "issue_comment",
        fake.comment_payload(BENCH, number, f"/recipe-sync {first[:10]}", sender=MAINTAINER),
    )
    harness.drain()
    assert alignment_prs(fake) == []
    (note,) = reapprove_notes(fake, number)
    assert f"names `{first[:10]}`, but the head of this pull request is `{second[:12]}`" in note
    # a minute later, a bare command approves the head it was written under
    fake.repos["contrib/bench"].pushed_at -= 60
    harness.deliver(
        "issue_comment", fake.comment_payload(BENCH, number, "/recipe-sync", sender=MAINTAINER)
    )
    harness.drain()
    pr = only(alignment_prs(fake))
    assert '"4096"' in recipe_at(fake, f"refs/heads/{pr['head_ref']}")
    (reply,) = approved_notes(fake, number)
    assert f"approved `{second[:12]}` (the head, pushed at least a minute before" in reply


def test_comment_command_permissions(harness: Harness, fake: FakeGitHub) -> None:
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    for _ in range(2):
        payload = fake.comment_payload(BENCH, number, "/recipe-sync", sender="visitor")
        assert harness.deliver("issue_comment", payload).status_code == 202
        harness.drain()
    refusals = [c for c in fake.comments_on(BENCH, number) if c["user"] == BOT]
    assert len(refusals) == 1 and "write access" in refusals[0]["body"]
    assert fake.check_runs_on(BENCH) == [] and alignment_prs(fake) == []

    # the bot's own comment containing the command is ignored (self-loop guard)
    own = fake.comment_payload(BENCH, number, "/recipe-sync", sender=BOT)
    assert harness.deliver("issue_comment", own).json()["status"] == "ignored"

    # a writer's dry run: 👍, comment and check run, but nothing pushed
    payload = fake.comment_payload(BENCH, number, "/recipe-sync dry-run", sender=MAINTAINER)
    harness.deliver("issue_comment", payload)
    harness.drain()
    assert (payload["comment"]["id"], "+1", BOT) in fake.reactions
    comment = only(verify_comments(fake, number))
    assert "dry run" in comment["body"] and BRANCH in comment["body"]
    assert alignment_prs(fake) == []
    assert fake.repos[RECIPES].ref_sha(f"refs/heads/{BRANCH}") is None
    assert only(fake.check_runs_on(BENCH))["conclusion"] == "action_required"

    # then a full run by the writer
    harness.deliver(
        "issue_comment", fake.comment_payload(BENCH, number, "/recipe-sync", sender=MAINTAINER)
    )
    harness.drain()
    assert len(alignment_prs(fake)) == 1
    assert len(verify_comments(fake, number)) == 1


def test_label_from_user_without_triage_is_ignored(harness: Harness, fake: FakeGitHub) -> None:
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    harness.label(number, sender="drive-by")
    harness.drain()
    assert fake.check_runs_on(BENCH) == [] and alignment_prs(fake) == []


def test_closed_benchmark_pr_autocloses_its_alignment_pr(
    harness: Harness, fake: FakeGitHub
) -> None:
    number, _ = open_labelled_pr(harness, fake)
    fake.close_pull(BENCH, number)
    harness.deliver(
        "pull_request", fake.pull_request_payload(BENCH, number, "closed", sender="author")
    )
    harness.drain()
    pr = only(alignment_prs(fake))
    assert pr["state"] == "closed" and pr["title"].endswith(" — autoclosed")
    assert fake.repos[RECIPES].ref_sha(f"refs/heads/{BRANCH}") is None
    notes = [c for c in fake.comments_on(RECIPES, pr["number"]) if c["user"] == BOT]
    assert len(notes) == 1 and "closed without merging" in notes[0]["body"]
    # our own close event does not count as a human declining the change
    closed = fake.pull_request_payload(RECIPES, pr["number"], "closed", sender=BOT)
    harness.deliver("pull_request", closed)
    harness.drain()
    record = harness.rt.store.alignments.by_branch(RECIPES, BRANCH)
    assert record is not None and record.state == "autoclosed"
    assert not harness.rt.store.alignments.is_declined(RECIPES, RECIPE, record.fingerprint or "")


def test_declined_content_is_not_proposed_again(harness: Harness, fake: FakeGitHub) -> None:
    number, _ = open_labelled_pr(harness, fake)
    first = only(alignment_prs(fake))
    fake.close_pull(RECIPES, first["number"])  # a maintainer declines it
    harness.deliver(
        "pull_request",
        fake.pull_request_payload(RECIPES, first["number"], "closed", sender=MAINTAINER),
    )
    harness.label(number)
    harness.drain()
    assert len(alignment_prs(fake)) == 1
    assert "not proposed again" in only(verify_comments(fake, number))["body"]

    push(fake, 777)  # different content: proposed again, on the same branch
    fake.refresh_pull_head(BENCH, number)
    harness.deliver(
        "pull_request", fake.pull_request_payload(BENCH, number, "synchronize", sender="author")
    )
    harness.drain()
    prs = alignment_prs(fake)
    assert len(prs) == 2 and prs[1]["state"] == "open" and prs[1]["head_ref"] == BRANCH
    assert '"777"' in recipe_at(fake, f"refs/heads/{BRANCH}")


def test_human_commits_stop_force_pushes_until_rebase_label(
    harness: Harness, fake: FakeGitHub
) -> None:
    number, _ = open_labelled_pr(harness, fake)
    pr = only(alignment_prs(fake))
    human = fake.commit(
        RECIPES,
        BRANCH,
        {RECIPE: RECIPE_TEXT.replace('"128"', '"300"')},
        author=("Jane Maintainer", "jane@example.com"),
    )
    for value in (600, 700):  # two more syncs: no push, one sticky note
        push(fake, value)
        fake.refresh_pull_head(BENCH, number)
        harness.deliver(
            "pull_request", fake.pull_request_payload(BENCH, number, "synchronize", sender="author")
        )
        harness.drain()
        assert fake.repos[RECIPES].ref_sha(f"refs/heads/{BRANCH}") == human
    notes = [
        c for c in fake.comments_on(RECIPES, pr["number"]) if c["body"].startswith(EDITED_MARKER)
    ]
    assert (
        len(notes) == 1
        and "Jane Maintainer" in notes[0]["body"]
        and REBASE_LABEL in notes[0]["body"]
    )
    assert "left alone" in only(verify_comments(fake, number))["body"]

    # the rebase label hands the branch back: regenerated from main, label removed
    fake.pulls[RECIPES][pr["number"]]["labels"].append(REBASE_LABEL)
    payload = fake.pull_request_payload(
        RECIPES, pr["number"], "labeled", sender=MAINTAINER, label=REBASE_LABEL
    )
    harness.deliver("pull_request", payload)
    harness.drain()
    tip = fake.repos[RECIPES].ref_sha(f"refs/heads/{BRANCH}")
    assert tip != human and '"700"' in recipe_at(fake, tip)
    assert git(fake.repos[RECIPES].path, "log", "-1", "--format=%an", tip) == BOT
    assert REBASE_LABEL not in fake.pulls[RECIPES][pr["number"]]["labels"]
    assert [
        c for c in fake.comments_on(RECIPES, pr["number"]) if c["body"].startswith(EDITED_MARKER)
    ] == []


def test_recipe_aligned_on_main_autocloses(harness: Harness, fake: FakeGitHub) -> None:
    number, _ = open_labelled_pr(harness, fake)
    fake.commit(RECIPES, "main", {RECIPE: RECIPE_TEXT.replace('"128"', '"256"')})
    harness.label(number)
    harness.drain()
    pr = only(alignment_prs(fake))
    assert pr["state"] == "closed" and pr["title"].endswith(" — autoclosed")
    assert fake.repos[RECIPES].ref_sha(f"refs/heads/{BRANCH}") is None
    assert fake.check_runs_on(BENCH)[-1]["conclusion"] == "success"


def test_workflow_run_of_a_fork_refreshes_evidence(harness: Harness, fake: FakeGitHub) -> None:
    fake.fork(BENCH, "contrib/bench")
    head = push(fake, 256, repo="contrib/bench", branch="tune")
    number = fake.open_pull(BENCH, head_ref="tune", head_repo="contrib/bench", user="contrib")
    harness.label(number)
    harness.drain()
    run_id = fake.add_workflow_run(BENCH, head_sha=head, head_branch="tune")
    payload = fake.workflow_run_payload(BENCH, run_id, with_pull_requests=False)
    assert harness.deliver("workflow_run", payload).status_code == 202
    harness.drain()
    assert len(fake.check_runs_on(BENCH, head)) == 2
    assert "Workflow runs at this head: 1." in only(verify_comments(fake, number))["body"]
    # a run at a head nobody approved, or at the right SHA on another branch, does nothing
    stranger = fake.add_workflow_run(BENCH, head_sha="f" * 40, head_branch="tune")
    elsewhere = fake.add_workflow_run(BENCH, head_sha=head, head_branch="not-the-pr-branch")
    for run_id in (stranger, elsewhere):
        payload = fake.workflow_run_payload(BENCH, run_id, with_pull_requests=False)
        harness.deliver("workflow_run", payload)
    harness.drain()
    assert len(fake.check_runs_on(BENCH)) == 2

    # recipes CI finishing on the current alignment commit refreshes the benchmark PR too
    pr = only(alignment_prs(fake))
    tip = fake.repos[RECIPES].ref_sha(f"refs/heads/{pr['head_ref']}")
    assert tip is not None
    ci = fake.add_workflow_run(RECIPES, head_sha=tip, head_branch=pr["head_ref"])
    harness.deliver(
        "workflow_run", fake.workflow_run_payload(RECIPES, ci, with_pull_requests=False)
    )
    harness.drain()
    assert len(fake.check_runs_on(BENCH)) == 3


def test_check_run_rerequest_and_button_rerun(harness: Harness, fake: FakeGitHub) -> None:
    _, head = open_labelled_pr(harness, fake)
    check = only(fake.check_runs_on(BENCH))
    for action in ("rerequested", "requested_action"):
        payload = fake.check_run_payload(BENCH, check["id"], action, sender=MAINTAINER)
        assert harness.deliver("check_run", payload).status_code == 202
        harness.drain()
    assert len(fake.check_runs_on(BENCH, head)) == 3
    own = fake.check_run_payload(BENCH, check["id"], "rerequested", sender=BOT)
    assert harness.deliver("check_run", own).json()["status"] == "ignored"


def test_many_annotations_are_sent_in_batches_of_fifty(
    harness: Harness, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.contract import Annotation, SyncOutcome

    original = DeterministicTestEngine.sync

    def many(self: DeterministicTestEngine, request: object) -> SyncOutcome:
        outcome = original(self, request)  # type: ignore[arg-type]
        extra = tuple(Annotation(SCRIPT, i, i, "notice", f"note {i}", "n") for i in range(1, 121))
        return SyncOutcome(**{**outcome.__dict__, "annotations": extra})

    monkeypatch.setattr(DeterministicTestEngine, "sync", many)
    open_labelled_pr(harness, fake)
    check = only(fake.check_runs_on(BENCH))
    assert len(check["annotations"]) == 120
    assert fake.calls("PATCH", r"/check-runs/\d+$") == 1 + 3  # in_progress + 3 batches


def test_volume_cap_defers_new_prs(
    fake: FakeGitHub, tmp_path: Path, app_key: tuple[str, str]
) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(Path(__file__).resolve().parents[2] / "rules", rules)
    policy = rules / "policy.yaml"
    policy.write_text(re.sub(r"max_new_per_hour: \d+", "max_new_per_hour: 1", policy.read_text()))
    harness = Harness(fake, tmp_path, app_key, rules_dir=rules)
    try:
        other = "benchmarks/single_node/other.sh"
        fake.commit(RECIPES, "main", {"models/org/Other.yaml": '- "--max-num-seqs"\n- "1"\n'})
        open_labelled_pr(harness, fake)
        fake.commit(
            BENCH,
            "other",
            {other: "# recipe: models/org/Other.yaml\nvllm serve x --max-num-seqs 2\n"},
            parent=fake.repos[BENCH].ref_sha("refs/heads/main"),
        )
        second = fake.open_pull(BENCH, head_ref="other")
        harness.label(second)
        harness.drain()
        assert len(alignment_prs(fake)) == 1
        assert "deferred" in only(verify_comments(fake, second))["body"]
        assert fake.repos[RECIPES].ref_sha("refs/heads/recipe-sync/bench-2/org-other") is None
    finally:
        harness.close()


def test_labels_that_cannot_be_created_are_skipped(harness: Harness, fake: FakeGitHub) -> None:
    fake.label_colors_refused = True
    open_labelled_pr(harness, fake)
    assert only(alignment_prs(fake))["labels"] == []


def test_obsolete_but_edited_alignment_pr_is_left_open_as_abandoned(
    harness: Harness, fake: FakeGitHub
) -> None:
    number, _ = open_labelled_pr(harness, fake)
    human = fake.commit(
        RECIPES, BRANCH, {"NOTES.md": "context\n"}, author=("Jane", "jane@example.com")
    )
    fake.close_pull(BENCH, number)
    harness.deliver(
        "pull_request", fake.pull_request_payload(BENCH, number, "closed", sender="author")
    )
    harness.drain()
    pr = only(alignment_prs(fake))
    assert pr["state"] == "open" and pr["title"].endswith(" — abandoned")
    assert fake.repos[RECIPES].ref_sha(f"refs/heads/{BRANCH}") == human  # branch kept
    notes = [c for c in fake.comments_on(RECIPES, pr["number"]) if c["user"] == BOT]
    assert len(notes) == 1 and "left open" in notes[0]["body"]


def test_withdrawn_approval_mid_run_stops_before_writing(
    harness: Harness, fake: FakeGitHub
) -> None:
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    fake.before(
        "POST", r"/check-runs$", lambda: harness.rt.store.syncs.revoke_approval(BENCH, number)
    )
    harness.label(number)
    harness.drain()
    assert alignment_prs(fake) == [] and verify_comments(fake, number) == []
    assert only(fake.check_runs_on(BENCH))["conclusion"] == "cancelled"


def test_events_that_need_no_work_enqueue_no_sync(harness: Harness, fake: FakeGitHub) -> None:
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    fake.close_pull(BENCH, number)  # never labelled, so no alignment PR to retire
    harness.deliver(
        "pull_request", fake.pull_request_payload(BENCH, number, "closed", sender="author")
    )
    # the trigger label on a PR in the recipes repo is not a benchmark PR
    other = fake.open_pull(RECIPES, head_ref="main", labels=("recipe-sync",))
    harness.deliver(
        "pull_request",
        fake.pull_request_payload(
            RECIPES, other, "labeled", sender=MAINTAINER, label="recipe-sync"
        ),
    )
    assert harness.drain() == 2  # the two delivery jobs, no sync job
    assert harness.rt.store.syncs.find(BENCH, number) is None
    assert harness.rt.store.syncs.find(RECIPES, other) is None


def test_personal_token_mode_works_without_check_runs(
    fake: FakeGitHub, tmp_path: Path, app_key: tuple[str, str]
) -> None:
    # GitHub only lets Apps create check runs: with a token the sync goes on without one
    harness = Harness(
        fake,
        tmp_path,
        app_key,
        app_id="",
        private_key_path=None,
        github_token="ghp_personal",
        bot_login="ignored-in-token-mode",
    )
    try:
        number, _ = open_labelled_pr(harness, fake)
        harness.label(number)
        harness.drain()
        assert len(alignment_prs(fake)) == 1 and only(alignment_prs(fake))["user"] == "someone"
        comments = verify_comments(fake, number)
        assert len(comments) == 1 and comments[0]["user"] == "someone"
        assert fake.check_runs_on(BENCH) == []
    finally:
        harness.close()


def test_app_missing_on_the_recipes_repo_fails_the_check_run_clearly(
    harness: Harness, fake: FakeGitHub
) -> None:
    del fake.repos[RECIPES]  # GET /repos/org/recipes/installation answers 404
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    harness.label(number)
    harness.drain()
    check = only(fake.check_runs_on(BENCH))
    assert check["conclusion"] == "failure"
    assert "not installed on org/recipes" in check["output"]["summary"]
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.state == "failed"


def test_bad_input_is_reported_on_the_pr_and_engine_bugs_fail_the_check(
    harness: Harness, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.contract import SyncOutcome
    from bot.errors import InputError, Location

    def unreadable(self: DeterministicTestEngine, request: object) -> SyncOutcome:
        raise InputError(Location(SCRIPT, line=4), "unterminated quote in launch line @someone")

    monkeypatch.setattr(DeterministicTestEngine, "sync", unreadable)
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    harness.label(number)
    harness.drain()
    comment = only(verify_comments(fake, number))
    assert f"{SCRIPT}:4" in comment["body"] and "@someone" not in comment["body"]
    assert only(fake.check_runs_on(BENCH))["conclusion"] == "failure"
    assert alignment_prs(fake) == []

    def buggy(self: DeterministicTestEngine, request: object) -> SyncOutcome:
        return SyncOutcome((), (), "c", "maybe", "t", "s", ())

    monkeypatch.setattr(DeterministicTestEngine, "sync", buggy)
    harness.label(number)
    harness.drain()
    last = fake.check_runs_on(BENCH)[-1]
    assert (
        last["conclusion"] == "failure" and "unknown check conclusion" in last["output"]["summary"]
    )
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.state == "failed"


def test_real_recipe_from_the_corpus_gets_a_one_line_patch(
    harness: Harness, fake: FakeGitHub
) -> None:
    corpus = corpus_dir() / "models/deepseek-ai/DeepSeek-R1.yaml"
    fake.commit(RECIPES, "main", {RECIPE: corpus.read_text()})
    script_text = (
        f"#!/usr/bin/env bash\n# recipe: {RECIPE}\n"
        "vllm serve deepseek-ai/DeepSeek-R1 --trust-remote-code \\\n"
        "  --kv-cache-dtype fp8_e5m2\n"
    )
    fake.commit(
        BENCH, "kv", {SCRIPT: script_text}, parent=fake.repos[BENCH].ref_sha("refs/heads/main")
    )
    number = fake.open_pull(BENCH, head_ref="kv")
    harness.label(number)
    harness.drain()
    pr = only(alignment_prs(fake))
    diff = git(fake.repos[RECIPES].path, "diff", "-U0", "main", pr["head_ref"])
    hunks = [
        line for line in diff.splitlines() if line.startswith(("@@", "-  ", "+  ", "-   ", "+   "))
    ]
    assert hunks == ["@@ -70 +70 @@ variants:", '-      - "fp8"', '+      - "fp8_e5m2"']
    numstat = git(fake.repos[RECIPES].path, "diff", "--numstat", "main", pr["head_ref"])
    assert numstat == f"1\t1\t{RECIPE}"  # nothing else moved: comments, quoting, order kept
    annotation = only(only(fake.check_runs_on(BENCH))["annotations"])
    assert (annotation["path"], annotation["start_line"]) == (SCRIPT, 4)


def test_a_push_the_recipes_repo_declines_is_reported_with_what_to_grant(
    harness: Harness, fake: FakeGitHub
) -> None:
    """A pre-receive hook declining the push is not a lost lease (which would mark the PR as
    edited by a human): the check run and the sticky comment say why, in one line, and what
    to grant; the sync fails for good instead of retrying."""
    hook = fake.repos[RECIPES].path / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'error: GH006: Protected branch update failed.' >&2\nexit 1\n")
    hook.chmod(0o755)
    number, head = open_labelled_pr(harness, fake)

    reason = (
        f"the push of `{BRANCH}` to {RECIPES} was refused: pre-receive hook declined: "
        "GH006: Protected branch update failed."
    )
    run = only(fake.check_runs_on(BENCH, head))
    assert run["conclusion"] == "failure"
    assert run["output"]["title"] == "recipe-sync may not push to the recipes repository"
    summary = run["output"]["summary"]
    assert summary.startswith(reason) and "branch protection" in summary
    assert "\n" not in summary
    comment = only(verify_comments(fake, number))["body"]
    assert reason in comment and "branch protection" in comment
    assert alignment_prs(fake) == [] and fake.calls("POST", r"/pulls$") == 0
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.state == "failed"
    assert harness.pending() == 0


def test_installation_deliveries_drop_cached_tokens(harness: Harness, fake: FakeGitHub) -> None:
    """The App uninstalled and installed again: the old tokens are revoked and the id is new.
    The ``installation`` delivery makes the next job look both up again."""
    number, _ = open_labelled_pr(harness, fake)
    old = fake.repos[BENCH].installation_id
    for token, info in list(fake.tokens.items()):
        if info.repos == frozenset({BENCH}):
            del fake.tokens[token]  # revoked with the installation
    fake.repos[BENCH].installation_id = 77
    body = template("installation.created.json")
    body["action"] = "deleted"
    body["installation"]["id"] = old
    assert harness.deliver("installation", body).status_code == 202
    harness.drain()

    push(fake, 512)
    fake.refresh_pull_head(BENCH, number)
    harness.deliver(
        "pull_request", fake.pull_request_payload(BENCH, number, "synchronize", sender=MAINTAINER)
    )
    harness.drain()
    runs = fake.check_runs_on(BENCH)
    assert len(runs) == 2 and runs[-1]["status"] == "completed"
    assert runs[-1]["conclusion"] == runs[0]["conclusion"] == "action_required"
    assert fake.calls("GET", f"/repos/{BENCH}/installation$") == 2
