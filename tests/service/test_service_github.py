"""The GitHub layer against the fake over real HTTP: retry and rate-limit policy, App
tokens, sticky comments, Actions evidence, and bare mirrors."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from bot.github.actions import GitHubRunSource
from bot.github.auth import AppTokens
from bot.github.errors import (
    AppNotInstalled,
    GitHubRequestError,
    PushRefused,
    TransientGitHubError,
)
from bot.github.gateway import BENCH_SCOPE, GitHubRepo
from bot.github.gitops import NOREPLY, CommitInfo, Identity, Mirror, grant_for, push_refusal
from bot.present.posted import VERIFY_MARKER
from bot.service.comments import StickyComments
from bot.service.metrics import Metrics
from bot.state.store import Store
from tests.service.conftest import BENCH, BOT, RECIPE, RECIPES, SCRIPT
from tests.service.fakegithub import DATA, FakeGitHub, git

TOKEN = "ghp_personal"  # the fake's personal token, user "someone"


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []
        self.now = time.time()

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def client(
    fake: FakeGitHub, sleeps: Sleeps, metrics: Metrics | None = None, repo: str = BENCH
) -> GitHubRepo:
    return GitHubRepo(
        repo,
        TOKEN,
        api_url=fake.base_url,
        observer=metrics,
        sleep=sleeps.sleep,
        clock=sleeps.clock,
        seconds_between_writes=0,
    )


# --- rate limits and retries -----------------------------------------------------------------


def test_primary_rate_limit_waits_until_reset(fake: FakeGitHub) -> None:
    sleeps, metrics = Sleeps(), Metrics()
    reset = int(sleeps.now) + 40
    fake.inject(
        "GET",
        r"/repos/org/bench$",
        403,
        headers={
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": str(reset),
        },
        message="API rate limit exceeded for installation ID 1.",
    )
    gh = client(fake, sleeps, metrics)
    gh.max_inline_wait = 600
    assert gh.info().full_name == BENCH
    assert len(sleeps.waits) == 1 and 40 <= sleeps.waits[0] <= 42
    assert (
        metrics.value("recipe_sync_github_rate_limit_waits_total", {"reason": "primary-reset"}) == 1
    )
    assert (
        metrics.value(
            "recipe_sync_github_api_calls_total", {"operation": "get repository", "outcome": "403"}
        )
        == 1
    )


def test_retry_after_and_secondary_limits(fake: FakeGitHub) -> None:
    sleeps = Sleeps()
    gh = client(fake, sleeps)
    gh.max_inline_wait = 600
    fake.inject("GET", r"/pulls$", 429, headers={"Retry-After": "7"})
    assert gh.pulls_by_head("org", "nothing") == []
    assert sleeps.waits == [7]
    # a secondary limit without headers: >= 60 s, then exponential
    fake.inject(
        "POST",
        r"/issues/\d+/comments$",
        403,
        times=2,
        message="You have exceeded a secondary rate limit. Please wait a few minutes.",
    )
    fake.open_pull(BENCH, head_ref="main")
    gh.create_comment(1, "hello")
    assert sleeps.waits == [7, 60, 120]
    assert len(fake.comments_on(BENCH, 1)) == 1  # the write happened once


def test_long_waits_reschedule_the_job_instead_of_sleeping(fake: FakeGitHub) -> None:
    sleeps = Sleeps()
    fake.inject(
        "GET",
        r"/repos/org/bench$",
        403,
        headers={
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": str(int(sleeps.now) + 3000),
        },
    )
    with pytest.raises(TransientGitHubError) as err:
        client(fake, sleeps).info()
    assert sleeps.waits == [] and err.value.retry_after is not None and err.value.retry_after > 2900


def test_plain_403_is_not_retried(fake: FakeGitHub) -> None:
    sleeps = Sleeps()
    fake.inject("GET", r"/repos/org/bench$", 403, message="Resource not accessible by integration")
    with pytest.raises(GitHubRequestError, match="403"):
        client(fake, sleeps).info()
    assert sleeps.waits == []


def test_server_errors_retry_reads_but_not_writes(fake: FakeGitHub) -> None:
    sleeps = Sleeps()
    gh = client(fake, sleeps)
    fake.inject("GET", r"/repos/org/bench$", 502, times=2)
    assert gh.info().default_branch == "main"
    assert sleeps.waits == [1, 2]
    fake.open_pull(BENCH, head_ref="main")
    fake.inject("POST", r"/issues/\d+/comments$", 502)
    with pytest.raises(TransientGitHubError, match="not retried in place"):
        gh.create_comment(1, "maybe")
    assert sleeps.waits == [1, 2]
    assert [p for m, p, s in fake.requests if m == "POST"] == ["/repos/org/bench/issues/1/comments"]


def test_the_client_points_at_the_configured_api(fake: FakeGitHub) -> None:
    fake.open_pull(BENCH, head_ref="main", title="Hello")
    pull = client(fake, Sleeps()).pull(1)
    assert pull.title == "Hello" and pull.base_repo == BENCH and pull.user == "author"
    listed = client(fake, Sleeps()).pulls_by_head("org", "main")
    assert [(p.number, p.merged) for p in listed] == [(1, False)]


# --- App authentication ----------------------------------------------------------------------


def test_installation_tokens_are_scoped_cached_and_refreshed(
    fake: FakeGitHub, app_key: tuple[str, str]
) -> None:
    tokens = AppTokens(fake.app_id, app_key[0], fake.base_url)
    first = tokens.token(BENCH, BENCH_SCOPE)
    assert tokens.token(BENCH, BENCH_SCOPE) == first and tokens.minted == 1
    info = fake.tokens[first]
    assert info.repos == frozenset({BENCH}) and info.permissions == dict(BENCH_SCOPE)
    other = tokens.token(RECIPES, {"contents": "write"})
    assert other != first and fake.tokens[other].repos == frozenset({RECIPES})
    # scoped: the bench token cannot touch the recipes repo
    with pytest.raises(GitHubRequestError, match="403"):
        GitHubRepo(RECIPES, first, api_url=fake.base_url, seconds_between_writes=0).info()
    # a token within 5 minutes of expiry is replaced before use
    fake.token_ttl = 200
    short = AppTokens(fake.app_id, app_key[0], fake.base_url)
    assert short.token(BENCH, BENCH_SCOPE) != short.token(BENCH, BENCH_SCOPE)
    assert short.minted == 2
    with pytest.raises(AppNotInstalled, match="not installed on org/missing"):
        tokens.token("org/missing", BENCH_SCOPE)


def test_a_jwt_signed_by_another_key_is_rejected(fake: FakeGitHub) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    other = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )
    with pytest.raises(GitHubRequestError, match="401"):
        AppTokens(fake.app_id, other, fake.base_url).token(BENCH, BENCH_SCOPE)


def test_a_404_when_minting_looks_the_installation_up_again(
    fake: FakeGitHub, app_key: tuple[str, str]
) -> None:
    tokens = AppTokens(fake.app_id, app_key[0], fake.base_url)
    tokens.token(BENCH, BENCH_SCOPE)
    fake.repos[BENCH].installation_id = 77  # uninstalled and installed again: a new id
    token = tokens.token(BENCH, {"metadata": "read", "pull_requests": "write"})
    assert fake.tokens[token].repos == frozenset({BENCH})
    assert fake.calls("GET", f"/repos/{BENCH}/installation$") == 2
    assert ("POST", "/app/installations/1/access_tokens", 404) in fake.requests
    fake.repos.pop(BENCH)  # a 404 again after a fresh look-up: not installed
    tokens.forget(77)
    with pytest.raises(AppNotInstalled, match=f"not installed on {BENCH}"):
        tokens.token(BENCH, BENCH_SCOPE)


def test_forget_drops_one_installations_ids_and_tokens(
    fake: FakeGitHub, app_key: tuple[str, str]
) -> None:
    tokens = AppTokens(fake.app_id, app_key[0], fake.base_url)
    bench, recipes = tokens.token(BENCH, BENCH_SCOPE), tokens.token(RECIPES, BENCH_SCOPE)
    tokens.forget(fake.repos[BENCH].installation_id)
    assert tokens.token(RECIPES, BENCH_SCOPE) == recipes  # another installation: kept
    assert tokens.token(BENCH, BENCH_SCOPE) != bench and tokens.minted == 3
    assert fake.calls("GET", f"/repos/{BENCH}/installation$") == 2


@pytest.mark.parametrize(
    ("headers", "message", "wait"),
    [
        ({"Retry-After": "3"}, "You have exceeded a secondary rate limit.", 3.0),
        ({}, "You have exceeded a secondary rate limit. Please wait a few minutes.", 60.0),
        ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "0"}, "rate limit exceeded", 1.0),
    ],
)
def test_a_rate_limited_token_request_is_waited_out(
    fake: FakeGitHub, app_key: tuple[str, str], headers: dict[str, str], message: str, wait: float
) -> None:
    """403 is not always permanent: GitHub's secondary and primary limits say when to retry."""
    waits: list[float] = []
    tokens = AppTokens(
        fake.app_id, app_key[0], fake.base_url, sleep=waits.append, max_inline_wait=60
    )
    fake.inject("POST", r"/access_tokens$", 403, headers=headers, message=message)
    assert tokens.token(BENCH, BENCH_SCOPE) and tokens.minted == 1
    assert waits == [wait]
    assert fake.calls("POST", r"/access_tokens$") == 1  # the retry, after the refused one


