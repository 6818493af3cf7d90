"""Which GitHub client? ``python -m bench.github_client [--clients ours,pygithub,githubkit]``

Runs one sequence of the service's GitHub operations against the stateful fake GitHub of the
service tests (tests/service/fakegithub.py: real HTTP, every request and response checked
against GitHub's OpenAPI description, GitHub's permission table enforced) with each client,
and counts the HTTP requests the fake saw:

  mint a repository-scoped installation token (App JWT → installation id → token), get the
  repository, look for a PR by head, create it, update it, create and edit a sticky comment,
  create a check run and complete it with annotations, list 250 comments (3 pages of 100).

Then it answers one request with each of GitHub's refusals (a 403 secondary limit with and
without ``Retry-After``, 429 with and without it, an exhausted primary limit, 502 to a read
and to a write, a long ``Retry-After``, a plain permission 403) and records what each client
did: the outcome, the requests made, and the seconds it slept (``time.sleep`` is recorded,
never slept; the clients that take a ``sleep`` get the recorder).

``ours`` is bot.github (GitHubRepo + AppTokens) as it is in this checkout; ``pygithub`` and
``githubkit`` are the libraries with their default retry policies, as a caller would use
them without our code. PyGithub is no longer a dependency: ``pip install PyGithub`` to
compare it (without it the column is left out). Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.github.auth import AppTokens
from bot.github.gateway import BENCH_SCOPE, GitHubRepo
from tests.service.fakegithub import FakeGitHub, ServerThread, app_keypair

BENCH = "org/bench"
OWNER, NAME = BENCH.split("/")
ANNOTATIONS = [
    {
        "path": "benchmarks/run.sh",
        "start_line": 3,
        "end_line": 3,
        "annotation_level": "warning",
        "message": "--max-num-seqs differs from the recipe",
    }
]
SECONDARY = "You have exceeded a secondary rate limit. Please wait a few minutes."


@dataclass
class Sleeps:
    """``time.sleep`` of the bench's thread, recorded instead of slept."""

    waits: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.waits.append(round(float(seconds), 1))


# --- the three clients, each as {operation: callable} ------------------------------------


class Ours:
    name = "ours"

    def __init__(self, fake: FakeGitHub, key: str, sleeps: Sleeps) -> None:
        self.fake, self.key, self.sleeps = fake, key, sleeps

    def mint(self) -> None:
        tokens = AppTokens(self.fake.app_id, self.key, self.fake.base_url, sleep=self.sleeps)
        token = tokens.token(BENCH, BENCH_SCOPE)
        self.gh = GitHubRepo(
            BENCH,
            token,
            api_url=self.fake.base_url,
            sleep=self.sleeps,
            seconds_between_writes=0,
        )

    def get_repo(self) -> None:
        self.gh.info()

    def find_pull(self, branch: str) -> None:
        self.gh.pulls_by_head(OWNER, branch)

    def create_pull(self, branch: str) -> int:
        made = self.gh.create_pull(base="main", head=branch, title="t", body="b", draft=False)
        return made.number

    def update_pull(self, number: int) -> None:
        self.gh.edit_pull(number, title="t2", body="b2")

    def create_comment(self, number: int) -> int:
        return self.gh.create_comment(number, "<!-- sticky --> one").id

    def edit_comment(self, comment_id: int) -> None:
        self.gh.edit_comment(comment_id, "<!-- sticky --> two")

    def check_run(self, sha: str) -> None:
        run = self.gh.create_check_run(
            name="recipe-sync", head_sha=sha, external_id="x", status="in_progress"
        )
        self.gh.update_check_run(
            run.id,
            {
                "conclusion": "neutral",
                "output": {"title": "t", "summary": "s", "annotations": ANNOTATIONS},
            },
        )

    def list_comments(self, number: int) -> int:
        return len(self.gh.comments(number))


