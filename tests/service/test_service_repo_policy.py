"""A benchmark repository's ``.github/recipe-sync.yml`` (its default branch, never the PR):
the same schema as ``rules/policy.yaml``, its keys override the service's for that
repository's syncs; an invalid file is named, key and line, in the verification comment."""

from __future__ import annotations

import pytest

from bot.errors import InputError
from bot.present.posted import VERIFY_MARKER
from bot.rules import REPO_POLICY_PATH, default_rules, repo_policy
from tests.service.conftest import BENCH, RECIPES, Harness, push
from tests.service.fakegithub import FakeGitHub


def test_keys_override_the_service_policy_key_by_key() -> None:
    base = default_rules().policy
    policy = repo_policy("mark_verified: false\npr:\n  labels: [bench-sync]\n", base)
    assert policy.mark_verified is False and policy.pr.labels == ["bench-sync"]
    assert policy.pr.max_open == base.pr.max_open  # the rest of `pr` stays
    assert policy.eval_thresholds == base.eval_thresholds
    assert repo_policy("", base) == base


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pr:\n  max_open: 0\n", ".github/recipe-sync.yml:2: key 'pr.max_open': "),
        ("dashbord: true\n", ".github/recipe-sync.yml:1: key 'dashbord': unknown key"),
        ("recipe_only_flags: drop\n", ".github/recipe-sync.yml:1: key 'recipe_only_flags': "),
        ("- a\n", ".github/recipe-sync.yml:1: expected a mapping of policy keys"),
        ("pr: [\n", ".github/recipe-sync.yml:2: malformed YAML"),
    ],
)
def test_invalid_files_are_located(text: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        repo_policy(text, default_rules().policy)
    assert str(err.value).startswith(message)


def commit_policy(fake: FakeGitHub, text: str) -> None:
    parent = fake.repos[BENCH].ref_sha("refs/heads/main")
    fake.commit(BENCH, "main", {REPO_POLICY_PATH: text}, message="policy", parent=parent)


def test_the_repository_policy_reaches_the_alignment_pr(harness: Harness, fake: FakeGitHub) -> None:
    commit_policy(fake, "pr:\n  draft: false\n  labels: [bench-sync]\n")
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    assert harness.label(number).status_code == 202
    harness.drain()
    (pr,) = fake.pulls[RECIPES].values()
    assert pr["draft"] is False and pr["labels"] == ["bench-sync"]


def test_an_invalid_repository_policy_is_named_in_the_comment(
    harness: Harness, fake: FakeGitHub
) -> None:
    commit_policy(fake, "pr:\n  max_open: 0\n")
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    harness.label(number)
    harness.drain()
    (comment,) = [c for c in fake.comments_on(BENCH, number) if c["body"].startswith(VERIFY_MARKER)]
    assert f"`{REPO_POLICY_PATH}` is not valid, so the service's policy was used" in comment["body"]
    assert ".github/recipe-sync.yml:2: key 'pr.max_open'" in comment["body"]
    (pr,) = fake.pulls[RECIPES].values()  # the sync still ran, under the service's policy
    assert pr["draft"] is True and pr["labels"] == ["automated", "recipe-sync"]
