"""One GitHub repository, through PyGithub, with our retry and rate-limit policy.

Every request of the service goes through :meth:`GitHubRepo._call`: a rate-limited request
waits as :mod:`bot.github.ratelimit` says (``Retry-After``, the primary reset, >= 60 s then
exponential for secondary limits) and is retried; a read that met a 5xx or a network error
is retried with exponential backoff; a write that met a 5xx is NOT retried in place (it may
have happened) but raised as :class:`TransientGitHubError`, so the job runs again from the
top, where every side effect is looked up before it is created. Waits longer than
``max_inline_wait`` are not slept in the worker: the job is rescheduled instead.

Results are plain frozen dataclasses, so callers never touch PyGithub objects.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

import httpx
import requests
from github import Auth, Github, GithubException
from github.CheckRun import CheckRun
from github.IssueComment import IssueComment
from github.PullRequest import PullRequest

from bot.github.errors import GitHubRequestError, TransientGitHubError
from bot.github.ratelimit import MAX_ATTEMPTS, Backoff, rate_limit_wait, transient_wait

T = TypeVar("T")
_REPOSITORY_ID = re.compile(r"/repositories/(\d+)(?:/|$)")

# Token scopes per job and repository role (docs/spec/bot-conventions.md §4.8), each the
# least that GitHub's "Permissions required for GitHub Apps" table asks for the calls made
# with it (the test fake enforces that table: tests/service/github_permissions.py). Issue
# comments and labels on pull requests are covered by ``pull_requests``.
BENCH_SCOPE: Mapping[str, str] = {
    "metadata": "read",
    "contents": "read",  # fetch refs/pull/<n>/head and the base
    "pull_requests": "write",  # read the PR, sticky comments, the fork re-approval label
    "checks": "write",  # the alignment check run
    "actions": "read",  # workflow runs, jobs and logs cited as evidence
}
RECIPES_SCOPE: Mapping[str, str] = {
    "metadata": "read",
    "contents": "write",  # push alignment branches, delete retired ones
    "pull_requests": "write",  # open/update/close alignment PRs, their comments and labels
    "actions": "read",
}
# A 👍 on a command comment: GitHub lists reactions on issue comments under "Issues" only.
# A token of its own, so a sync never holds ``issues: write``, and an installation that has
# not approved ``issues`` yet only loses the reaction (best effort), never the command.
REACTION_SCOPE: Mapping[str, str] = {"metadata": "read", "issues": "write"}


class Observer(Protocol):
    def api_call(self, operation: str, outcome: str) -> None: ...
    def rate_limit_wait(self, reason: str, seconds: float) -> None: ...


class NullObserver:
    def api_call(self, operation: str, outcome: str) -> None:
        pass

    def rate_limit_wait(self, reason: str, seconds: float) -> None:
        pass


@dataclass(frozen=True)
class PullInfo:
    number: int
    state: str  # open | closed
    merged: bool
    draft: bool
    title: str
    body: str
    html_url: str
    user: str
    head_sha: str
    head_ref: str
    head_repo: str  # "" when the fork was deleted
    base_sha: str
    base_ref: str
    base_repo: str
    labels: tuple[str, ...]
    # GitHub's time of the last push to the head repository (any branch); None when the
    # fork was deleted. A fork's head cannot have moved after a moment later than this.
    head_pushed_at: datetime | None = None

    @property
    def is_fork(self) -> bool:
        return self.head_repo != self.base_repo


@dataclass(frozen=True)
class CommentInfo:
    id: int
    body: str
    user: str
    html_url: str


@dataclass(frozen=True)
class IssueInfo:
    number: int
    title: str
    body: str
    user: str
    state: str  # open | closed
    html_url: str


@dataclass(frozen=True)
class CheckRunInfo:
    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    external_id: str
    html_url: str


@dataclass(frozen=True)
class RepoInfo:
    full_name: str
    default_branch: str
    clone_url: str


def make_pygithub(api_url: str, token: str, *, seconds_between_writes: float = 1.0) -> Github:
    """PyGithub pointed at ``api_url`` (``RECIPE_SYNC_GITHUB_API_URL``), 100 items per page,
    without urllib3 retries (our policy decides), writes spaced by GitHub's advice."""
    return Github(
        auth=Auth.Token(token),
        base_url=api_url.rstrip("/"),
        per_page=100,
        retry=None,
        lazy=True,
        timeout=30,
        seconds_between_requests=0,
        seconds_between_writes=seconds_between_writes,
    )