class PyGithubDefaults:
    name = "pygithub"

    def __init__(self, fake: FakeGitHub, key: str, sleeps: Sleeps) -> None:
        self.fake, self.key = fake, key

    def mint(self) -> None:
        from github import Auth, Github, GithubIntegration

        app = GithubIntegration(
            auth=Auth.AppAuth(int(self.fake.app_id), self.key), base_url=self.fake.base_url
        )
        installation = app.get_repo_installation(OWNER, NAME)
        # get_access_token(installation_id, permissions) has no `repositories`: a token
        # scoped to one repository needs a raw request through PyGithub's requester
        _, data = app.requester.requestJsonAndCheck(
            "POST",
            f"/app/installations/{installation.id}/access_tokens",
            headers={"Authorization": f"Bearer {app.create_jwt()}"},
            input={"repositories": [NAME], "permissions": dict(BENCH_SCOPE)},
        )
        # per_page=100 as the service asks (PyGithub's default, 30, lists 250 in 9 requests)
        self.github = Github(
            auth=Auth.Token(data["token"]), base_url=self.fake.base_url, per_page=100
        )
        self.repo = self.github.get_repo(BENCH, lazy=True)

    def get_repo(self) -> None:
        self.github.get_repo(BENCH).full_name  # noqa: B018 (the request is the point)

    def find_pull(self, branch: str) -> None:
        list(self.repo.get_pulls(state="all", head=f"{OWNER}:{branch}"))

    def create_pull(self, branch: str) -> int:
        return self.repo.create_pull(base="main", head=branch, title="t", body="b").number

    def update_pull(self, number: int) -> None:
        self.repo.get_pull(number).edit(title="t2", body="b2")

    def create_comment(self, number: int) -> int:
        return self.repo.get_issue(number).create_comment("<!-- sticky --> one").id

    def edit_comment(self, comment_id: int) -> None:
        self.repo.get_issue(1).get_comment(comment_id).edit("<!-- sticky --> two")

    def check_run(self, sha: str) -> None:
        run = self.repo.create_check_run(
            name="recipe-sync", head_sha=sha, external_id="x", status="in_progress"
        )
        run.edit(
            conclusion="neutral",
            output={"title": "t", "summary": "s", "annotations": ANNOTATIONS},
        )

    def list_comments(self, number: int) -> int:
        return len(list(self.repo.get_issue(number).get_comments()))


class GitHubKitDefaults:
    name = "githubkit"

    def __init__(self, fake: FakeGitHub, key: str, sleeps: Sleeps) -> None:
        self.fake, self.key = fake, key

    def mint(self) -> None:
        from githubkit import AppAuthStrategy, GitHub

        app = GitHub(AppAuthStrategy(self.fake.app_id, self.key), base_url=self.fake.base_url)
        installation = app.rest.apps.get_repo_installation(OWNER, NAME).parsed_data
        # minted explicitly (as_installation() would mint lazily): git pushes need the token
        minted = app.rest.apps.create_installation_access_token(
            installation.id, repositories=[NAME], permissions=dict(BENCH_SCOPE)
        ).parsed_data
        self.gh = GitHub(minted.token, base_url=self.fake.base_url)

    def get_repo(self) -> None:
        self.gh.rest.repos.get(OWNER, NAME)

    def find_pull(self, branch: str) -> None:
        self.gh.rest.pulls.list(OWNER, NAME, state="all", head=f"{OWNER}:{branch}")

    def create_pull(self, branch: str) -> int:
        made = self.gh.rest.pulls.create(OWNER, NAME, base="main", head=branch, title="t", body="b")
        return made.parsed_data.number

    def update_pull(self, number: int) -> None:
        self.gh.rest.pulls.update(OWNER, NAME, number, title="t2", body="b2")

    def create_comment(self, number: int) -> int:
        made = self.gh.rest.issues.create_comment(OWNER, NAME, number, body="<!-- sticky --> one")
        return made.parsed_data.id

    def edit_comment(self, comment_id: int) -> None:
        self.gh.rest.issues.update_comment(OWNER, NAME, comment_id, body="<!-- sticky --> two")

    def check_run(self, sha: str) -> None:
        run = self.gh.rest.checks.create(
            OWNER, NAME, name="recipe-sync", head_sha=sha, external_id="x", status="in_progress"
        ).parsed_data
        self.gh.rest.checks.update(
            OWNER,
            NAME,
            run.id,
            data={
                "conclusion": "neutral",
                "output": {"title": "t", "summary": "s", "annotations": ANNOTATIONS},
            },
        )

    def list_comments(self, number: int) -> int:
        pages = self.gh.rest.paginate(
            self.gh.rest.issues.list_comments,
            owner=OWNER,
            repo=NAME,
            issue_number=number,
            per_page=100,
        )
        return sum(1 for _ in pages)


