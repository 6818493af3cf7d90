"""One recipe change, one alignment PR: a benchmark PR whose YAML edits an open alignment PR
of another benchmark PR already proposes gets no PR of its own; its comment and check run
link the open one (signed deliveries → the app → the fake GitHub over HTTP)."""

from __future__ import annotations

from typing import Any

from bot.present.posted import VERIFY_MARKER
from bot.state.states import AlignmentState
from tests.service.conftest import (
    BENCH,
    BOT,
    MAINTAINER,
    RECIPE,
    RECIPES,
    SCRIPT,
    Harness,
    push,
    script,
)
from tests.service.fakegithub import FakeGitHub, git

DUPLICATE = "the same recipe change is already proposed in"


def labelled(harness: Harness, fake: FakeGitHub, value: int, branch: str, extra: str = "") -> int:
    """A benchmark PR from ``branch`` setting ``--max-num-seqs value``, labelled and synced.
    Its commit names the branch: two branches committing the same script in the same second
    would otherwise be one commit, with one set of check runs."""
    main = fake.repos[BENCH].ref_sha("refs/heads/main")
    fake.commit(
        BENCH, branch, {SCRIPT: script(value, extra)}, parent=main, message=f"bump on {branch}"
    )
    number = fake.open_pull(BENCH, head_ref=branch)
    assert harness.label(number).status_code == 202
    harness.drain()
    return number


def assert_own_pr(harness: Harness, fake: FakeGitHub, number: int, *, without: str) -> None:
    """Benchmark PR ``number`` has the one open alignment PR, its record says so, and its
    verification comment no longer says ``without``."""
    opened = [p for p in fake.pulls[RECIPES].values() if p["state"] == "open"]
    assert len(opened) == 1 and f"{BENCH}#{number}@" in opened[0]["body"]
    assert without not in verify_comment(fake, number)
    [record] = harness.rt.store.alignments.for_bench_pr(BENCH, number)
    assert record.state is AlignmentState.OPEN and record.pr_number == opened[0]["number"]


def verify_comment(fake: FakeGitHub, number: int) -> str:
    found = [c for c in fake.comments_on(BENCH, number) if c["body"].startswith(VERIFY_MARKER)]
    assert len(found) == 1, found
    return str(found[0]["body"])


def test_a_second_benchmark_pr_with_the_same_change_opens_no_second_pr(
    harness: Harness, fake: FakeGitHub
) -> None:
    first = labelled(harness, fake, 256, "bump")
    second = labelled(harness, fake, 256, "bump-again")

    [pr] = fake.pulls[RECIPES].values()  # one alignment PR, the first's
    assert f"{BENCH}#{first}@" in pr["body"]
    url = f"https://github.com/{RECIPES}/pull/{pr['number']}"
    link = f"[{RECIPES}#{pr['number']}]({url})"
    body = verify_comment(fake, second)
    assert f"{DUPLICATE} {link}: recipe-sync does not open a second PR" in body
    assert f"`{RECIPE}`" in body
    [check] = fake.check_runs_on(BENCH, fake.pulls[BENCH][second]["head_sha"])
    assert f"{DUPLICATE} {link}" in check["output"]["summary"]
    assert check["details_url"] == url
    # no branch was pushed for the second benchmark PR
    refs = git(fake.repos[RECIPES].path, "for-each-ref", "--format=%(refname)")
    assert f"/bench-{first}/" in refs and f"/bench-{second}/" not in refs

    records = harness.rt.store.alignments.for_bench_pr(BENCH, second)
    assert [(r.state, r.duplicate_of) for r in records] == [
        (AlignmentState.DUPLICATE, pr["number"])
    ]

    # syncing the second again changes nothing: still no PR, the comment as it was
    writes = len([r for r in fake.requests if r[0] in ("POST", "PATCH", "DELETE")])
    harness.label(second)
    harness.drain()
    new_writes = [r for r in fake.requests if r[0] in ("POST", "PATCH", "DELETE")][writes:]
    assert all("check-runs" in path for _, path, _ in new_writes), new_writes
    assert len(fake.pulls[RECIPES]) == 1


def test_a_change_with_more_edits_gets_its_own_pr(harness: Harness, fake: FakeGitHub) -> None:
    labelled(harness, fake, 256, "bump")
    superset = labelled(harness, fake, 256, "bump-tp", " --tensor-parallel-size 4")
    other = labelled(harness, fake, 512, "bump-512")

    assert len(fake.pulls[RECIPES]) == 3
    for number in (superset, other):
        assert DUPLICATE not in verify_comment(fake, number)
        [record] = harness.rt.store.alignments.for_bench_pr(BENCH, number)
        assert record.state is AlignmentState.OPEN and record.duplicate_of is None


def test_when_the_proposing_pr_is_autoclosed_the_duplicate_opens_its_own(
    harness: Harness, fake: FakeGitHub
) -> None:
    first = labelled(harness, fake, 256, "bump")
    second = labelled(harness, fake, 256, "bump-again")
    [original] = fake.pulls[RECIPES].values()

    # the first benchmark PR is closed unmerged: its alignment PR is autoclosed by the bot
    fake.close_pull(BENCH, first)
    harness.deliver(
        "pull_request", fake.pull_request_payload(BENCH, first, "closed", sender="author")
    )
    harness.drain()
    assert fake.pulls[RECIPES][original["number"]]["state"] == "closed"
    closed = fake.pull_request_payload(RECIPES, original["number"], "closed", sender=BOT)
    assert harness.deliver("pull_request", closed).status_code == 202
    harness.drain()

    assert_own_pr(harness, fake, second, without=DUPLICATE)