def _message(data: Any) -> str:
    """GitHub's message, with the reasons of a 422 ("Validation Failed: Title is too long
    (maximum is 256 characters)")."""
    if not isinstance(data, dict):
        return str(data or "")
    message = str(data.get("message", ""))
    errors = data.get("errors")
    reasons = [
        str(e.get("message") or e.get("code") or "") if isinstance(e, dict) else str(e)
        for e in (errors if isinstance(errors, list) else [])
    ]
    reasons = [r for r in reasons if r]
    return f"{message}: {'; '.join(reasons)}"[:1000] if reasons else message


def _pull(pr: PullRequest) -> PullInfo:
    head_repo = pr.head.repo
    return PullInfo(
        number=pr.number,
        state=pr.state,
        merged=bool(pr.merged),
        draft=bool(pr.draft),
        title=pr.title or "",
        body=pr.body or "",
        html_url=pr.html_url,
        user=pr.user.login if pr.user is not None else "",
        head_sha=pr.head.sha,
        head_ref=pr.head.ref,
        head_repo=head_repo.full_name if head_repo is not None else "",
        base_sha=pr.base.sha,
        base_ref=pr.base.ref,
        base_repo=pr.base.repo.full_name,
        labels=tuple(label.name for label in pr.labels),
        head_pushed_at=head_repo.pushed_at if head_repo is not None else None,
    )


def _comment(comment: IssueComment) -> CommentInfo:
    return CommentInfo(
        id=comment.id,
        body=comment.body or "",
        user=comment.user.login if comment.user is not None else "",
        html_url=comment.html_url,
    )


def _issue_json(data: Mapping[str, Any]) -> IssueInfo:
    return IssueInfo(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        user=str((data.get("user") or {}).get("login", "")),
        state=str(data.get("state") or "open"),
        html_url=str(data.get("html_url") or ""),
    )


def _check_run(run: CheckRun) -> CheckRunInfo:
    return CheckRunInfo(
        id=run.id,
        name=run.name,
        head_sha=run.head_sha,
        status=run.status,
        conclusion=run.conclusion,
        external_id=run.external_id or "",
        html_url=run.html_url or "",
    )