CLIENTS: dict[str, Callable[[FakeGitHub, str, Sleeps], Any]] = {
    "ours": Ours,
    "pygithub": PyGithubDefaults,
    "githubkit": GitHubKitDefaults,
}

# --- one fake per client -----------------------------------------------------------------


class Fixture:
    def __init__(self, root: Path, keys: tuple[str, str]) -> None:
        self.fake = FakeGitHub(root, public_key=keys[1])
        self.server = ServerThread(self.fake.app)

    def __enter__(self) -> FakeGitHub:
        self.server.__enter__()
        self.fake.base_url = self.server.url
        self.fake.create_repo(BENCH, {"benchmarks/run.sh": "vllm serve m\n"})
        return self.fake

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)


def seed_comments(fake: FakeGitHub, number: int, count: int) -> None:
    """``count`` comments by someone else, straight into the fake's state (not counted)."""
    for _ in range(count):
        comment_id = fake.next_id()
        fake.comments[comment_id] = {
            "id": comment_id,
            "repo": BENCH,
            "issue": number,
            "body": "lgtm",
            "user": "someone",
            "created_at": time.time(),
        }


def requests_since(fake: FakeGitHub, start: int) -> list[tuple[str, str, int]]:
    return fake.requests[start:]


def sequence(client: Any, fake: FakeGitHub) -> list[tuple[str, int]]:
    """(operation, requests) for the whole sequence."""
    sha = fake.commit(BENCH, "bench-branch", {"benchmarks/run.sh": "vllm serve m --x 1\n"})
    counts: list[tuple[str, int]] = []
    state: dict[str, int] = {}

    def step(name: str, fn: Callable[[], Any]) -> Any:
        start = len(fake.requests)
        result = fn()
        counts.append((name, len(fake.requests) - start))
        return result

    step("mint token", client.mint)
    step("get repository", client.get_repo)
    step("find PR by head", lambda: client.find_pull("bench-branch"))
    state["pr"] = step("create PR", lambda: client.create_pull("bench-branch"))
    step("update PR", lambda: client.update_pull(state["pr"]))
    state["comment"] = step("create comment", lambda: client.create_comment(state["pr"]))
    step("edit comment", lambda: client.edit_comment(state["comment"]))
    step("check run + annotations", lambda: client.check_run(sha))
    seed_comments(fake, state["pr"], 249)
    listed = step("list 250 comments", lambda: client.list_comments(state["pr"]))
    assert listed == 250, listed
    return counts


# --- refusals ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    name: str
    method: str
    status: int
    headers: dict[str, str]
    message: str = ""
    times: int = 1


def refusals(now: float) -> list[Refusal]:
    reset = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 30)}
    return [
        Refusal("403 secondary, no headers", "GET", 403, {}, SECONDARY),
        Refusal("403 secondary, Retry-After: 3", "GET", 403, {"Retry-After": "3"}, SECONDARY),
        Refusal("429 Retry-After: 7", "GET", 429, {"Retry-After": "7"}),
        Refusal("429, no headers", "GET", 429, {}),
        Refusal("403 primary exhausted, reset +30 s", "GET", 403, reset, "API rate limit exceeded"),
        Refusal("403 Retry-After: 600 (long)", "GET", 403, {"Retry-After": "600"}, SECONDARY),
        Refusal("502 x2 to a read", "GET", 502, {}, times=2),
        Refusal("502 to a write (comment)", "POST", 502, {}),
        Refusal("403 permission", "GET", 403, {}, "Resource not accessible by integration"),
    ]


