"""A stateful fake GitHub that speaks the REST wire format over real HTTP.

Responses start from the real example bodies in ``../shared/data/github/rest.*.json``
(deep-copied, then filled with the fake's state, every ``https://api.github.com`` URL
rewritten to the fake's base URL), so the client parses them exactly as it parses GitHub's.
Repositories are local bare git repositories (``clone_url`` is their path); opening a pull
request creates ``refs/pull/<n>/head`` in the base repository like GitHub does.

Installation tokens are held to :mod:`tests.service.github_permissions`, GitHub's documented
permission table: a request its token's permissions do not cover is a 403 (recorded in
``denied``), an endpoint the table does not list a 501 (recorded in ``unclassified``); git
fetches and pushes of a :class:`Mirror` are held to ``contents`` the same way
(:meth:`FakeGitHub.enforce_git_permissions`); the
fixtures fail a test that left either behind unless it said it expected denials. Minting a
token asks for permissions within the installation's grant (``app.yml`` by default), as on
GitHub, or is refused with 422.

Test controls: :meth:`FakeGitHub.inject` makes matching requests fail (e.g. 403/429 with
rate-limit headers), :meth:`FakeGitHub.hold` applies a request's side effect and then
blocks its response until released (a worker killed while waiting never learns it
happened). ``requests`` logs every (method, path, status).
"""

from __future__ import annotations

import copy
import datetime
import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
import pytest
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from ruamel.yaml import YAML

from bot.github.gitops import GitOperationError, Mirror
from tests.service import github_permissions as table
from tests.service.openapi_contract import contract, fractional_timestamps, link_problems
from tests.shared import github_data_dir

DATA = github_data_dir()
TEMPLATE_API = "https://api.github.com"


APP_MANIFEST = Path(__file__).resolve().parents[2] / "app.yml"