def test_a_dry_run_says_it_would_duplicate_and_records_nothing(
    harness: Harness, fake: FakeGitHub
) -> None:
    labelled(harness, fake, 256, "bump")
    push(fake, 256, branch="bump-again")
    second = fake.open_pull(BENCH, head_ref="bump-again")
    body = "/recipe-sync dry-run"
    payload = fake.comment_payload(BENCH, second, body, sender=MAINTAINER)
    assert harness.deliver("issue_comment", payload).status_code == 202
    harness.drain()
    assert DUPLICATE in verify_comment(fake, second)
    assert harness.rt.store.alignments.for_bench_pr(BENCH, second) == []
    assert len(fake.pulls[RECIPES]) == 1


def test_a_duplicate_record_moves_to_its_own_pr_and_keeps_its_state_on_a_late_close(
    harness: Harness, fake: FakeGitHub
) -> None:
    store = harness.rt.store.alignments
    where = {"bench_repo": BENCH, "bench_pr": 7, "recipe_path": RECIPE, "recipes_repo": RECIPES}
    record = store.save(branch="b", state=AlignmentState.DUPLICATE, duplicate_of=3, **where)
    assert (record.state, record.duplicate_of) == (AlignmentState.DUPLICATE, 3)
    assert not record.state.is_live and not record.state.counts_as_open
    assert [r.bench_pr for r in store.duplicates_of(RECIPES, 3)] == [7]
    # a late "closed" of an older PR of that branch leaves the record as it is
    fake.open_pull(RECIPES, head_ref="b", user=BOT, number=2)
    fake.close_pull(RECIPES, 2, merged=True)
    closed = fake.pull_request_payload(RECIPES, 2, "closed", sender=MAINTAINER)
    assert harness.deliver("pull_request", closed, delivery="late-close").status_code == 202
    harness.drain()
    delivered = harness.rt.store.deliveries.get("late-close")
    assert delivered is not None and delivered[1] == "done"  # an illegal move would fail it
    found = store.by_branch(RECIPES, "b")
    assert found is not None and found.state is AlignmentState.DUPLICATE
    reopened = store.save(branch="b", state=AlignmentState.OPEN, duplicate_of=None, **where)
    assert reopened.state is AlignmentState.OPEN and store.duplicates_of(RECIPES, 3) == []


def test_when_the_proposing_pr_changes_its_edits_the_duplicate_opens_its_own(
    harness: Harness, fake: FakeGitHub
) -> None:
    first = labelled(harness, fake, 256, "bump")
    second = labelled(harness, fake, 256, "bump-again")
    assert len(fake.pulls[RECIPES]) == 1

    # the first benchmark PR moves on to another value: its alignment PR now proposes that
    push(fake, 1024, branch="bump")
    fake.refresh_pull_head(BENCH, first)
    harness.label(first)
    harness.drain()

    assert len(fake.pulls[RECIPES]) == 2  # the second's change has a PR of its own now
    assert DUPLICATE not in verify_comment(fake, second)
    [record] = harness.rt.store.alignments.for_bench_pr(BENCH, second)
    assert record.state is AlignmentState.OPEN and record.duplicate_of is None


DECLINED = "an alignment PR with these YAML edits was closed unmerged"


def guided(harness: Harness, fake: FakeGitHub, value: int, branch: str, guide: str) -> int:
    """A benchmark PR like :func:`labelled` whose change also carries ``guide`` (content that
    is no YAML edit: another fingerprint, the same edits digest)."""
    main = fake.repos[BENCH].ref_sha("refs/heads/main")
    fake.commit(BENCH, branch, {SCRIPT: script(value) + f"# guide: {guide}\n"}, parent=main)
    number = fake.open_pull(BENCH, head_ref=branch)
    assert harness.label(number).status_code == 202
    harness.drain()
    return number


def close_unmerged(harness: Harness, fake: FakeGitHub, number: int) -> None:
    """A maintainer closes alignment PR ``number`` without merging it."""
    fake.close_pull(RECIPES, number)
    closed = fake.pull_request_payload(RECIPES, number, "closed", sender=MAINTAINER)
    assert harness.deliver("pull_request", closed).status_code == 202
    harness.drain()


def declined_then_repeated(harness: Harness, fake: FakeGitHub) -> tuple[dict[str, Any], int]:
    """A maintainer closes the first benchmark PR's alignment PR unmerged; a second benchmark
    PR then makes the same YAML edits with another text (so another fingerprint): (the
    declined PR, the second benchmark PR's number)."""
    labelled(harness, fake, 256, "bump")
    [declined] = fake.pulls[RECIPES].values()
    close_unmerged(harness, fake, declined["number"])
    return declined, guided(harness, fake, 256, "bump-again", "another guide section")


def test_edits_a_maintainer_declined_are_not_proposed_again_by_another_benchmark_pr(
    harness: Harness, fake: FakeGitHub
) -> None:
    declined, second = declined_then_repeated(harness, fake)
    assert list(fake.pulls[RECIPES]) == [declined["number"]]
    body = verify_comment(fake, second)
    assert f"{DECLINED} ({RECIPES}#{declined['number']}); not proposed again" in body
    refs = git(fake.repos[RECIPES].path, "for-each-ref", "--format=%(refname)")
    assert f"/bench-{second}/" not in refs
    assert harness.rt.store.alignments.for_bench_pr(BENCH, second) == []


def test_other_edits_are_proposed_after_a_decline_of_the_same_recipe_file(
    harness: Harness, fake: FakeGitHub
) -> None:
    _, second = declined_then_repeated(harness, fake)
    assert DECLINED in verify_comment(fake, second)

    # its author moves on to another value: other edits, proposed in a PR of its own
    push(fake, 512, branch="bump-again")
    fake.refresh_pull_head(BENCH, second)
    harness.label(second)
    harness.drain()
    assert_own_pr(harness, fake, second, without=DECLINED)
