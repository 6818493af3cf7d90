"""Installation-token permissions: GitHub's table as the fake enforces it, the bot's token
scopes against it and against ``app.yml``, and reactions as a best effort."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from bot.github.auth import AppTokens
from bot.github.errors import GitHubRequestError, PushRefused
from bot.github.gateway import BENCH_SCOPE, REACTION_SCOPE, RECIPES_SCOPE, GitHubRepo
from bot.github.gitops import Identity, Mirror
from bot.service.dashboard_issue import DASHBOARD_SCOPE, RECIPES_READ_SCOPE
from tests.service import github_permissions as table
from tests.service.conftest import BENCH, BOT, MAINTAINER, RECIPES, Harness, push
from tests.service.fakegithub import FakeGitHub, manifest_permissions

SCOPES = {
    "BENCH_SCOPE": BENCH_SCOPE,
    "RECIPES_SCOPE": RECIPES_SCOPE,
    "REACTION_SCOPE": REACTION_SCOPE,
    "DASHBOARD_SCOPE": DASHBOARD_SCOPE,
    "RECIPES_READ_SCOPE": RECIPES_READ_SCOPE,
}


def entry(method: str, path: str) -> table.Endpoint:
    found = table.endpoint(method, path)
    assert found is not None, f"{method} {path} is not classified"
    return found


def test_the_table_says_what_github_documents() -> None:
    reaction = entry("POST", "/repos/o/r/issues/comments/7/reactions")
    assert not table.allowed({"pull_requests": "write"}, reaction)  # Issues only
    assert table.allowed({"issues": "write"}, reaction)
    comment = entry("POST", "/repos/o/r/issues/3/comments")
    assert table.allowed({"pull_requests": "write"}, comment)
    assert table.allowed({"issues": "write"}, comment)
    assert not table.allowed({"issues": "read"}, comment)
    ref = entry("DELETE", "/repos/o/r/git/refs/heads/recipe-sync/a/b")
    assert not table.allowed({"contents": "read"}, ref) and table.allowed(
        {"contents": "write"}, ref
    )
    assert table.allowed({"checks": "write"}, entry("GET", "/repos/o/r/commits/abc/check-runs"))
    assert table.allowed({}, entry("GET", "/repos/o/r/collaborators/u/permission"))  # metadata
    assert table.endpoint("GET", "/repos/o/r/branches") is None


def test_every_scope_is_within_app_yml_and_app_yml_asks_for_nothing_unused() -> None:
    granted = manifest_permissions()
    for name, scope in SCOPES.items():
        assert table.grants(granted, scope), f"{name} {dict(scope)} exceeds app.yml {granted}"
    for permission, level in granted.items():
        used = {scope.get(permission) for scope in SCOPES.values()}
        assert level in used, f"app.yml grants {permission}: {level}, no token asks for it"


def test_a_reaction_needs_issues_write(fake: FakeGitHub, app_key: tuple[str, str]) -> None:
    """Failed before REACTION_SCOPE: the command's token (BENCH_SCOPE) had no ``issues``."""
    number = fake.open_pull(BENCH, head_ref="main")
    comment = fake.comment_payload(BENCH, number, "/recipe-sync", sender=MAINTAINER)["comment"]
    tokens = AppTokens(fake.app_id, app_key[0], fake.base_url)

    def repo(scope: dict[str, str]) -> GitHubRepo:
        return GitHubRepo(
            BENCH, tokens.token(BENCH, scope), api_url=fake.base_url, seconds_between_writes=0
        )

    fake.denials_expected = True
    with pytest.raises(GitHubRequestError, match="create reaction: HTTP 403"):
        repo(dict(BENCH_SCOPE)).react(comment["id"], "+1")
    assert fake.denied == [
        ("POST", f"/repos/{BENCH}/issues/comments/{comment['id']}/reactions", "issues=write")
    ]
    repo(dict(REACTION_SCOPE)).react(comment["id"], "+1")
    assert fake.reactions == [(comment["id"], "+1", BOT)]


def test_an_unclassified_endpoint_fails_loudly(fake: FakeGitHub) -> None:
    response = httpx.get(f"{fake.base_url}/repos/{BENCH}/branches")
    assert response.status_code == 501
    assert "github_permissions.py" in response.json()["message"]
    assert fake.unclassified == [("GET", f"/repos/{BENCH}/branches")]
    with pytest.raises(AssertionError, match="missing from the permission table"):
        fake.check_contract()
    fake.unclassified.clear()


def test_a_token_beyond_the_installation_grant_is_refused(
    fake: FakeGitHub, app_key: tuple[str, str]
) -> None:
    fake.installation_permissions.pop("issues")  # an admin has not approved `issues` yet
    tokens = AppTokens(fake.app_id, app_key[0], fake.base_url)
    with pytest.raises(GitHubRequestError, match=r"422.*not granted to this installation"):
        tokens.token(BENCH, REACTION_SCOPE)
    assert tokens.token(BENCH, BENCH_SCOPE)


@pytest.mark.parametrize("how", ["not-approved", "forbidden"])
def test_a_refused_reaction_never_drops_the_command(
    harness: Harness, fake: FakeGitHub, how: str
) -> None:
    if how == "not-approved":
        fake.installation_permissions.pop("issues")  # the reaction token cannot be minted
    else:
        fake.inject("POST", r"/reactions$", 403, message="Resource not accessible by integration")
    push(fake, 256)
    number = fake.open_pull(BENCH, head_ref="bump")
    payload = fake.comment_payload(BENCH, number, "/recipe-sync dry-run", sender=MAINTAINER)
    harness.deliver("issue_comment", payload)
    harness.drain()
    assert fake.reactions == []
    (run,) = fake.check_runs_on(BENCH)
    assert run["status"] == "completed"
    assert any("dry run" in c["body"] for c in fake.comments_on(BENCH, number) if c["user"] == BOT)


def test_a_push_needs_contents_write(
    fake: FakeGitHub, app_key: tuple[str, str], tmp_path: Path
) -> None:
    tokens = AppTokens(fake.app_id, app_key[0], fake.base_url)
    remote = str(fake.repos[RECIPES].path)
    reader = Mirror(tmp_path / "m", RECIPES, remote, tokens.token(RECIPES, RECIPES_READ_SCOPE))
    reader.fetch("+refs/heads/main:refs/rs/heads/main")  # contents: read is enough to fetch
    base = reader.rev("refs/rs/heads/main")
    assert base is not None
    ours = reader.commit_files(base, {"README.md": b"x\n"}, "Align", Identity(BOT, "b@x"))
    fake.denials_expected = True
    with pytest.raises(PushRefused, match=r"HTTP 403.*`contents: write`"):
        reader.push(ours, "recipe-sync/x", expected=None)
    assert fake.denied == [("GIT", f"push {RECIPES}", "contents=write")]
    writer = Mirror(tmp_path / "m", RECIPES, remote, tokens.token(RECIPES, RECIPES_SCOPE))
    assert writer.push(ours, "recipe-sync/x", expected=None)
    assert fake.repos[RECIPES].ref_sha("refs/heads/recipe-sync/x") == ours