def answer(client: Any, fake: FakeGitHub, refusal: Refusal, sleeps: Sleeps) -> dict[str, Any]:
    pattern = r"/issues/\d+/comments$" if refusal.method == "POST" else r"/repos/org/bench$"
    number = fake.open_pull(BENCH, head_ref="main") if refusal.method == "POST" else 0
    fake.inject(
        refusal.method,
        pattern,
        refusal.status,
        headers=refusal.headers,
        message=refusal.message,
        times=refusal.times,
    )
    start, slept = len(fake.requests), len(sleeps.waits)
    try:
        if refusal.method == "POST":
            client.create_comment(number)
        else:
            client.get_repo()
        outcome = "ok"
    except Exception as err:  # the outcome is the measurement
        outcome = type(err).__name__
    fake.faults.clear()
    made = [r for r in requests_since(fake, start) if r[0] == refusal.method]
    comments = len(fake.comments_on(BENCH, number)) if number else None
    return {
        "outcome": outcome,
        "requests": len(made),
        "slept": sleeps.waits[slept:],
        "comments": comments,
    }


def run(names: list[str]) -> None:
    keys = app_keypair()
    sleeps = Sleeps()
    real_sleep = time.sleep
    main = threading.main_thread()

    def recording(seconds: float) -> None:
        # only the bench's own thread: the fake's server thread sleeps for real
        if threading.current_thread() is main:
            sleeps(seconds)
        else:
            real_sleep(seconds)

    totals: dict[str, list[tuple[str, int]]] = {}
    behaviour: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            with Fixture(Path(tmp) / name, keys) as fake:
                time.sleep = recording  # PyGithub (urllib3) and githubkit sleep with it
                try:
                    client = CLIENTS[name](fake, keys[0], sleeps)
                    totals[name] = sequence(client, fake)
                    behaviour[name] = {
                        r.name: answer(client, fake, r, sleeps) for r in refusals(time.time())
                    }
                finally:
                    time.sleep = real_sleep
                problems = fake.rejected + fake.invalid_responses + fake.denied
                if problems:
                    print(f"{name}: the fake refused or flagged {problems}")
    print_tables(names, totals, behaviour)


def print_tables(
    names: list[str],
    totals: dict[str, list[tuple[str, int]]],
    behaviour: dict[str, dict[str, dict[str, Any]]],
) -> None:
    print("| operation | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    operations = [op for op, _ in totals[names[0]]]
    for index, op in enumerate(operations):
        print(f"| {op} | " + " | ".join(str(totals[n][index][1]) for n in names) + " |")
    print("| **total** | " + " | ".join(str(sum(c for _, c in totals[n])) for n in names) + " |")
    print()
    print("| answer | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for refusal in behaviour[names[0]]:
        cells = []
        for n in names:
            seen = behaviour[n][refusal]
            slept = "+".join(f"{s:g}" for s in seen["slept"]) or "0"
            cell = f"{seen['outcome']}, {seen['requests']} req, slept {slept} s"
            if seen["comments"] is not None:
                cell += f", {seen['comments']} comment(s)"
            cells.append(cell)
        print(f"| {refusal} | " + " | ".join(cells) + " |")


def installed() -> list[str]:
    import importlib.util

    return [n for n in CLIENTS if n != "pygithub" or importlib.util.find_spec("github")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", default=",".join(installed()))
    args = parser.parse_args()
    run(args.clients.split(","))


if __name__ == "__main__":
    main()
