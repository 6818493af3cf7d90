"""One GitHub repository, through :class:`bot.github.client.GitHubHTTP`, with our retry and
rate-limit policy.

Every request of the service goes through :meth:`GitHubRepo._call`: a rate-limited request
waits as :mod:`bot.github.ratelimit` says (``Retry-After``, the primary reset, >= 60 s then
exponential for secondary limits) and is retried; a read that met a 5xx or a network error
is retried with exponential backoff; a write that met a 5xx is NOT retried in place (it may
have happened) but raised as :class:`TransientGitHubError`, so the job runs again from the
top, where every side effect is looked up before it is created. Waits longer than
``max_inline_wait`` are not slept in the worker: the job is rescheduled instead.

Results are plain frozen dataclasses built from GitHub's JSON.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

import httpx
from githubkit import TokenAuthStrategy

from bot.github.client import REPOSITORY_ID, GitHubHTTP, json_message
from bot.github.errors import GitHubRequestError, TransientGitHubError
from bot.github.ratelimit import MAX_ATTEMPTS, Backoff, rate_limit_wait, transient_wait

T = TypeVar("T")

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


def _login(user: Any) -> str:
    return str(user.get("login", "")) if isinstance(user, dict) else ""


def _when(value: Any) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None


def _pull(data: Mapping[str, Any]) -> PullInfo:
    head, base = data["head"], data["base"]
    head_repo = head.get("repo")
    # a listed pull request has no "merged": merged_at says it (a GET has both)
    merged = data["merged"] if "merged" in data else data.get("merged_at") is not None
    return PullInfo(
        number=int(data["number"]),
        state=str(data["state"]),
        merged=bool(merged),
        draft=bool(data.get("draft")),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        html_url=str(data["html_url"]),
        user=_login(data.get("user")),
        head_sha=str(head["sha"]),
        head_ref=str(head["ref"]),
        head_repo=str(head_repo["full_name"]) if head_repo else "",
        base_sha=str(base["sha"]),
        base_ref=str(base["ref"]),
        base_repo=str(base["repo"]["full_name"]),
        labels=tuple(str(label["name"]) for label in data.get("labels") or ()),
        head_pushed_at=_when(head_repo.get("pushed_at")) if head_repo else None,
    )


def _comment(data: Mapping[str, Any]) -> CommentInfo:
    return CommentInfo(
        id=int(data["id"]),
        body=str(data.get("body") or ""),
        user=_login(data.get("user")),
        html_url=str(data["html_url"]),
    )


def _issue_json(data: Mapping[str, Any]) -> IssueInfo:
    return IssueInfo(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        user=_login(data.get("user")),
        state=str(data.get("state") or "open"),
        html_url=str(data.get("html_url") or ""),
    )


def _check_run(data: Mapping[str, Any]) -> CheckRunInfo:
    return CheckRunInfo(
        id=int(data["id"]),
        name=str(data["name"]),
        head_sha=str(data["head_sha"]),
        status=str(data["status"]),
        conclusion=data.get("conclusion"),
        external_id=str(data.get("external_id") or ""),
        html_url=str(data.get("html_url") or ""),
    )


class _Refused(Exception):
    """An answer of 300 or more, for the retry loop (``status``, ``headers``, ``data``)."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.status_code)
        self.status = response.status_code
        self.headers = {k.lower(): v for k, v in response.headers.items()}
        try:
            self.data: Any = response.json()
        except ValueError:
            self.data = response.text[:200]


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
        self.github = GitHubHTTP(
            self.api_url,
            TokenAuthStrategy(token),
            seconds_between_writes=self._seconds_between_writes,
        )

    def _renamed(self, new_name: str) -> None:
        """GitHub names this repository ``new_name`` now: follow it (every later call uses
        the new name; records keep ``full_name``) and say so once."""
        self.current_name = new_name
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
            except _Refused as err:
                status = err.status
                self.observer.api_call(operation, str(status))
                if status == 401 and self._renew is not None and not renewed:
                    # revoked or expired early: drop it and retry once with a fresh token
                    # (an uninstalled App is AppNotInstalled from here, not "401")
                    renewed = True
                    self.github.close()
                    self._connect(self._renew())
                    continue
                if status in (301, 307, 308) and not followed:
                    followed = True  # renamed: GitHub redirects by id
                    self._follow(operation, err.headers.get("location", ""))
                    continue
                wait = rate_limit_wait(
                    status, err.headers, json_message(err.data), attempt, self._clock()
                )
                if wait is None and status >= 500:
                    wait = transient_wait(method, status, attempt)
                    if wait is None:  # a write may have happened: retry the job, not the call
                        raise TransientGitHubError(
                            f"GitHub {operation}: HTTP {status} (not retried in place)"
                        ) from err
                if wait is None:
                    raise GitHubRequestError(operation, status, json_message(err.data)) from err
                self._wait(operation, wait, attempt, err)
            except httpx.HTTPError as err:
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
        found = REPOSITORY_ID.search(location)
        if found is None:
            raise GitHubRequestError(operation, 307, f"redirected to {location!r}")
        response = self.github.send("GET", f"/repositories/{found.group(1)}")
        if response.status_code != 200:
            raise _Refused(response)
        self._renamed(str(response.json()["full_name"]))

    def _wait(self, operation: str, wait: Backoff, attempt: int, err: Exception) -> None:
        if attempt >= MAX_ATTEMPTS or wait.seconds > self.max_inline_wait:
            raise TransientGitHubError(
                f"GitHub {operation}: {wait.reason}, retry in {wait.seconds:.0f} s",
                retry_after=wait.seconds,
            ) from err
        self.observer.rate_limit_wait(wait.reason, wait.seconds)
        self._sleep(wait.seconds)

    def _send(self, verb: str, path: str, *, allow: tuple[int, ...] = (), **kwargs: Any) -> Any:
        """One request under this repository (``path`` relative to it, or from the API's
        root with a leading ``/``, or a full URL): the JSON body (None when empty); a status
        of 300 or more raises :class:`_Refused` unless in ``allow`` (the response returned)."""
        # the URL is made at each attempt: a rename changes what it is
        if path.startswith(("/", "http")):
            url = path
        else:
            url = f"/repos/{self.current_name}" + (f"/{path}" if path else "")
        response = self.github.send(verb, url, **kwargs)
        if response.status_code in allow:
            return response
        if response.status_code >= 300:
            raise _Refused(response)
        return response.json() if response.content else None

    def _raw(self, operation: str, verb: str, path: str, **kwargs: Any) -> Any:
        return self._call(operation, verb, lambda: self._send(verb, path.lstrip("/"), **kwargs))

    def _listing(
        self, operation: str, path: str, params: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Every item of a JSON-array listing, page after page by its ``Link: rel=next``."""
        items: list[dict[str, Any]] = []
        url: str | None = path.lstrip("/")
        query: dict[str, Any] | None = {**(params or {}), "per_page": 100}
        while url is not None:
            fetch = partial(self._send, "GET", url, allow=(200,), params=query)
            response: httpx.Response = self._call(operation, "GET", fetch)
            batch = response.json()
            items.extend(batch if isinstance(batch, list) else [])
            url = response.links.get("next", {}).get("url")
            query = None  # the next link carries the query
        return items

    # --- repository, pull requests, permissions --------------------------------------------

    def info(self) -> RepoInfo:
        data = self._raw("get repository", "GET", "")
        found = RepoInfo(data["full_name"], data["default_branch"], data["clone_url"])
        if found.full_name.lower() != self.current_name.lower():
            self._renamed(found.full_name)
        return found

    def viewer_login(self) -> str:
        """The login the token authenticates as (``GET /user``)."""
        data = self._call("get user", "GET", lambda: self._send("GET", "/user"))
        return str(data["login"])

    def pull(self, number: int) -> PullInfo:
        return _pull(self._raw("get pull", "GET", f"pulls/{number}"))

    def pulls_by_head(self, owner: str, branch: str) -> list[PullInfo]:
        """All PRs (any state) whose head is ``owner:branch``, newest first."""
        found = self._listing("list pulls", "pulls", {"state": "all", "head": f"{owner}:{branch}"})
        return sorted((_pull(pr) for pr in found), key=lambda p: -p.number)

    def create_pull(self, *, base: str, head: str, title: str, body: str, draft: bool) -> PullInfo:
        fields = {"base": base, "head": head, "title": title, "body": body, "draft": draft}
        return _pull(self._raw("create pull", "POST", "pulls", json=fields))

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
            "update pull", f"pulls/{number}", title=title, body=body, state=state, base=base
        )

    def _patch_fields(self, operation: str, path: str, **fields: str | None) -> None:
        """PATCH only the fields given (a pull request and an issue edit alike)."""
        changed = {key: value for key, value in fields.items() if value}
        if changed:
            self._raw(operation, "PATCH", path, json=changed)

    def permission(self, login: str) -> tuple[str, str]:
        """(``permission``, ``role_name``) of a user, e.g. ("write", "maintain")."""
        data = self._raw(
            "get permission", "GET", f"collaborators/{quote(login, safe='')}/permission"
        )
        return str(data.get("permission", "none")), str(data.get("role_name", ""))

    # --- issue comments, reactions, labels -------------------------------------------------

    def comments(self, issue: int) -> list[CommentInfo]:
        """Every comment of an issue or PR (all pages, 100 per page)."""
        return [_comment(c) for c in self._listing("list comments", f"issues/{issue}/comments")]

    def comment(self, comment_id: int) -> CommentInfo | None:
        try:
            data = self._raw("get comment", "GET", f"issues/comments/{comment_id}")
        except GitHubRequestError as err:
            if err.status == 404:
                return None
            raise
        return _comment(data)

    def create_comment(self, issue: int, body: str) -> CommentInfo:
        data = self._raw("create comment", "POST", f"issues/{issue}/comments", json={"body": body})
        return _comment(data)

    def edit_comment(self, comment_id: int, body: str) -> None:
        self._raw("update comment", "PATCH", f"issues/comments/{comment_id}", json={"body": body})

    def delete_comment(self, comment_id: int) -> None:
        try:
            self._raw("delete comment", "DELETE", f"issues/comments/{comment_id}")
        except GitHubRequestError as err:
            if err.status != 404:
                raise

    def react(self, comment_id: int, content: str) -> None:
        self._raw(
            "create reaction",
            "POST",
            f"issues/comments/{comment_id}/reactions",
            json={"content": content},
        )

    def remove_label(self, issue: int, name: str) -> None:
        try:
            self._raw("remove label", "DELETE", f"issues/{issue}/labels/{quote(name, safe='')}")
        except GitHubRequestError as err:
            if err.status != 404:  # already gone
                raise

    def ensure_labels(self, names: Sequence[str], color: str = "ededed") -> list[str]:
        """The labels that exist (creating missing ones); labels we cannot create are skipped
        rather than failing the sync (degrade gracefully)."""
        usable: list[str] = []
        for name in names:
            try:
                self._raw("get label", "GET", f"labels/{quote(name, safe='')}")
                usable.append(name)
                continue
            except GitHubRequestError as err:
                if err.status != 404:
                    continue
            try:
                self._raw("create label", "POST", "labels", json={"name": name, "color": color})
                usable.append(name)
            except GitHubRequestError:
                continue
        return usable

    def add_labels(self, issue: int, names: Iterable[str]) -> None:
        labels = list(names)
        if labels:
            self._raw("add labels", "POST", f"issues/{issue}/labels", json={"labels": labels})

    def delete_branch(self, branch: str) -> None:
        try:
            self._raw("delete ref", "DELETE", f"git/refs/heads/{quote(branch, safe='/')}")
        except GitHubRequestError as err:
            if err.status not in (404, 422):  # already deleted
                raise

    # --- issues (the opt-in dashboard) -----------------------------------------------------

    def issues_by(self, creator: str) -> list[IssueInfo]:
        """Every issue (open or closed, not pull requests) ``creator`` opened, all pages
        (the listing holds pull requests too, marked by their ``pull_request`` key)."""
        found = self._listing("list issues", "issues", {"state": "all", "creator": creator})
        return [_issue_json(item) for item in found if not item.get("pull_request")]

    def issue(self, number: int) -> IssueInfo | None:
        try:
            data = self._raw("get issue", "GET", f"issues/{number}")
        except GitHubRequestError as err:
            if err.status in (404, 410):
                return None
            raise
        return None if data.get("pull_request") else _issue_json(data)

    def create_issue(self, title: str, body: str) -> IssueInfo:
        data = self._raw("create issue", "POST", "issues", json={"title": title, "body": body})
        return _issue_json(data)

    def edit_issue(
        self,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> None:
        self._patch_fields("update issue", f"issues/{number}", title=title, body=body, state=state)

    # --- check runs ----------------------------------------------------------------------

    def check_runs(self, head_sha: str, name: str) -> list[CheckRunInfo]:
        runs = self.get_pages(
            "list check runs", f"commits/{head_sha}/check-runs", "check_runs", {"check_name": name}
        )
        return [_check_run(run) for run in runs]

    def create_check_run(
        self,
        *,
        name: str,
        head_sha: str,
        external_id: str,
        status: str,
        details_url: str | None = None,
    ) -> CheckRunInfo:
        fields: dict[str, Any] = {
            "name": name,
            "head_sha": head_sha,
            "external_id": external_id,
            "status": status,
        }
        if details_url:
            fields["details_url"] = details_url
        return _check_run(self._raw("create check run", "POST", "check-runs", json=fields))

    def update_check_run(self, check_run_id: int, fields: Mapping[str, Any]) -> None:
        self._raw("update check run", "PATCH", f"check-runs/{check_run_id}", json=dict(fields))

    # --- raw reads (actions evidence) ------------------------------------------------------

    def get_json(self, operation: str, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self._raw(operation, "GET", path, params=dict(params or {}))

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

        def fetch() -> httpx.Response:
            response: httpx.Response = self._send("GET", path.lstrip("/"), allow=(302,))
            return response

        try:
            response = self._call(operation, "GET", fetch)
        except GitHubRequestError as err:
            if err.status in (404, 410):
                return None
            raise
        location = response.headers.get("location")
        return str(location) if location else None

    def download_text(self, url: str, *, max_bytes: int = 64 * 1024 * 1024) -> str | None:
        """GET a pre-signed storage URL (no credentials sent: httpx itself, not the client
        that authenticates); None on 404/410."""
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