def test_a_long_rate_limit_reschedules_and_a_plain_403_is_permanent(
    fake: FakeGitHub, app_key: tuple[str, str]
) -> None:
    waits: list[float] = []
    tokens = AppTokens(fake.app_id, app_key[0], fake.base_url, sleep=waits.append)
    fake.inject("GET", r"/installation$", 403, headers={"Retry-After": "600"}, message="slow")
    with pytest.raises(TransientGitHubError) as later:
        tokens.token(BENCH, BENCH_SCOPE)
    assert later.value.retry_after == 600 and waits == []
    fake.inject("POST", r"/access_tokens$", 403, message="Resource not accessible by integration")
    with pytest.raises(GitHubRequestError, match="create installation token: HTTP 403"):
        tokens.token(BENCH, BENCH_SCOPE)
    assert waits == []


# --- sticky comments -------------------------------------------------------------------------


def test_sticky_comment_is_found_across_pages_by_marker_and_author(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    fake.open_pull(BENCH, head_ref="main")
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    gh = client(fake, Sleeps())
    for index in range(230):
        fake.comments[fake.next_id()] = {
            "id": fake._ids,
            "repo": BENCH,
            "issue": 1,
            "body": f"chat {index}",
            "user": "u",
        }
    # someone quoting our marker must not hijack the sticky comment
    fake.comments[fake.next_id()] = {
        "id": fake._ids,
        "repo": BENCH,
        "issue": 1,
        "body": VERIFY_MARKER + "\nfake",
        "user": "mallory",
    }
    stickies = StickyComments(gh, store, "someone")
    created = stickies.upsert(1, "verify", VERIFY_MARKER, "v1")
    assert created.action == "created"
    store.conversation.set_sticky_comment(
        BENCH, 1, "verify", None
    )  # forget the cache: find it on page 3
    assert stickies.upsert(1, "verify", VERIFY_MARKER, "v1").action == "unchanged"
    assert fake.calls("GET", r"/issues/1/comments$") >= 3
    patches = fake.calls("PATCH", r"/issues/comments/")
    assert stickies.upsert(1, "verify", VERIFY_MARKER, "v2").action == "updated"
    assert fake.calls("PATCH", r"/issues/comments/") == patches + 1
    ours = [c for c in fake.comments_on(BENCH, 1) if c["user"] == "someone"]
    assert len(ours) == 1 and ours[0]["body"] == VERIFY_MARKER + "\nv2"
    assert stickies.delete(1, "verify", VERIFY_MARKER).action == "deleted"
    assert [c for c in fake.comments_on(BENCH, 1) if c["user"] == "someone"] == []
    store.close()


# --- Actions evidence ------------------------------------------------------------------------


def test_run_source_matches_fork_runs_pages_jobs_and_follows_log_redirects(
    fake: FakeGitHub,
) -> None:
    log_text = (DATA / "rest.actions.download-job-logs-for-workflow-run.txt").read_text()
    sha = "a" * 40
    run_id = fake.add_workflow_run(
        BENCH, head_sha=sha, head_branch="tune", jobs=130, log_text=log_text
    )
    fake.add_workflow_run(BENCH, head_sha=sha, head_branch="other-branch")
    for _ in range(110):
        fake.add_workflow_run(BENCH, head_sha="b" * 40, head_branch="tune")
    source = GitHubRunSource(client(fake, Sleeps()))
    runs = source.workflow_runs(sha, "tune")
    # the head's runs (any branch) plus the branch's runs on earlier heads, merged by id
    assert len(runs) == 2 + 110 and len({r["id"] for r in runs}) == len(runs)
    fork_run = next(r for r in runs if r["id"] == run_id)
    assert fork_run["pull_requests"] == [] and fork_run["head_branch"] == "tune"
    assert all(r["head_sha"] == sha or r["head_branch"] == "tune" for r in runs)
    assert len(source.workflow_runs(sha, None)) == 2
    assert len(source.workflow_runs("b" * 40, None)) == 110  # two pages
    attempt = source.run_attempt(run_id, 1)
    assert attempt is not None and attempt["id"] == run_id
    assert source.run_attempt(run_id, 2) is None
    jobs = source.jobs(run_id, 1)
    assert len(jobs) == 130 and {"steps", "labels", "runner_name"} <= set(jobs[0])
    log = source.job_log(jobs[0]["id"])
    assert log == log_text  # the storage URL got no Authorization header (it would 400)
    fake.logs.pop(jobs[1]["id"])
    assert source.job_log(jobs[1]["id"]) is None  # 410 Gone
    assert source.job_log(123) is None  # 404


# --- bare mirrors ----------------------------------------------------------------------------


def test_mirror_reads_pr_heads_without_checkout_hooks_or_token_in_config(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    fake.commit(
        BENCH,
        "bump",
        {SCRIPT: "echo changed\n", ".gitmodules": '[submodule "x"]\n\tpath = x\n\turl = ../x\n'},
        parent=fake.repos[BENCH].ref_sha("refs/heads/main"),
    )
    number = fake.open_pull(BENCH, head_ref="bump")
    mirror = Mirror(tmp_path / "m", BENCH, str(fake.repos[BENCH].path), token="ghs_secret_token")
    mirror.ensure()
    hook = mirror.path / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {tmp_path}/hook-ran\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    mirror.fetch(f"+refs/pull/{number}/head:refs/rs/pull/{number}/head")
    head = mirror.rev(f"refs/rs/pull/{number}/head")
    assert head == fake.pulls[BENCH][number]["head_sha"]
    assert mirror.source(head).read_bytes(SCRIPT) == b"echo changed\n"
    assert not (tmp_path / "hook-ran").exists()
    assert git(mirror.path, "rev-parse", "--is-bare-repository") == "true"
    checked_out = [
        p for p in mirror.path.rglob("*") if p.name in ("dsr1_fp8_h200.sh", ".gitmodules")
    ]
    assert checked_out == [] and not (mirror.path / "x").exists()
    assert "ghs_secret_token" not in (mirror.path / "config").read_text()


def test_lease_and_human_commit_detection(fake: FakeGitHub, tmp_path: Path) -> None:
    bot = Identity(BOT, "bot@example.com")
    mirror = Mirror(tmp_path / "m", RECIPES, str(fake.repos[RECIPES].path))
    mirror.fetch("+refs/heads/main:refs/rs/heads/main")
    base = mirror.rev("refs/rs/heads/main")
    assert base is not None
    ours = mirror.commit_files(base, {RECIPE: b"new: 1\n"}, "Align", bot)
    assert mirror.push(ours, "recipe-sync/x", expected=None)
    assert mirror.read(ours, "README.md") == b"recipes\n"  # other files kept
    human = fake.commit(
        RECIPES, "recipe-sync/x", {RECIPE: b"human: 1\n".decode()}, author=("Jane", "jane@x")
    )
    again = mirror.commit_files(base, {RECIPE: b"new: 2\n"}, "Align", bot)
    assert not mirror.push(again, "recipe-sync/x", expected=ours)  # lease refused
    assert fake.repos[RECIPES].ref_sha("refs/heads/recipe-sync/x") == human
    mirror.fetch("+refs/heads/recipe-sync/x:refs/rs/branches/x")
    commits = mirror.commits_between(base, human)
    assert [c.by_human(bot) for c in commits] == [True, False]
    update_branch = CommitInfo("s", "Jane", "jane@x", NOREPLY, 2, "Merge branch 'main'")
    assert not update_branch.by_human(bot)  # GitHub's "Update branch" merge
    assert git(fake.repos[RECIPES].path, "log", "-1", "--format=%s", ours) == "Align"


def decline_pushes(repo: Path, *lines: str) -> None:
    """A pre-receive hook in the (bare, local) remote that prints ``lines`` and declines."""
    hook = repo / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\n" + "".join(f"echo '{line}' >&2\n" for line in lines) + "exit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)


def test_a_declined_push_is_a_refusal_not_a_lost_lease(fake: FakeGitHub, tmp_path: Path) -> None:
    remote = fake.repos[RECIPES].path
    mirror = Mirror(tmp_path / "m", RECIPES, str(remote))
    mirror.fetch("+refs/heads/main:refs/rs/heads/main")
    base = mirror.rev("refs/rs/heads/main")
    assert base is not None
    ours = mirror.commit_files(base, {RECIPE: b"new: 1\n"}, "Align", Identity(BOT, "b@x"))
    decline_pushes(remote, "error: GH006: Protected branch update failed for refs/heads/x.")
    with pytest.raises(PushRefused) as refused:
        mirror.push(ours, "recipe-sync/x", expected=None)
    assert refused.value.reason == (
        "pre-receive hook declined: GH006: Protected branch update failed for refs/heads/x."
    )
    assert "branch protection" in refused.value.grant
    assert "\n" not in str(refused.value) and "recipe-sync/x" in str(refused.value)
    assert fake.repos[RECIPES].ref_sha("refs/heads/recipe-sync/x") is None
    # with the hook gone, a lease that no longer holds is still just a lost lease
    (remote / "hooks" / "pre-receive").unlink()
    assert mirror.push(ours, "recipe-sync/x", expected=None)
    again = mirror.commit_files(base, {RECIPE: b"new: 2\n"}, "Align", Identity(BOT, "b@x"))
    assert not mirror.push(again, "recipe-sync/x", expected=None)  # "stale info"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("!\tabc:refs/heads/b\t[rejected] (stale info)\nDone", ("stale info", True)),
        ("!\tabc:refs/heads/b\t[rejected] (fetch first)\nDone", ("fetch first", True)),
        (
            "!\tabc:refs/heads/b\t[remote rejected] (refusing to allow a GitHub App to create or "
            "update workflow `.github/workflows/ci.yml` without `workflows` permission)",
            (
                "refusing to allow a GitHub App to create or update workflow "
                "`.github/workflows/ci.yml` without `workflows` permission",
                False,
            ),
        ),
        (
            "!\tabc:refs/heads/b\t[remote rejected] (protected branch hook declined)",
            ("protected branch hook declined", False),
        ),
        (
            "remote: Permission to org/recipes.git denied to recipe-sync[bot].\nfatal: unable "
            "to access 'https://github.com/org/recipes/': The requested URL returned error: 403",
            ("HTTP 403 (the token may not push here)", False),
        ),
        ("fatal: unable to access: Could not resolve host: github.com", None),
    ],
)
def test_push_refusals_are_classified(output: str, expected: tuple[str, bool] | None) -> None:
    assert push_refusal(output) == expected


def test_what_to_grant_names_the_missing_permission() -> None:
    assert "`workflows: write`" in grant_for("refusing to allow ... without `workflows` permission")
    assert "`contents: write`" in grant_for("HTTP 403 (the token may not push here)")
    assert "hook" in grant_for("pre-receive hook declined")