class GitHubRepo:
    """The operations the service performs on one repository."""

    def __init__(
        self,
        full_name: str,
        token: str,
        *,
        api_url: str,
        observer: Observer | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        seconds_between_writes: float = 1.0,
        max_inline_wait: float = 120.0,
        renew: Callable[[], str] | None = None,
        on_renamed: Callable[[str, str], None] | None = None,
        current_name: str | None = None,
    ) -> None:
        # the name the service's records use; GitHub's name for it now, when it was renamed
        self.full_name = full_name
        self.current_name = current_name or full_name
        self.api_url = api_url.rstrip("/")
        self._seconds_between_writes = seconds_between_writes
        self.observer: Observer = observer or NullObserver()
        self._sleep = sleep
        self._clock = clock
        self.max_inline_wait = max_inline_wait
        self._renew = renew  # a fresh token after a 401 (App mode: the installation's)
        self._on_renamed = on_renamed or (lambda old, new: None)
        self._connect(token)

    def _connect(self, token: str) -> None:
        self._token = token
        self.github = make_pygithub(
            self.api_url, token, seconds_between_writes=self._seconds_between_writes
        )
        self._repo = self.github.get_repo(self.current_name)
        self._requester = self.github.requester

    def _renamed(self, new_name: str) -> None:
        """GitHub names this repository ``new_name`` now: follow it (every later call uses
        the new name; records keep ``full_name``) and say so once."""
        self.current_name = new_name
        self._repo = self.github.get_repo(new_name)
        self._on_renamed(self.full_name, new_name)

    @property
    def token(self) -> str:
        return self._token

    def close(self) -> None:
        self.github.close()

    # --- the retry loop ------------------------------------------------------------------

    def _call(self, operation: str, method: str, fn: Callable[[], T]) -> T:
        attempt = 1
        renewed = followed = False
        while True:
            try:
                result = fn()
            except GithubException as err:
                status = int(err.status)
                self.observer.api_call(operation, str(status))
                headers = {str(k).lower(): str(v) for k, v in (err.headers or {}).items()}
                if status == 401 and self._renew is not None and not renewed:
                    # revoked or expired early: drop it and retry once with a fresh token
                    # (an uninstalled App is AppNotInstalled from here, not "401")
                    renewed = True
                    self._connect(self._renew())
                    continue
                if status in (301, 307, 308) and not followed:
                    followed = True  # renamed: GitHub redirects writes (307) by id
                    self._follow(operation, headers.get("location", ""))
                    continue
                wait = rate_limit_wait(status, headers, _message(err.data), attempt, self._clock())
                if wait is None and status >= 500:
                    wait = transient_wait(method, status, attempt)
                    if wait is None:  # a write may have happened: retry the job, not the call
                        raise TransientGitHubError(
                            f"GitHub {operation}: HTTP {status} (not retried in place)"
                        ) from err
                if wait is None:
                    raise GitHubRequestError(operation, status, _message(err.data)) from err
                self._wait(operation, wait, attempt, err)
            except (requests.ConnectionError, requests.Timeout) as err:
                self.observer.api_call(operation, "network-error")
                wait = transient_wait(method, None, attempt)
                if wait is None:
                    raise TransientGitHubError(f"GitHub {operation}: {err}") from err
                self._wait(operation, wait, attempt, err)
            else:
                self.observer.api_call(operation, "ok")
                return result
            attempt += 1

    def _follow(self, operation: str, location: str) -> None:
        """Learn a renamed repository's name from the ``/repositories/ID`` it redirects to."""
        found = _REPOSITORY_ID.search(location)
        if found is None:
            raise GitHubRequestError(operation, 307, f"redirected to {location!r}")
        url = f"{self.api_url}/repositories/{found.group(1)}"
        _, data = self._requester.requestJsonAndCheck("GET", url)
        self._renamed(str(data["full_name"]))

    def _wait(self, operation: str, wait: Backoff, attempt: int, err: Exception) -> None:
        if attempt >= MAX_ATTEMPTS or wait.seconds > self.max_inline_wait:
            raise TransientGitHubError(
                f"GitHub {operation}: {wait.reason}, retry in {wait.seconds:.0f} s",
                retry_after=wait.seconds,
            ) from err
        self.observer.rate_limit_wait(wait.reason, wait.seconds)
        self._sleep(wait.seconds)

    def _raw(
        self, operation: str, verb: str, path: str, **kwargs: Any
    ) -> tuple[dict[str, Any], Any]:
        # the URL is made at each attempt: a rename or a new token changes what it is
        return self._call(
            operation,
            verb,
            lambda: self._requester.requestJsonAndCheck(verb, f"{self._repo.url}{path}", **kwargs),
        )

    # --- repository, pull requests, permissions --------------------------------------------

    def info(self) -> RepoInfo:
        def run() -> RepoInfo:
            _, data = self._requester.requestJsonAndCheck("GET", self._repo.url)
            return RepoInfo(data["full_name"], data["default_branch"], data["clone_url"])

        found = self._call("get repository", "GET", run)
        if found.full_name.lower() != self.current_name.lower():
            self._renamed(found.full_name)  # a GET followed GitHub's 301 to the new name
        return found

    def viewer_login(self) -> str:
        """The login the token authenticates as (``GET /user``)."""
        return self._call("get user", "GET", lambda: self.github.get_user().login)

    def pull(self, number: int) -> PullInfo:
        return self._call("get pull", "GET", lambda: _pull(self._repo.get_pull(number)))

    def pulls_by_head(self, owner: str, branch: str) -> list[PullInfo]:
        """All PRs (any state) whose head is ``owner:branch``, newest first."""

        def run() -> list[PullInfo]:
            found = self._repo.get_pulls(state="all", head=f"{owner}:{branch}")
            return sorted((_pull(pr) for pr in found), key=lambda p: -p.number)

        return self._call("list pulls", "GET", run)

    def create_pull(self, *, base: str, head: str, title: str, body: str, draft: bool) -> PullInfo:
        return self._call(
            "create pull",
            "POST",
            lambda: _pull(
                self._repo.create_pull(base=base, head=head, title=title, body=body, draft=draft)
            ),
        )

    def edit_pull(
        self,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
        base: str | None = None,
    ) -> None:
        self._patch_fields(
            "update pull", f"/pulls/{number}", title=title, body=body, state=state, base=base
        )

    def _patch_fields(self, operation: str, path: str, **fields: str | None) -> None:
        """PATCH only the fields given (a pull request and an issue edit alike)."""
        changed = {key: value for key, value in fields.items() if value}
        if changed:
            self._raw(operation, "PATCH", path, input=changed)

    def permission(self, login: str) -> tuple[str, str]:
        """(``permission``, ``role_name``) of a user, e.g. ("write", "maintain")."""
        _, data = self._raw(
            "get permission", "GET", f"/collaborators/{quote(login, safe='')}/permission"
        )
        return str(data.get("permission", "none")), str(data.get("role_name", ""))

    # --- issue comments, reactions, labels -------------------------------------------------

    def comments(self, issue: int) -> list[CommentInfo]:
        """Every comment of an issue or PR (all pages, 100 per page)."""
        return self._call(
            "list comments",
            "GET",
            lambda: [_comment(c) for c in self._repo.get_issue(issue).get_comments()],
        )

    def comment(self, comment_id: int) -> CommentInfo | None:
        try:
            _, data = self._raw("get comment", "GET", f"/issues/comments/{comment_id}")
        except GitHubRequestError as err:
            if err.status == 404:
                return None
            raise
        return CommentInfo(
            int(data["id"]), data.get("body") or "", data["user"]["login"], data["html_url"]
        )

    def create_comment(self, issue: int, body: str) -> CommentInfo:
        return self._call(
            "create comment",
            "POST",
            lambda: _comment(self._repo.get_issue(issue).create_comment(body)),
        )

    def edit_comment(self, comment_id: int, body: str) -> None:
        self._raw("update comment", "PATCH", f"/issues/comments/{comment_id}", input={"body": body})

    def delete_comment(self, comment_id: int) -> None:
        try:
            self._raw("delete comment", "DELETE", f"/issues/comments/{comment_id}")
        except GitHubRequestError as err:
            if err.status != 404:
                raise

    def react(self, comment_id: int, content: str) -> None:
        self._raw(
            "create reaction",
            "POST",
            f"/issues/comments/{comment_id}/reactions",
            input={"content": content},
        )

    def remove_label(self, issue: int, name: str) -> None:
        try:
            self._call(
                "remove label",
                "DELETE",
                lambda: self._repo.get_issue(issue).remove_from_labels(name),
            )
        except GitHubRequestError as err:
            if err.status != 404:  # already gone
                raise

    def ensure_labels(self, names: Sequence[str], color: str = "ededed") -> list[str]:
        """The labels that exist (creating missing ones); labels we cannot create are skipped
        rather than failing the sync (degrade gracefully)."""
        usable: list[str] = []
        for name in names:
            try:
                self._raw("get label", "GET", f"/labels/{quote(name, safe='')}")
                usable.append(name)
                continue
            except GitHubRequestError as err:
                if err.status != 404:
                    continue
            try:
                self._call("create label", "POST", partial(self._create_label, name, color))
                usable.append(name)
            except GitHubRequestError:
                continue
        return usable

    def _create_label(self, name: str, color: str) -> None:
        self._repo.create_label(name, color)  # self._repo at call time: renames follow

    def add_labels(self, issue: int, names: Iterable[str]) -> None:
        labels = list(names)
        if labels:
            self._raw("add labels", "POST", f"/issues/{issue}/labels", input={"labels": labels})

    def delete_branch(self, branch: str) -> None:
        try:
            self._raw("delete ref", "DELETE", f"/git/refs/heads/{quote(branch, safe='/')}")
        except GitHubRequestError as err:
            if err.status not in (404, 422):  # already deleted
                raise

    # --- issues (the opt-in dashboard) -----------------------------------------------------

    def issues_by(self, creator: str) -> list[IssueInfo]:
        """Every issue (open or closed, not pull requests) ``creator`` opened, all pages.

        Read as raw JSON: PyGithub would fetch each issue again to learn that it is not a
        pull request (the listing omits the key for plain issues)."""
        found: list[IssueInfo] = []
        page = 1
        while True:
            query = {"state": "all", "creator": creator, "per_page": 100, "page": page}
            _, data = self._raw("list issues", "GET", "/issues", parameters=query)
            batch = data if isinstance(data, list) else []
            found += [_issue_json(item) for item in batch if not item.get("pull_request")]
            if len(batch) < 100:
                return found
            page += 1

    def issue(self, number: int) -> IssueInfo | None:
        try:
            _, data = self._raw("get issue", "GET", f"/issues/{number}")
        except GitHubRequestError as err:
            if err.status in (404, 410):
                return None
            raise
        return None if data.get("pull_request") else _issue_json(data)

    def create_issue(self, title: str, body: str) -> IssueInfo:
        _, data = self._raw("create issue", "POST", "/issues", input={"title": title, "body": body})
        return _issue_json(data)

    def edit_issue(
        self,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> None:
        self._patch_fields("update issue", f"/issues/{number}", title=title, body=body, state=state)

    # --- check runs ----------------------------------------------------------------------

    def check_runs(self, head_sha: str, name: str) -> list[CheckRunInfo]:
        return self._call(
            "list check runs",
            "GET",
            lambda: [
                _check_run(run)
                for run in self._repo.get_commit(head_sha).get_check_runs(check_name=name)
            ],
        )

    def create_check_run(
        self,
        *,
        name: str,
        head_sha: str,
        external_id: str,
        status: str,
        details_url: str | None = None,
    ) -> CheckRunInfo:
        def run() -> CheckRunInfo:
            extra: dict[str, Any] = {"details_url": details_url} if details_url else {}
            created = self._repo.create_check_run(
                name=name, head_sha=head_sha, external_id=external_id, status=status, **extra
            )
            return _check_run(created)

        return self._call("create check run", "POST", run)

    def update_check_run(self, check_run_id: int, fields: Mapping[str, Any]) -> None:
        self._raw("update check run", "PATCH", f"/check-runs/{check_run_id}", input=dict(fields))

    # --- raw reads (actions evidence) ------------------------------------------------------

    def get_json(self, operation: str, path: str, params: Mapping[str, Any] | None = None) -> Any:
        _, data = self._raw(operation, "GET", path, parameters=dict(params or {}))
        return data

    def get_pages(
        self, operation: str, path: str, list_key: str, params: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """All items of a ``{"total_count": n, "<list_key>": [...]}`` listing."""
        items: list[dict[str, Any]] = []
        page = 1
        while True:
            query = {**(params or {}), "per_page": 100, "page": page}
            data = self.get_json(operation, path, query)
            batch = list(data.get(list_key, [])) if isinstance(data, dict) else []
            items.extend(batch)
            total = int(data.get("total_count", 0)) if isinstance(data, dict) else 0
            if len(batch) < 100 or len(items) >= total:
                return items
            page += 1

    def redirect_location(self, operation: str, path: str) -> str | None:
        """The ``Location`` of a 302 answer (log downloads); None on 404/410."""
        url = f"{self._repo.url}{path}"
        try:
            headers, _ = self._call(
                operation, "GET", lambda: self._requester.requestBlobAndCheck("GET", url)
            )
        except GitHubRequestError as err:
            if err.status in (404, 410):
                return None
            raise
        location = headers.get("location")
        return str(location) if location else None

    def download_text(self, url: str, *, max_bytes: int = 64 * 1024 * 1024) -> str | None:
        """GET a pre-signed storage URL (no credentials sent); None on 404/410."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                response = httpx.get(url, timeout=60, follow_redirects=True)
            except httpx.HTTPError as err:
                self.observer.api_call("download log", "network-error")
                wait = transient_wait("GET", None, attempt)
                if wait is None or attempt == MAX_ATTEMPTS:
                    raise TransientGitHubError(f"log download failed: {err}") from err
                self._sleep(wait.seconds)
                continue
            self.observer.api_call("download log", str(response.status_code))
            if response.status_code in (404, 410):
                return None
            if response.status_code >= 500 and attempt < MAX_ATTEMPTS:
                self._sleep(float(2 ** (attempt - 1)))
                continue
            if response.status_code != 200:
                raise GitHubRequestError("download log", response.status_code, response.text[:200])
            return response.content[:max_bytes].decode("utf-8", errors="replace")
        return None


def utc_now_iso(clock: Callable[[], float] = time.time) -> str:
    return datetime.fromtimestamp(clock(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