def app_keypair() -> tuple[str, str]:
    """A fresh RSA key pair for a GitHub App, PEM (private PKCS8, public SPKI): the App signs
    its JWTs with the first, the fake GitHub verifies them with the second."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


def manifest_permissions() -> dict[str, str]:
    """``default_permissions`` of ``app.yml``: what an installation grants by default."""
    manifest = YAML(typ="safe").load(APP_MANIFEST.read_text())
    return {str(k): str(v) for k, v in manifest["default_permissions"].items()}


def template(name: str) -> Any:
    return json.loads((DATA / name).read_text())


_TEMPLATES = {
    name: template(f"rest.{name}.json")
    for name in (
        "pulls.get",
        "issues.create-comment",
        "checks.create",
        "repos.get-collaborator-permission-level",
        "apps.create-installation-access-token",
        "actions.get-workflow-run",
        "actions.list-jobs-for-workflow-run",
    )
}


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    full_env = {
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "Test Author",
        "GIT_COMMITTER_EMAIL": "author@example.com",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(cwd),
        **(env or {}),
    }
    result = subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=full_env
    )
    return result.stdout.strip()


@dataclass
class FakeRepo:
    full_name: str
    path: Path  # bare repository
    default_branch: str = "main"
    installation_id: int = 1
    pushed_at: float = 0.0  # the last push to any branch (GitHub's repository pushed_at)
    repo_id: int = 0  # GitHub's repository id (what a renamed repository redirects to)

    @property
    def owner(self) -> str:
        return self.full_name.split("/")[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/")[1]

    def ref_sha(self, ref: str) -> str | None:
        loose = self.path / ref
        if ref.startswith("refs/") and loose.is_file():  # fast path: the fake never packs refs
            return loose.read_text().strip()
        try:
            return git(self.path, "rev-parse", "--verify", "--quiet", ref + "^{commit}")
        except subprocess.CalledProcessError:
            return None


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: Any
    times: int


@dataclass
class Hold:
    method: str
    pattern: re.Pattern[str]
    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class TokenInfo:
    login: str
    repos: frozenset[str] | None  # None: a personal token (every repo)
    permissions: dict[str, str] = field(default_factory=dict)


class FakeGitHub:
    def __init__(self, root: Path, *, app_id: str = "4242", public_key: str = "") -> None:
        self.root = root
        self.base_url = ""
        self.lock = threading.RLock()
        self.repos: dict[str, FakeRepo] = {}
        self.pulls: dict[str, dict[int, dict[str, Any]]] = {}
        self.comments: dict[int, dict[str, Any]] = {}
        self.check_runs: dict[int, dict[str, Any]] = {}
        self.labels: dict[str, dict[str, str]] = {}
        self.reactions: list[tuple[int, str, str]] = []
        self.permissions: dict[tuple[str, str], tuple[str, str]] = {}
        self.tokens: dict[str, TokenInfo] = {}
        self.app_id = app_id
        self.app_slug = "recipe-sync"
        self.public_key = public_key
        self.runs: dict[str, dict[int, dict[str, Any]]] = {}
        self.jobs: dict[int, dict[str, Any]] = {}
        self.logs: dict[int, str] = {}
        self.requests: list[tuple[str, str, int]] = []
        self.faults: list[Fault] = []
        self.holds: list[Hold] = []
        self.hooks: list[tuple[str, re.Pattern[str], Callable[[], None]]] = []
        self.label_colors_refused = False
        self.token_ttl = 3600.0  # seconds an installation token lives
        # what the installation granted (an admin may not have approved a new permission yet)
        self.installation_permissions: dict[str, str] = manifest_permissions()
        self.denied: list[tuple[str, str, str]] = []  # (method, path, permissions needed)
        self.unclassified: list[tuple[str, str]] = []
        self.denials_expected = False  # set by tests that provoke a 403 on purpose
        # GitHub's REST contract (tests/service/openapi_contract.py): requests GitHub would
        # refuse are answered as GitHub would and recorded; responses that differ from its
        # description are the fake's own bugs, recorded too (both fail the test)
        self.contract = contract()
        self.rejected: list[tuple[str, str, list[str]]] = []
        self.invalid_responses: list[tuple[str, str, int, list[str]]] = []
        self.rejections_expected = False  # set by tests that send what GitHub refuses
        self.moved: dict[str, str] = {}  # renamed repositories: old name → new name
        self.uninstalled: set[int] = set()  # installation ids of an uninstalled App
        self._ids = 1000
        self._template_cache: dict[tuple[Any, ...], str] = {}
        self.app = self._build_app()

    # --- set-up helpers ------------------------------------------------------------------

    def next_id(self) -> int:
        with self.lock:
            self._ids += 1
            return self._ids

    def add_token(self, token: str, login: str) -> None:
        self.tokens[token] = TokenInfo(login, None)

    def create_repo(
        self, full_name: str, files: Mapping[str, str], *, branch: str = "main"
    ) -> FakeRepo:
        """A bare repo with one commit holding ``files`` on ``branch``."""
        path = self.root / f"{full_name}.git"
        path.parent.mkdir(parents=True, exist_ok=True)
        git(self.root, "init", "-q", "--bare", "--template=", "-b", branch, str(path))
        repo = FakeRepo(
            full_name, path, branch, installation_id=len(self.repos) + 1, repo_id=self.next_id()
        )
        self.repos[full_name] = repo
        self.pulls.setdefault(full_name, {})
        self.labels.setdefault(full_name, {})
        self.commit(full_name, branch, files, message="initial")
        return repo

    def fork(self, source: str, full_name: str) -> FakeRepo:
        path = self.root / f"{full_name}.git"
        path.parent.mkdir(parents=True, exist_ok=True)
        git(
            self.root,
            "clone",
            "-q",
            "--bare",
            "--template=",
            str(self.repos[source].path),
            str(path),
        )
        repo = FakeRepo(
            full_name,
            path,
            self.repos[source].default_branch,
            installation_id=999,
            repo_id=self.next_id(),
        )
        repo.pushed_at = time.time()
        self.repos[full_name] = repo
        self.pulls.setdefault(full_name, {})
        return repo

    def commit(
        self,
        full_name: str,
        branch: str,
        files: Mapping[str, str],
        *,
        message: str = "change",
        author: tuple[str, str] = ("Test Author", "author@example.com"),
        parent: str | None = None,
    ) -> str:
        """Commit ``files`` (path → text; others kept) on ``branch`` without a work tree."""
        repo = self.repos[full_name]
        env = {
            "GIT_AUTHOR_NAME": author[0],
            "GIT_AUTHOR_EMAIL": author[1],
            "GIT_COMMITTER_NAME": author[0],
            "GIT_COMMITTER_EMAIL": author[1],
            "GIT_INDEX_FILE": str(repo.path / f"index-{threading.get_ident()}"),
        }
        base = parent or repo.ref_sha(f"refs/heads/{branch}")
        if base:
            git(repo.path, "read-tree", base, env=env)
        else:
            git(repo.path, "read-tree", "--empty", env=env)
        for path, text in files.items():
            blob = (
                subprocess.run(
                    ["git", "hash-object", "-w", "--stdin"],
                    cwd=repo.path,
                    input=text.encode(),
                    capture_output=True,
                    check=True,
                )
                .stdout.decode()
                .strip()
            )
            git(repo.path, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(repo.path, "write-tree", env=env)
        args = ["commit-tree", tree, "-m", message] + (["-p", base] if base else [])
        sha = git(repo.path, *args, env=env)
        git(repo.path, "update-ref", f"refs/heads/{branch}", sha)
        repo.pushed_at = time.time()
        (repo.path / f"index-{threading.get_ident()}").unlink(missing_ok=True)
        return sha

    def rename(self, old: str, new: str) -> None:
        """Rename a repository as GitHub does: its pull requests, comments, check runs, runs
        and tokens follow it, and the old name redirects (301 for reads, 307 for writes) to
        ``/repositories/<id>``."""
        with self.lock:
            repo = self.repos.pop(old)
            repo.full_name = new
            self.repos[new] = repo
            for table_ in (self.pulls, self.labels, self.runs):
                if old in table_:
                    table_[new] = table_.pop(old)  # type: ignore[attr-defined]
            for pulls in self.pulls.values():
                for pr in pulls.values():
                    if pr["head_repo"] == old:
                        pr["head_repo"] = new
            for item in [*self.comments.values(), *self.check_runs.values(), *self.jobs.values()]:
                if item.get("repo") == old:
                    item["repo"] = new
            self.permissions = {
                (new if r == old else r, login): value
                for (r, login), value in self.permissions.items()
            }
            for info in self.tokens.values():
                if info.repos is not None and old in info.repos:
                    info.repos = (info.repos - {old}) | {new}
            self.moved = {k: (new if v == old else v) for k, v in self.moved.items()}
            self.moved[old] = new

    def revoke_tokens(self) -> None:
        """Every installation token stops working (GitHub answers 401 Bad credentials)."""
        with self.lock:
            self.tokens = {t: i for t, i in self.tokens.items() if i.repos is None}

    def uninstall(self, installation_id: int) -> None:
        """The App is uninstalled from an account: its tokens are revoked, and looking the
        installation up or minting for it is a 404."""
        with self.lock:
            self.uninstalled.add(installation_id)
        self.revoke_tokens()

    def remove_from_installation(self, full_name: str) -> None:
        """The repository is taken out of the App's installation (its tokens revoked)."""
        with self.lock:
            self.repos[full_name].installation_id = 0
        self.revoke_tokens()

    def set_permission(
        self, repo: str, login: str, permission: str, role: str | None = None
    ) -> None:
        self.permissions[(repo, login)] = (permission, role or permission)

    def open_pull(
        self,
        repo: str,
        *,
        head_ref: str,
        head_repo: str | None = None,
        base_ref: str = "main",
        title: str = "Benchmark change",
        user: str = "author",
        labels: tuple[str, ...] = (),
        body: str = "",
        draft: bool = False,
        number: int | None = None,
    ) -> int:
        with self.lock:
            number = number or max(self.pulls[repo], default=0) + 1
            pr = {
                "id": self.next_id(),
                "number": number,
                "state": "open",
                "title": title,
                "body": body,
                "user": user,
                "draft": draft,
                "merged": False,
                "head_repo": head_repo or repo,
                "head_ref": head_ref,
                "base_ref": base_ref,
                "labels": list(labels),
                "head_sha": "",
                "created_at": time.time(),
            }
            self.pulls[repo][number] = pr
            for label in labels:
                self.labels[repo].setdefault(label, "ededed")
        self.refresh_pull_head(repo, number)
        return number

    def refresh_pull_head(self, repo: str, number: int) -> str:
        """Point ``refs/pull/<n>/head`` at the head branch (what GitHub does on push)."""
        pr = self.pulls[repo][number]
        head = self.repos[pr["head_repo"]]
        sha = head.ref_sha(f"refs/heads/{pr['head_ref']}")
        if sha is None:
            return str(pr["head_sha"])
        base = self.repos[repo]
        if sha == pr["head_sha"] and base.ref_sha(f"refs/pull/{number}/head") == sha:
            return sha
        if head.full_name != repo:
            git(
                base.path,
                "fetch",
                "-q",
                str(head.path),
                f"+refs/heads/{pr['head_ref']}:refs/pull/{number}/head",
            )
        else:
            git(base.path, "update-ref", f"refs/pull/{number}/head", sha)
        pr["head_sha"] = sha
        return sha

    def close_pull(self, repo: str, number: int, *, merged: bool = False) -> None:
        pr = self.pulls[repo][number]
        pr["state"] = "closed"
        pr["merged"] = merged

    def add_workflow_run(
        self,
        repo: str,
        *,
        head_sha: str,
        head_branch: str,
        pull_numbers: tuple[int, ...] = (),
        jobs: int = 1,
        log_text: str = "",
        attempt: int = 1,
    ) -> int:
        run_id = self.next_id() * 1000
        self.runs.setdefault(repo, {})[run_id] = {
            "id": run_id,
            "head_sha": head_sha,
            "head_branch": head_branch,
            "pull_numbers": pull_numbers,
            "run_attempt": attempt,
            "job_ids": [],
        }
        for index in range(jobs):
            job_id = self.next_id() * 1000 + 7
            self.jobs[job_id] = {
                "id": job_id,
                "run_id": run_id,
                "name": f"job {index}",
                "repo": repo,
                "attempt": attempt,
            }
            self.runs[repo][run_id]["job_ids"].append(job_id)
            if log_text:
                self.logs[job_id] = log_text
        return run_id

    def load_saved_runs(self, repo: str, saved: Path) -> None:
        """Serve the runs, attempts, jobs and logs of a ``--from-dir`` directory
        (``bot/evidence/source.py`` layout) as ``repo``'s Actions data."""

        def load(path: Path, key: str) -> list[dict[str, Any]]:
            data = json.loads(path.read_text())
            return list(data[key] if isinstance(data, dict) else data)

        for run in load(saved / "runs.json", "workflow_runs"):
            run_id = int(run["id"])
            attempts = {
                int(path.stem.rsplit("-", 1)[1]): json.loads(path.read_text())
                for path in saved.glob(f"attempts/{run_id}-*.json")
            }
            entry = {
                "id": run_id,
                "head_sha": run["head_sha"],
                "head_branch": run["head_branch"],
                "pull_numbers": tuple(p["number"] for p in run.get("pull_requests", [])),
                "run_attempt": int(run["run_attempt"]),
                "job_ids": [],
                "fields": run,
                "attempts": attempts,
            }
            self.runs.setdefault(repo, {})[run_id] = entry
            for path in sorted(saved.glob(f"jobs/{run_id}-*.json")):
                attempt = int(path.stem.rsplit("-", 1)[1])
                for job in load(path, "jobs"):
                    job_id = int(job["id"])
                    self.jobs[job_id] = {
                        "id": job_id,
                        "run_id": run_id,
                        "name": job["name"],
                        "repo": repo,
                        "attempt": attempt,
                        "fields": job,
                    }
                    entry["job_ids"].append(job_id)
                    log = saved / "logs" / f"{job_id}.txt"
                    if log.is_file():
                        self.logs[job_id] = log.read_text()

    # --- queries for assertions --------------------------------------------------------

    def comments_on(self, repo: str, number: int) -> list[dict[str, Any]]:
        return sorted(
            (c for c in self.comments.values() if c["repo"] == repo and c["issue"] == number),
            key=lambda c: c["id"],
        )

    def check_runs_on(self, repo: str, head_sha: str | None = None) -> list[dict[str, Any]]:
        return [
            c
            for c in sorted(self.check_runs.values(), key=lambda c: c["id"])
            if c["repo"] == repo and (head_sha is None or c["head_sha"] == head_sha)
        ]

    def calls(self, method: str, pattern: str) -> int:
        regex = re.compile(pattern)
        return sum(1 for m, p, s in self.requests if m == method and regex.search(p) and s < 300)

    # --- fault injection ---------------------------------------------------------------

    def inject(
        self,
        method: str,
        pattern: str,
        status: int,
        *,
        headers: Mapping[str, str] | None = None,
        message: str = "",
        errors: list[str] | None = None,
        times: int = 1,
    ) -> None:
        body: dict[str, Any] = {
            "message": message or "injected",
            "documentation_url": "https://docs.github.com/rest",
        }
        if errors:  # a 422's reasons, as GitHub lists them
            body["errors"] = [
                {"resource": "Request", "code": "custom", "message": e} for e in errors
            ]
        self.faults.append(
            Fault(method, re.compile(pattern), status, dict(headers or {}), body, times)
        )

    def before(self, method: str, pattern: str, callback: Callable[[], None]) -> None:
        """Run ``callback`` once, before the first matching request is handled."""
        self.hooks.append((method, re.compile(pattern), callback))

    def hold(self, method: str, pattern: str) -> Hold:
        hold = Hold(method, re.compile(pattern))
        self.holds.append(hold)
        return hold

    def page(self, request: Request, items: list[Any]) -> tuple[list[Any], dict[str, str]]:
        """One page of ``items`` and GitHub's ``Link`` header: ``next`` and ``last``
        while there are more, ``first`` and ``prev`` after the first page."""
        per_page = int(request.query_params.get("per_page", "30"))
        number = int(request.query_params.get("page", "1"))
        chunk = items[(number - 1) * per_page : number * per_page]
        last = max(1, -(-len(items) // per_page))

        def url(page_number: int) -> str:
            query = {**dict(request.query_params), "page": str(page_number)}
            query["per_page"] = str(per_page)
            qs = "&".join(f"{k}={v}" for k, v in query.items())
            return f"{self.base_url}{request.url.path}?{qs}"

        links = []
        if number < last:
            links += [f'<{url(number + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
        if number > 1:
            links += [f'<{url(1)}>; rel="first"', f'<{url(number - 1)}>; rel="prev"']
        return chunk, ({"Link": ", ".join(links)} if links else {})

    # --- rendering (real shapes) -------------------------------------------------------

    def _urls(self, value: Any) -> Any:
        text = json.dumps(value).replace(TEMPLATE_API, self.base_url)
        return json.loads(text)

    def _template(self, name: str, old: str = "", new: str = "", path: tuple[str, ...] = ()) -> Any:
        """A fresh copy of a REST example, URLs pointed at the fake, ``old`` → ``new``."""
        key = (name, old, new, path)
        text = self._template_cache.get(key)
        if text is None:
            value = _TEMPLATES[name]
            for part in path:
                value = value[int(part)] if isinstance(value, list) else value[part]
            text = json.dumps(value).replace(TEMPLATE_API, self.base_url)
            if old:
                text = text.replace(old, new)
            self._template_cache[key] = text
        return json.loads(text)

    def user_json(self, login: str) -> dict[str, Any]:
        user = self._template("issues.create-comment", path=("user",))
        user.update(
            login=login,
            id=abs(hash(login)) % 10**7,
            url=f"{self.base_url}/users/{login}",
            html_url=f"https://github.com/{login}",
            type="Bot" if login.endswith("[bot]") else "User",
        )
        return dict(user)

    def profile_json(self, login: str) -> dict[str, Any]:
        """``GET /user``: a user with the profile fields GitHub's public-user has."""
        return {
            **self.user_json(login),
            **dict.fromkeys(("name", "company", "blog", "location", "email", "bio"), None),
            "hireable": None,
            **dict.fromkeys(("public_repos", "public_gists", "followers", "following"), 0),
            "created_at": "2020-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
        }

    def installation_json(self, repo: FakeRepo) -> dict[str, Any]:
        owner = self.user_json(repo.owner)
        number = repo.installation_id
        return {
            "id": number,
            "app_id": int(self.app_id),
            "app_slug": self.app_slug,
            "target_id": owner["id"],
            "target_type": "Organization",
            "single_file_name": None,
            "repository_selection": "selected",
            "access_tokens_url": f"{self.base_url}/app/installations/{number}/access_tokens",
            "html_url": f"https://github.com/organizations/{repo.owner}/settings/installations/{number}",
            "repositories_url": f"{self.base_url}/installation/repositories",
            "events": ["pull_request", "issue_comment", "check_run", "workflow_run"],
            "account": owner,
            "permissions": dict(self.installation_permissions),
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "suspended_by": None,
            "suspended_at": None,
        }

    def repo_json(self, full_name: str) -> dict[str, Any]:
        repo = self.repos[full_name]
        body = self._template("pulls.get", "octocat/Hello-World", full_name, ("base", "repo"))
        body.update(
            name=repo.name,
            full_name=full_name,
            owner=self.user_json(repo.owner),
            default_branch=repo.default_branch,
            clone_url=str(repo.path),
            id=repo.repo_id,
            fork=repo.installation_id == 999,
            pushed_at=iso_time(repo.pushed_at),
            network_count=0,
            subscribers_count=0,
            url=f"{self.base_url}/repos/{full_name}",
            html_url=f"https://github.com/{full_name}",
        )
        return dict(body)

    def label_json(self, repo: str, name: str) -> dict[str, Any]:
        return {
            "id": abs(hash((repo, name))) % 10**8,
            "node_id": "LA_fake",
            "url": f"{self.base_url}/repos/{repo}/labels/{name}",
            "name": name,
            "description": "",  # GitHub's description has it a string (not nullable)
            "color": self.labels.get(repo, {}).get(name, "ededed"),
            "default": False,
        }

    def pull_json(self, repo: str, number: int) -> dict[str, Any]:
        pr = self.pulls[repo][number]
        if pr["state"] == "open":
            self.refresh_pull_head(repo, number)
        body = copy.deepcopy(_TEMPLATES["pulls.get"])
        body = self._urls(
            json.loads(
                json.dumps(body).replace("octocat/Hello-World", repo).replace("/1347", f"/{number}")
            )
        )
        base_repo = self.repos[repo]
        head_repo = self.repos.get(pr["head_repo"])
        body.update(
            id=pr["id"],
            number=number,
            state=pr["state"],
            title=pr["title"],
            body=pr["body"],
            draft=pr["draft"],
            merged=pr["merged"],
            merged_at="2026-01-01T00:00:00Z" if pr["merged"] else None,
            closed_at="2026-01-01T00:00:00Z" if pr["state"] == "closed" else None,
            user=self.user_json(pr["user"]),
            labels=[self.label_json(repo, name) for name in pr["labels"]],
            requested_teams=[],  # the example's team lacks the "type" GitHub's schema requires
            url=f"{self.base_url}/repos/{repo}/pulls/{number}",
            html_url=f"https://github.com/{repo}/pull/{number}",
            issue_url=f"{self.base_url}/repos/{repo}/issues/{number}",
            comments_url=f"{self.base_url}/repos/{repo}/issues/{number}/comments",
        )
        body["head"].update(
            ref=pr["head_ref"],
            sha=pr["head_sha"],
            label=f"{pr['head_repo'].split('/')[0]}:{pr['head_ref']}",
            repo=self.repo_json(pr["head_repo"]) if head_repo else None,
            user=self.user_json(pr["head_repo"].split("/")[0]),
        )
        body["base"].update(
            ref=pr["base_ref"],
            sha=base_repo.ref_sha(f"refs/heads/{pr['base_ref']}") or "",
            label=f"{base_repo.owner}:{pr['base_ref']}",
            repo=self.repo_json(repo),
            user=self.user_json(base_repo.owner),
        )
        return dict(body)

    def comment_json(self, comment: dict[str, Any]) -> dict[str, Any]:
        body = self._template("issues.create-comment")
        repo, number = comment["repo"], comment["issue"]
        body.update(
            id=comment["id"],
            body=comment["body"],
            user=self.user_json(comment["user"]),
            url=f"{self.base_url}/repos/{repo}/issues/comments/{comment['id']}",
            created_at=iso_time(comment.get("created_at", 0.0)),
            html_url=f"https://github.com/{repo}/pull/{number}#issuecomment-{comment['id']}",
            issue_url=f"{self.base_url}/repos/{repo}/issues/{number}",
        )
        return dict(body)

    def check_run_json(self, run: dict[str, Any]) -> dict[str, Any]:
        body = self._template("checks.create", "github/hello-world", run["repo"])
        body.update(
            id=run["id"],
            name=run["name"],
            head_sha=run["head_sha"],
            external_id=run["external_id"],
            status=run["status"],
            conclusion=run["conclusion"],
            details_url=run.get("details_url"),
            url=f"{self.base_url}/repos/{run['repo']}/check-runs/{run['id']}",
            html_url=f"https://github.com/{run['repo']}/runs/{run['id']}",
            pull_requests=[],
        )
        body["output"].update(
            title=run["output"].get("title"),
            summary=run["output"].get("summary"),
            text=run["output"].get("text"),
            annotations_count=len(run["annotations"]),
        )
        body["app"].update(slug=self.app_slug, id=int(self.app_id))
        return dict(body)

    def run_json(self, repo: str, run: dict[str, Any]) -> dict[str, Any]:
        body = self._template("actions.get-workflow-run", "octo-org/octo-repo", repo)
        body.update(
            status="completed",
            conclusion="success",
            html_url=f"https://github.com/{repo}/actions/runs/{run['id']}",
        )
        body.update(run.get("fields", {}))  # a saved run's own fields (status, name, ...)
        self.full_actors(body)
        body.update(
            id=run["id"],
            head_sha=run["head_sha"],
            head_branch=run["head_branch"],
            run_attempt=run["run_attempt"],
            url=f"{self.base_url}/repos/{repo}/actions/runs/{run['id']}",
            pull_requests=[
                {"number": n, "url": f"{self.base_url}/repos/{repo}/pulls/{n}"}
                for n in run["pull_numbers"]
            ],
        )
        return dict(body)

    def full_actors(self, run: dict[str, Any]) -> dict[str, Any]:
        """A saved run keeps only its actors' logins and a few fields of its repositories:
        the objects GitHub sends, around what was kept."""
        for who in ("actor", "triggering_actor"):
            login = (run.get(who) or {}).get("login")
            if login:
                run[who] = self.user_json(str(login))
        for which in ("repository", "head_repository"):
            saved = run.get(which)
            name = saved.get("full_name") if isinstance(saved, dict) else None
            if name:
                full = self._template("pulls.get", "octocat/Hello-World", name, ("base", "repo"))
                run[which] = {**full, **saved}
        return run

    def job_json(self, job: dict[str, Any]) -> dict[str, Any]:
        body = self._template(
            "actions.list-jobs-for-workflow-run", "octo-org/octo-repo", job["repo"], ("jobs", "0")
        )
        body.update(job.get("fields", {}))  # a saved job's own fields (runner_name, ...)
        body.setdefault("created_at", body.get("started_at") or "2026-01-01T00:00:00Z")
        body.update(
            id=job["id"], run_id=job["run_id"], name=job["name"], run_attempt=job["attempt"]
        )
        for step in body.get("steps") or ():  # the docs' example has fractions: GitHub has not
            for key in ("started_at", "completed_at"):
                if step.get(key):
                    step[key] = iso_time(datetime.datetime.fromisoformat(step[key]).timestamp())
        return dict(body)

    # --- webhook payloads (real shapes) --------------------------------------------------

    def pull_request_payload(
        self, repo: str, number: int, action: str, *, sender: str, label: str | None = None
    ) -> dict[str, Any]:
        name = {
            "labeled": "pull_request.labeled.json",
            "unlabeled": "pull_request.unlabeled.json",
            "synchronize": "pull_request.synchronize.json",
            "reopened": "pull_request.reopened.json",
            "closed": "pull_request.closed.json",
            "opened": "pull_request.opened.json",
        }[action]
        payload = template(name)
        payload["action"] = action
        payload["number"] = number
        payload["pull_request"] = self.pull_json(repo, number)
        payload["repository"] = self.repo_json(repo)
        payload["sender"] = self.user_json(sender)
        payload["installation"] = {"id": self.repos[repo].installation_id, "node_id": "x"}
        if label is not None:
            payload["label"] = self.label_json(repo, label)
        return dict(payload)

    def comment_payload(self, repo: str, number: int, body: str, *, sender: str) -> dict[str, Any]:
        payload = template("issue_comment.created.pull_request.json")
        comment = {
            "id": self.next_id(),
            "repo": repo,
            "issue": number,
            "body": body,
            "user": sender,
            "created_at": time.time(),
        }
        with self.lock:
            self.comments[comment["id"]] = comment
        payload["comment"] = self.comment_json(comment)
        payload["issue"]["number"] = number
        payload["issue"]["pull_request"]["url"] = f"{self.base_url}/repos/{repo}/pulls/{number}"
        payload["repository"] = self.repo_json(repo)
        payload["sender"] = self.user_json(sender)
        payload["installation"] = {"id": self.repos[repo].installation_id, "node_id": "x"}
        return dict(payload)

    def workflow_run_payload(
        self, repo: str, run_id: int, *, with_pull_requests: bool
    ) -> dict[str, Any]:
        name = (
            "workflow_run.completed.json"
            if with_pull_requests
            else "workflow_run.completed.without-pull-requests.json"
        )
        payload = template(name)
        run = self.runs[repo][run_id]
        payload["workflow_run"] = self.run_json(repo, run)
        if not with_pull_requests:
            payload["workflow_run"]["pull_requests"] = []
        payload["repository"] = self.repo_json(repo)
        return dict(payload)

    def check_run_payload(
        self, repo: str, check_run_id: int, action: str, *, sender: str
    ) -> dict[str, Any]:
        payload = template("check_run.rerequested.json")
        payload["action"] = action
        payload["check_run"] = self.check_run_json(self.check_runs[check_run_id])
        payload["repository"] = self.repo_json(repo)
        payload["sender"] = self.user_json(sender)
        if action == "requested_action":
            payload["requested_action"] = {"identifier": "recheck"}
        return dict(payload)

    # --- the HTTP app ------------------------------------------------------------------

    def _auth(self, request: Request, repo: str | None = None) -> TokenInfo | JSONResponse:
        header = request.headers.get("authorization", "")
        token = header.split(" ", 1)[1] if " " in header else ""
        info = self.tokens.get(token)
        if info is None:
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        if repo is not None and info.repos is not None and repo not in info.repos:
            return JSONResponse(
                {"message": "Resource not accessible by integration"}, status_code=403
            )
        return info

    def _permission_check(self, request: Request) -> JSONResponse | None:
        """GitHub's answer when the request's token may not call this endpoint, else None."""
        method, path = request.method, request.url.path
        if path.startswith(table.UNAUTHENTICATED_PREFIXES):
            return None
        entry = table.endpoint(method, path)
        if entry is None:
            with self.lock:
                self.unclassified.append((method, path))
            return JSONResponse(
                {
                    "message": f"fake GitHub: {method} {path} is not classified in "
                    "tests/service/github_permissions.py; add the permission GitHub's docs "
                    "require for it"
                },
                status_code=501,
            )
        header = request.headers.get("authorization", "")
        info = self.tokens.get(header.split(" ", 1)[1] if " " in header else "")
        if info is None or info.repos is None or entry.auth in ("app-jwt", "none"):
            return None  # personal tokens carry their user's rights; JWTs are checked by route
        if entry.auth == "user-only" or not table.allowed(info.permissions, entry):
            with self.lock:
                self.denied.append((method, path, entry.required()))
            return JSONResponse(
                {
                    "message": "Resource not accessible by integration",
                    "documentation_url": "https://docs.github.com/rest",
                },
                status_code=403,
                headers={"X-Accepted-GitHub-Permissions": entry.required()},
            )
        return None

    def enforce_git_permissions(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Hold every git fetch / ls-remote / push of a :class:`Mirror` given an installation
        token to ``contents`` read / write, failing as git fails on GitHub (HTTP 403)."""
        fake = self
        original = Mirror._git

        def checked(mirror: Mirror, *args: str, env: Mapping[str, str] | None = None) -> str:
            needed = table.GIT_TRANSPORT.get(args[0]) if args else None
            info = fake.tokens.get(mirror._token or "")
            refused = (
                needed is not None
                and info is not None
                and info.repos is not None  # an installation token (personal ones: no check)
                and not (mirror.full_name in info.repos and table.grants(info.permissions, needed))
            )
            if refused:
                assert needed is not None
                required = ",".join(f"{k}={v}" for k, v in needed.items())
                with fake.lock:
                    fake.denied.append(("GIT", f"{args[0]} {mirror.full_name}", required))
                said = (
                    f"fatal: unable to access '{mirror.url}': The requested URL returned error: 403"
                )
                raise GitOperationError(str(mirror.path), args, said, returncode=128, stderr=said)
            return original(mirror, *args, env=env)

        monkeypatch.setattr(Mirror, "_git", checked)

    def check_contract(self) -> None:
        """Fail the test if a call was unclassified, (unexpectedly) denied a permission or
        refused by GitHub's REST contract, or if the fake answered off its description."""
        assert not self.unclassified, (
            f"endpoints missing from the permission table: {self.unclassified}"
        )
        if not self.denials_expected:
            assert not self.denied, f"requests the token's permissions did not cover: {self.denied}"
        if not self.rejections_expected:
            assert not self.rejected, f"requests GitHub would refuse: {self.rejected}"
        assert not self.invalid_responses, (
            f"the fake answered off GitHub's description: {self.invalid_responses}"
        )

    async def _refused_by_contract(self, request: Request) -> Response | None:
        """GitHub's answer to a request it would refuse (422, or 404 for an operation it
        does not have), else None."""
        path = request.url.path
        if path.startswith(("/_storage/", "/repositories/")):
            return None  # not API operations: log storage, a renamed repository's redirect
        body: Any = None
        if request.method in ("POST", "PATCH", "PUT"):
            raw = await request.body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                return self._refuse(request, 400, ["Problems parsing JSON"])
        problems = self.contract.check_request(
            request.method, path, dict(request.query_params), body
        )
        if not problems:
            return None
        undescribed = any("is not in GitHub's REST description" in p for p in problems)
        return self._refuse(request, 404 if undescribed else 422, problems)

    def _refuse(self, request: Request, status: int, problems: list[str]) -> Response:
        with self.lock:
            self.rejected.append((request.method, request.url.path, problems))
            self.requests.append((request.method, request.url.path, status))
        message = "Not Found" if status == 404 else "Validation Failed"
        errors = [{"resource": "Request", "code": "invalid", "message": p} for p in problems]
        return JSONResponse(
            {
                "message": message,
                "errors": errors,
                "documentation_url": "https://docs.github.com/rest",
            },
            status_code=status,
        )

    async def _checked_response(self, request: Request, response: Response) -> Response:
        """The response, read whole and checked against GitHub's description of it."""
        chunks = [chunk async for chunk in response.body_iterator]  # type: ignore[attr-defined]
        content = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
        problems: list[str] = []
        if response.headers.get("content-type", "").startswith("application/json") and content:
            data = json.loads(content)
            problems += self.contract.check_response(
                request.method, request.url.path, response.status_code, data
            )
            problems += list(fractional_timestamps(data))
        problems += link_problems(response.headers.get("link"))
        if problems:
            with self.lock:
                self.invalid_responses.append(
                    (request.method, request.url.path, response.status_code, problems[:5])
                )
        return Response(content, response.status_code, headers=dict(response.headers))

    def _build_app(self) -> FastAPI:
        app = FastAPI()
        fake = self

        def redirect_renamed(request: Request) -> Response | None:
            """GitHub's answer under a renamed repository's old name (a redirect), and its
            ``/repositories/<id>/...`` paths served as ``/repos/<new name>/...``."""
            path = request.scope["path"]  # not request.url: it would be cached before a rewrite
            old = re.match(r"^/repos/([^/]+/[^/]+)(/.*)?$", path)
            if old and old.group(1) in fake.moved and old.group(1) not in fake.repos:
                repo = fake.repos[fake.moved[old.group(1)]]
                location = f"{fake.base_url}/repositories/{repo.repo_id}{old.group(2) or ''}"
                status = 301 if request.method in ("GET", "HEAD") else 307
                with fake.lock:
                    fake.requests.append((request.method, path, status))
                return JSONResponse(
                    {"message": "Moved Permanently", "url": location, "documentation_url": "x"},
                    status_code=status,
                    headers={"Location": location},
                )
            by_id = re.match(r"^/repositories/(\d+)(/.+)$", path)
            found = by_id and next(
                (r for r in fake.repos.values() if r.repo_id == int(by_id.group(1))), None
            )
            if by_id and found:
                request.scope["path"] = f"/repos/{found.full_name}{by_id.group(2)}"
                request.scope["raw_path"] = request.scope["path"].encode()
            return None

        @app.middleware("http")
        async def faults_and_log(request: Request, call_next: Callable[[Request], Any]) -> Response:
            redirected = redirect_renamed(request)
            if redirected is not None:
                return redirected
            path = request.url.path
            method = request.method
            for hook in list(fake.hooks):
                if hook[0] == method and hook[1].search(path):
                    fake.hooks.remove(hook)
                    hook[2]()
            with fake.lock:
                for fault in fake.faults:
                    if fault.times > 0 and fault.method == method and fault.pattern.search(path):
                        fault.times -= 1
                        fake.requests.append((method, path, fault.status))
                        return JSONResponse(
                            fault.body, status_code=fault.status, headers=fault.headers
                        )
            refused = fake._permission_check(request)
            if refused is not None:
                with fake.lock:
                    fake.requests.append((method, path, refused.status_code))
                return refused
            rejected = await fake._refused_by_contract(request)
            if rejected is not None:
                return rejected
            response: Response = await fake._checked_response(request, await call_next(request))
            with fake.lock:
                fake.requests.append((method, path, response.status_code))
                holds = [h for h in fake.holds if h.method == method and h.pattern.search(path)]
            for hold in holds:
                hold.entered.set()
                while not hold.release.is_set():
                    await _sleep(0.05)
            return response

        def repo_of(owner: str, name: str) -> FakeRepo | None:
            return fake.repos.get(f"{owner}/{name}")

        def not_found() -> JSONResponse:
            return JSONResponse({"message": "Not Found", "documentation_url": "x"}, status_code=404)

        page = fake.page

        @app.get("/user")
        def user(request: Request) -> Response:
            info = fake._auth(request)
            if isinstance(info, JSONResponse):
                return info
            return JSONResponse(fake.profile_json(info.login))

        @app.get("/repos/{owner}/{name}/installation")
        def installation(owner: str, name: str, request: Request) -> Response:
            try:
                claims = jwt.decode(
                    request.headers.get("authorization", "").removeprefix("Bearer "),
                    fake.public_key,
                    algorithms=["RS256"],
                )
            except jwt.PyJWTError:
                return JSONResponse(
                    {"message": "A JSON web token could not be decoded"}, status_code=401
                )
            if str(claims.get("iss")) != fake.app_id:
                return JSONResponse({"message": "Integration not found"}, status_code=401)
            repo = repo_of(owner, name)
            if repo is None or not repo.installation_id or repo.installation_id in fake.uninstalled:
                return not_found()
            return JSONResponse(fake.installation_json(repo))

        @app.post("/app/installations/{installation_id}/access_tokens")
        async def access_token(installation_id: int, request: Request) -> Response:
            try:
                jwt.decode(
                    request.headers.get("authorization", "").removeprefix("Bearer "),
                    fake.public_key,
                    algorithms=["RS256"],
                )
            except jwt.PyJWTError:
                return JSONResponse(
                    {"message": "A JSON web token could not be decoded"}, status_code=401
                )
            data = await request.json()
            requested = dict(data.get("permissions") or fake.installation_permissions)
            if not table.grants(fake.installation_permissions, requested):
                return JSONResponse(
                    {
                        "message": "The permissions requested are not granted to this "
                        "installation.",
                        "documentation_url": "https://docs.github.com/rest",
                    },
                    status_code=422,
                )
            covered = [r for r in fake.repos.values() if r.installation_id == installation_id]
            if not covered or installation_id in fake.uninstalled:
                return not_found()  # uninstalled (an App installed again gets a new id)
            names = set(data.get("repositories") or [])
            ids = set(data.get("repository_ids") or [])
            repos = frozenset(r.full_name for r in covered if r.name in names or r.repo_id in ids)
            if len(repos) < len(names) + len(ids):
                return JSONResponse(
                    {
                        "message": "There is at least one repository that does not exist or is "
                        "not accessible to the parent installation.",
                        "documentation_url": "https://docs.github.com/rest",
                    },
                    status_code=422,
                )
            token = f"ghs_fake{fake.next_id()}"
            fake.tokens[token] = TokenInfo(f"{fake.app_slug}[bot]", repos, requested)
            body = copy.deepcopy(_TEMPLATES["apps.create-installation-access-token"])
            body.update(
                token=token,
                expires_at=time.strftime(
                    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + fake.token_ttl)
                ),
                permissions=requested,
                repositories=[fake.repo_json(r) for r in sorted(repos)],
            )
            return JSONResponse(fake._urls(body), status_code=201)

        def repository(repo: FakeRepo | None, request: Request) -> Response:
            if repo is None:
                return not_found()
            info = fake._auth(request, repo.full_name)
            return (
                info
                if isinstance(info, JSONResponse)
                else JSONResponse(fake.repo_json(repo.full_name))
            )

        @app.get("/repositories/{repo_id}")
        def get_repo_by_id(repo_id: int, request: Request) -> Response:
            found = next((r for r in fake.repos.values() if r.repo_id == repo_id), None)
            return repository(found, request)

        @app.get("/repos/{owner}/{name}")
        def get_repo(owner: str, name: str, request: Request) -> Response:
            return repository(repo_of(owner, name), request)

        @app.get("/repos/{owner}/{name}/pulls")
        def list_pulls(owner: str, name: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            if full not in fake.repos:
                return not_found()
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            state = request.query_params.get("state", "open")
            head = request.query_params.get("head")
            numbers = []
            for number, pr in sorted(fake.pulls[full].items(), reverse=True):
                if state != "all" and pr["state"] != state:
                    continue
                if head and head != f"{pr['head_repo'].split('/')[0]}:{pr['head_ref']}":
                    continue
                numbers.append(number)
            items, headers = page(request, [fake.pull_json(full, n) for n in numbers])
            return JSONResponse(items, headers=headers)

        @app.post("/repos/{owner}/{name}/pulls")
        async def create_pull(owner: str, name: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            data = await request.json()
            head = str(data["head"]).split(":")[-1]
            repo = fake.repos[full]
            if repo.ref_sha(f"refs/heads/{head}") is None:
                return JSONResponse(
                    {
                        "message": "Validation Failed",
                        "errors": [{"field": "head", "code": "invalid"}],
                    },
                    status_code=422,
                )
            for pr in fake.pulls[full].values():
                if pr["state"] == "open" and pr["head_ref"] == head and pr["head_repo"] == full:
                    return JSONResponse(
                        {
                            "message": "Validation Failed",
                            "errors": [
                                {"message": f"A pull request already exists for {owner}:{head}."}
                            ],
                        },
                        status_code=422,
                    )
            number = fake.open_pull(
                full,
                head_ref=head,
                base_ref=data["base"],
                title=data.get("title", ""),
                body=data.get("body") or "",
                user=info.login,
                draft=bool(data.get("draft", False)),
            )
            return JSONResponse(fake.pull_json(full, number), status_code=201)

        @app.get("/repos/{owner}/{name}/pulls/{number}")
        def get_pull(owner: str, name: str, number: int, request: Request) -> Response:
            full = f"{owner}/{name}"
            if number not in fake.pulls.get(full, {}):
                return not_found()
            info = fake._auth(request, full)
            return (
                info
                if isinstance(info, JSONResponse)
                else JSONResponse(fake.pull_json(full, number))
            )

        @app.patch("/repos/{owner}/{name}/pulls/{number}")
        async def update_pull(owner: str, name: str, number: int, request: Request) -> Response:
            full = f"{owner}/{name}"
            if number not in fake.pulls.get(full, {}):
                return not_found()
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            data = await request.json()
            pr = fake.pulls[full][number]
            for key in ("title", "body", "state"):
                if key in data:
                    pr[key] = data[key]
            if "base" in data:
                pr["base_ref"] = data["base"]
            return JSONResponse(fake.pull_json(full, number))

        @app.get("/repos/{owner}/{name}/issues/{number}/comments")
        def list_comments(owner: str, name: str, number: int, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            items, headers = page(
                request, [fake.comment_json(c) for c in fake.comments_on(full, number)]
            )
            return JSONResponse(items, headers=headers)

        @app.post("/repos/{owner}/{name}/issues/{number}/comments")
        async def create_comment(owner: str, name: str, number: int, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            data = await request.json()
            if len(data["body"]) > 65536:
                return JSONResponse(
                    {
                        "message": "Validation Failed",
                        "errors": [{"message": "Body is too long (maximum is 65536 characters)"}],
                    },
                    status_code=422,
                )
            comment = {
                "id": fake.next_id(),
                "repo": full,
                "issue": number,
                "body": data["body"],
                "user": info.login,
                "created_at": time.time(),
            }
            with fake.lock:
                fake.comments[comment["id"]] = comment
            return JSONResponse(fake.comment_json(comment), status_code=201)

        @app.api_route(
            "/repos/{owner}/{name}/issues/comments/{comment_id}", methods=["GET", "PATCH", "DELETE"]
        )
        async def one_comment(owner: str, name: str, comment_id: int, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            comment = fake.comments.get(comment_id)
            if comment is None or comment["repo"] != full:
                return not_found()
            if request.method == "DELETE":
                del fake.comments[comment_id]
                return Response(status_code=204)
            if request.method == "PATCH":
                if comment["user"] != info.login:
                    return JSONResponse({"message": "Forbidden"}, status_code=403)
                comment["body"] = (await request.json())["body"]
            return JSONResponse(fake.comment_json(comment))

        @app.post("/repos/{owner}/{name}/issues/comments/{comment_id}/reactions")
        async def react(owner: str, name: str, comment_id: int, request: Request) -> Response:
            info = fake._auth(request, f"{owner}/{name}")
            if isinstance(info, JSONResponse):
                return info
            content = (await request.json())["content"]
            fake.reactions.append((comment_id, content, info.login))
            return JSONResponse(
                {
                    "id": fake.next_id(),
                    "node_id": "REA_fake",
                    "content": content,
                    "user": fake.user_json(info.login),
                    "created_at": iso_time(time.time()),
                },
                status_code=201,
            )

        @app.get("/repos/{owner}/{name}/collaborators/{login}/permission")
        def permission(owner: str, name: str, login: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            perm, role = fake.permissions.get((full, login), ("read", "read"))
            body = copy.deepcopy(_TEMPLATES["repos.get-collaborator-permission-level"])
            user = {**fake.user_json(login), "role_name": role}
            body.update(permission=perm, role_name=role, user=user)
            return JSONResponse(fake._urls(body))

        @app.get("/repos/{owner}/{name}/labels/{label}")
        def get_label(owner: str, name: str, label: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            if label not in fake.labels.get(full, {}):
                return not_found()
            return JSONResponse(fake.label_json(full, label))

        @app.post("/repos/{owner}/{name}/labels")
        async def create_label(owner: str, name: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            if fake.label_colors_refused:
                return JSONResponse(
                    {"message": "Resource not accessible by integration"}, status_code=403
                )
            data = await request.json()
            fake.labels.setdefault(full, {})[data["name"]] = data.get("color", "ededed")
            return JSONResponse(fake.label_json(full, data["name"]), status_code=201)

        @app.post("/repos/{owner}/{name}/issues/{number}/labels")
        async def add_labels(owner: str, name: str, number: int, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            pr = fake.pulls[full][number]
            for label in (await request.json())["labels"]:
                if label not in pr["labels"]:
                    pr["labels"].append(label)
            return JSONResponse([fake.label_json(full, n) for n in pr["labels"]])

        @app.delete("/repos/{owner}/{name}/issues/{number}/labels/{label}")
        def remove_label(
            owner: str, name: str, number: int, label: str, request: Request
        ) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            pr = fake.pulls[full][number]
            if label not in pr["labels"]:
                return not_found()
            pr["labels"].remove(label)
            return JSONResponse([fake.label_json(full, n) for n in pr["labels"]])

        @app.delete("/repos/{owner}/{name}/git/refs/heads/{branch:path}")
        def delete_ref(owner: str, name: str, branch: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            repo = fake.repos[full]
            if repo.ref_sha(f"refs/heads/{branch}") is None:
                return JSONResponse({"message": "Reference does not exist"}, status_code=422)
            git(repo.path, "update-ref", "-d", f"refs/heads/{branch}")
            return Response(status_code=204)

        @app.get("/repos/{owner}/{name}/commits/{sha}/check-runs")
        def list_check_runs(owner: str, name: str, sha: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            wanted = request.query_params.get("check_name")
            runs = [
                fake.check_run_json(r)
                for r in fake.check_runs_on(full, sha)
                if not wanted or r["name"] == wanted
            ]
            items, headers = page(request, runs)
            return JSONResponse({"total_count": len(runs), "check_runs": items}, headers=headers)

        def take_annotations(
            run: dict[str, Any], output: dict[str, Any] | None
        ) -> JSONResponse | None:
            if not output:
                return None
            annotations = output.get("annotations") or []
            if len(annotations) > 50:
                return JSONResponse(
                    {"message": "Validation Failed: at most 50 annotations per request"},
                    status_code=422,
                )
            run["annotations"].extend(annotations)
            run["output"].update({k: v for k, v in output.items() if k != "annotations"})
            return None

        @app.post("/repos/{owner}/{name}/check-runs")
        async def create_check_run(owner: str, name: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            if info.repos is None:
                return JSONResponse(
                    {"message": "You must authenticate via a GitHub App."}, status_code=403
                )
            data = await request.json()
            run = {
                "id": fake.next_id(),
                "repo": full,
                "name": data["name"],
                "head_sha": data["head_sha"],
                "external_id": data.get("external_id", ""),
                "status": data.get("status", "queued"),
                "conclusion": data.get("conclusion"),
                "details_url": data.get("details_url"),
                "output": {},
                "annotations": [],
                "history": [data.get("status", "queued")],
            }
            error = take_annotations(run, data.get("output"))
            if error:
                return error
            fake.check_runs[run["id"]] = run
            return JSONResponse(fake.check_run_json(run), status_code=201)

        @app.patch("/repos/{owner}/{name}/check-runs/{run_id}")
        async def update_check_run(
            owner: str, name: str, run_id: int, request: Request
        ) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            run = fake.check_runs.get(run_id)
            if run is None:
                return not_found()
            data = await request.json()
            error = take_annotations(run, data.get("output"))
            if error:
                return error
            for key in ("status", "conclusion", "details_url", "external_id"):
                if key in data:
                    run[key] = data[key]
            if "conclusion" in data:
                run["status"] = "completed"
            if run["history"][-1] != run["status"]:
                run["history"].append(run["status"])
            return JSONResponse(fake.check_run_json(run))

        @app.get("/repos/{owner}/{name}/actions/runs")
        def list_runs(owner: str, name: str, request: Request) -> Response:
            full = f"{owner}/{name}"
            info = fake._auth(request, full)
            if isinstance(info, JSONResponse):
                return info
            sha = request.query_params.get("head_sha")
            branch = request.query_params.get("branch")
            runs = [
                fake.run_json(full, run)
                for run in fake.runs.get(full, {}).values()
                if (not sha or run["head_sha"] == sha)
                and (not branch or run["head_branch"] == branch)
            ]
            items, headers = page(request, runs)
            return JSONResponse({"total_count": len(runs), "workflow_runs": items}, headers=headers)

        @app.get("/repos/{owner}/{name}/actions/runs/{run_id}/attempts/{attempt}")
        def run_attempt(
            owner: str, name: str, run_id: int, attempt: int, request: Request
        ) -> Response:
            full = f"{owner}/{name}"
            run = fake.runs.get(full, {}).get(run_id)
            if run is None or attempt > run["run_attempt"]:
                return not_found()
            body = fake.run_json(full, run)
            body.update(run.get("attempts", {}).get(attempt, {}))
            body["run_attempt"] = attempt
            return JSONResponse(fake.full_actors(body))

        @app.get("/repos/{owner}/{name}/actions/runs/{run_id}/attempts/{attempt}/jobs")
        def run_jobs(
            owner: str, name: str, run_id: int, attempt: int, request: Request
        ) -> Response:
            full = f"{owner}/{name}"
            run = fake.runs.get(full, {}).get(run_id)
            if run is None:
                return not_found()
            jobs = [
                fake.job_json(fake.jobs[j])
                for j in run["job_ids"]
                if fake.jobs[j]["attempt"] == attempt
            ]
            items, headers = page(request, jobs)
            return JSONResponse({"total_count": len(jobs), "jobs": items}, headers=headers)

        @app.get("/repos/{owner}/{name}/actions/jobs/{job_id}/logs")
        def job_logs(owner: str, name: str, job_id: int, request: Request) -> Response:
            info = fake._auth(request, f"{owner}/{name}")
            if isinstance(info, JSONResponse):
                return info
            if job_id not in fake.jobs:
                return not_found()
            if job_id not in fake.logs:
                return JSONResponse({"message": "Gone"}, status_code=410)
            location = (
                f"{fake.base_url}/_storage/logs/{job_id}?urlSigningMethod=HMACV1&urlSignature=fake"
            )
            return Response(status_code=302, headers={"Location": location})

        @app.get("/_storage/logs/{job_id}")
        def storage(job_id: int, request: Request) -> Response:
            if "authorization" in request.headers:  # pre-signed: a token must never be sent here
                return JSONResponse({"message": "credentials sent to storage"}, status_code=400)
            text = fake.logs.get(job_id)
            return PlainTextResponse(text) if text is not None else not_found()

        return app


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


def iso_time(seconds: float) -> str:
    """GitHub's timestamp format: whole seconds (a push and a comment in the same second
    look simultaneous, as on GitHub)."""
    stamp = datetime.datetime.fromtimestamp(int(seconds), datetime.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


class ServerThread:
    """Serve an ASGI app with uvicorn on 127.0.0.1:<free port> in a daemon thread."""

    def __init__(self, app: Any) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_keep_alive=30)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.time() + 10
        while not self.server.started:
            if time.time() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()
