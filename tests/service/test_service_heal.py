"""Tokens heal and repositories move (bot/github/auth.py, gateway.py, connect.py): a 401
renews the installation's token once; an uninstalled App or a repository taken out of the
installation is said so; a renamed repository is followed and its new name stored; a
changed default branch retargets the open alignment PR."""

from __future__ import annotations

import pytest

from bot.github.auth import AppTokens
from bot.github.errors import AppNotInstalled
from bot.github.gateway import RECIPES_SCOPE
from tests.service.conftest import BENCH, RECIPE, RECIPES, Harness, push
from tests.service.fakegithub import FakeGitHub, git


def labelled_pr(harness: Harness, fake: FakeGitHub, value: int = 256) -> int:
    push(fake, value)
    number = fake.open_pull(BENCH, head_ref="bump")
    assert harness.label(number).status_code == 202
    harness.drain()
    return number


def synchronize(harness: Harness, fake: FakeGitHub, number: int, value: int) -> None:
    push(fake, value)
    fake.refresh_pull_head(BENCH, number)
    payload = fake.pull_request_payload(BENCH, number, "synchronize", sender="author")
    assert harness.deliver("pull_request", payload).status_code == 202
    harness.drain()


def recipe_on_branch(fake: FakeGitHub, repo: str, branch: str) -> str:
    return git(fake.repos[repo].path, "show", f"refs/heads/{branch}:{RECIPE}")


def test_a_token_revoked_mid_job_is_renewed_once(harness: Harness, fake: FakeGitHub) -> None:
    fake.before("POST", r"/check-runs$", fake.revoke_tokens)  # while the sync runs
    number = labelled_pr(harness, fake)
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.state == "done", sync  # was failed: 401 Bad credentials
    assert [s for _, _, s in fake.requests].count(401) == 1  # renewed, then fine
    (pr,) = fake.pulls[RECIPES].values()
    assert '"256"' in recipe_on_branch(fake, RECIPES, pr["head_ref"])


def test_an_uninstalled_app_is_reported_as_not_installed(
    harness: Harness, fake: FakeGitHub
) -> None:
    number = labelled_pr(harness, fake)
    fake.uninstall(fake.repos[BENCH].installation_id)  # cached tokens now answer 401
    synchronize(harness, fake, number, 512)
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.state == "failed"
    assert sync.last_error is not None
    assert "the GitHub App is not installed on org/bench" in sync.last_error  # was 401
    assert "Bad credentials" not in sync.last_error


def test_a_repository_taken_out_of_the_installation_is_said_so(
    harness: Harness, fake: FakeGitHub
) -> None:
    number = labelled_pr(harness, fake)
    fake.remove_from_installation(RECIPES)
    synchronize(harness, fake, number, 512)
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.state == "failed" and sync.last_error is not None
    assert "not installed on org/recipes" in sync.last_error
    assert "removed from its installation" in sync.last_error


def test_minting_for_a_repository_the_installation_no_longer_covers(
    fake: FakeGitHub, app_key: tuple[str, str]
) -> None:
    tokens = AppTokens(fake.app_id, app_key[0], fake.base_url)
    assert tokens.token(RECIPES, RECIPES_SCOPE)
    installation = fake.repos[RECIPES].installation_id
    fake.create_repo("org/other", {"README.md": "x\n"})
    fake.repos["org/other"].installation_id = installation
    tokens.installation_id("org/other")  # cached: the next mint asks for it by name
    fake.repos["org/other"].installation_id = 0
    with pytest.raises(AppNotInstalled, match="not among the repositories"):
        tokens.token("org/other", RECIPES_SCOPE)  # GitHub's 422, not "HTTP 422"


def test_a_renamed_recipes_repository_is_followed_and_its_name_stored(
    harness: Harness, fake: FakeGitHub
) -> None:
    number = labelled_pr(harness, fake)
    fake.rename(RECIPES, "org/recipes-v2")
    synchronize(harness, fake, number, 512)  # was failed: "HTTP 301"
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.state == "done", sync
    (pr,) = fake.pulls["org/recipes-v2"].values()
    assert '"512"' in recipe_on_branch(fake, "org/recipes-v2", pr["head_ref"])
    assert harness.rt.store.names.current_repo_name(RECIPES) == "org/recipes-v2"
    assert harness.rt.store.names.known("org/recipes-v2") == RECIPES
    assert len(harness.rt.store.alignments.for_bench_pr(BENCH, number)) == 1  # one record, same key

    # a fresh process (the new name from the store) goes straight to the new name
    fake.requests.clear()
    fresh = Harness(fake, harness.settings.data_dir.parent, _key(harness))
    synchronize(fresh, fake, number, 1024)
    assert not [r for r in fake.requests if r[2] in (301, 307)], "went by the old name again"
    assert '"1024"' in recipe_on_branch(fake, "org/recipes-v2", pr["head_ref"])
    fresh.close()


def _key(harness: Harness) -> tuple[str, str]:
    assert harness.settings.private_key_path is not None
    return harness.settings.private_key_path.read_text(), ""


def test_a_new_default_branch_retargets_the_open_alignment_pr(
    harness: Harness, fake: FakeGitHub
) -> None:
    number = labelled_pr(harness, fake)
    (pr,) = fake.pulls[RECIPES].values()
    assert pr["base_ref"] == "main"
    # the recipes repository moves to `trunk`, which has commits `main` has not
    main = fake.repos[RECIPES].ref_sha("refs/heads/main")
    fake.commit(RECIPES, "trunk", {"docs/a.md": "a\n", "docs/b.md": "b\n"}, parent=main)
    fake.repos[RECIPES].default_branch = "trunk"
    synchronize(harness, fake, number, 512)
    sync = harness.rt.store.syncs.find(BENCH, number)
    assert sync is not None and sync.state == "done", sync
    assert pr["base_ref"] == "trunk"  # was main, with a diff of 3 files instead of 1
    diff = git(fake.repos[RECIPES].path, "diff", "--name-only", "trunk", pr["head_ref"])
    assert diff.splitlines() == [RECIPE]
