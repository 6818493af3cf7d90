"""What an installation token needs for every REST endpoint recipe-sync calls.

Transcribed from GitHub's docs, "Permissions required for GitHub Apps"
(https://docs.github.com/en/rest/authentication/permissions-required-for-github-apps), the
server-to-server (installation access token) column. The fake GitHub enforces it on every
request an installation token makes, and refuses an endpoint that is not listed here, so a
new call has to be classified before any test can make it.

An endpoint lists alternatives: ANY ONE of its permission sets suffices. Issue-comment and
label endpoints appear under both "Issues" and "Pull requests" (a pull request is an issue),
but reactions on an issue comment only under "Issues". ``metadata: read`` is always granted
to an installation token, so endpoints needing only it have no alternatives.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Permissions = Mapping[str, str]
Auth = Literal["installation", "app-jwt", "none", "user-only"]

LEVELS = {"read": 1, "write": 2}
ALWAYS_GRANTED: Permissions = {"metadata": "read"}


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # GitHub's template, e.g. /repos/{owner}/{repo}/pulls/{pull_number}
    any_of: tuple[Permissions, ...] = ()  # () with installation auth: metadata only
    auth: Auth = "installation"  # app-jwt: the App's JWT; user-only: no installation token
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # {ref} and {branch} may contain slashes; every other parameter is one path segment
        regex = re.sub(
            r"\{(\w+)\}",
            lambda m: "(.+)" if m.group(1) in ("ref", "branch") else "([^/]+)",
            self.path,
        )
        object.__setattr__(self, "pattern", re.compile(regex))

    def required(self) -> str:
        """``X-Accepted-GitHub-Permissions`` as GitHub sends it on a 403."""
        if not self.any_of:
            return "metadata=read"
        return "; ".join(
            ",".join(f"{k}={v}" for k, v in sorted(option.items())) for option in self.any_of
        )


def _rw(level: str, *names: str) -> tuple[Permissions, ...]:
    return tuple({name: level} for name in names)


ISSUES_OR_PULLS_READ = _rw("read", "issues", "pull_requests")
ISSUES_OR_PULLS_WRITE = _rw("write", "issues", "pull_requests")

R = "/repos/{owner}/{repo}"
ENDPOINTS: tuple[Endpoint, ...] = (
    # credentials: the App's JWT, not an installation token
    Endpoint("GET", R + "/installation", auth="app-jwt"),
    Endpoint("POST", "/app/installations/{installation_id}/access_tokens", auth="app-jwt"),
    # "GET /user" is not available to installation tokens (personal-token mode only)
    Endpoint("GET", "/user", auth="user-only"),
    # Metadata (a renamed repository is redirected to /repositories/{repository_id}/...)
    Endpoint("GET", R),
    Endpoint("GET", "/repositories/{repository_id}"),
    Endpoint("GET", R + "/collaborators/{username}/permission"),
    # Pull requests
    Endpoint("GET", R + "/pulls", _rw("read", "pull_requests")),
    Endpoint("POST", R + "/pulls", _rw("write", "pull_requests")),
    Endpoint("GET", R + "/pulls/{pull_number}", _rw("read", "pull_requests")),
    Endpoint("PATCH", R + "/pulls/{pull_number}", _rw("write", "pull_requests")),
    # Issues (issue comments and labels: Issues or Pull requests)
    Endpoint("GET", R + "/issues/{issue_number}/comments", ISSUES_OR_PULLS_READ),
    Endpoint("POST", R + "/issues/{issue_number}/comments", ISSUES_OR_PULLS_WRITE),
    Endpoint("GET", R + "/issues/comments/{comment_id}", ISSUES_OR_PULLS_READ),
    Endpoint("PATCH", R + "/issues/comments/{comment_id}", ISSUES_OR_PULLS_WRITE),
    Endpoint("DELETE", R + "/issues/comments/{comment_id}", ISSUES_OR_PULLS_WRITE),
    Endpoint("POST", R + "/issues/comments/{comment_id}/reactions", _rw("write", "issues")),
    Endpoint("GET", R + "/labels/{name}", ISSUES_OR_PULLS_READ),
    Endpoint("POST", R + "/labels", ISSUES_OR_PULLS_WRITE),
    Endpoint("POST", R + "/issues/{issue_number}/labels", ISSUES_OR_PULLS_WRITE),
    Endpoint("DELETE", R + "/issues/{issue_number}/labels/{name}", ISSUES_OR_PULLS_WRITE),
    Endpoint("GET", R + "/issues", _rw("read", "issues")),
    Endpoint("POST", R + "/issues", _rw("write", "issues")),
    Endpoint("GET", R + "/issues/{issue_number}", _rw("read", "issues")),
    Endpoint("PATCH", R + "/issues/{issue_number}", _rw("write", "issues")),
    # Contents (git pushes and fetches over https need contents write / read as well)
    Endpoint("DELETE", R + "/git/refs/{ref}", _rw("write", "contents")),
    # Checks
    Endpoint("GET", R + "/commits/{ref}/check-runs", _rw("read", "checks")),
    Endpoint("POST", R + "/check-runs", _rw("write", "checks")),
    Endpoint("PATCH", R + "/check-runs/{check_run_id}", _rw("write", "checks")),
    # Actions
    Endpoint("GET", R + "/actions/runs", _rw("read", "actions")),
    Endpoint("GET", R + "/actions/runs/{run_id}/attempts/{attempt_number}", _rw("read", "actions")),
    Endpoint(
        "GET", R + "/actions/runs/{run_id}/attempts/{attempt_number}/jobs", _rw("read", "actions")
    ),
    Endpoint("GET", R + "/actions/jobs/{job_id}/logs", _rw("read", "actions")),
)

# Git over https with an installation token ("Authenticating as a GitHub App installation":
# cloning and fetching need Contents read, pushing Contents write). The fake's clone URLs are
# local paths, so no token travels: FakeGitHub.enforce_git_permissions holds the token a
# Mirror was given to this instead.
GIT_TRANSPORT: Mapping[str, Permissions] = {
    "fetch": {"contents": "read"},
    "ls-remote": {"contents": "read"},
    "push": {"contents": "write"},
}

# Not GitHub's API: the fake's pre-signed log storage (no credentials may be sent there).
UNAUTHENTICATED_PREFIXES = ("/_storage/",)


def endpoint(method: str, path: str) -> Endpoint | None:
    """The table's entry for a request, or None when it is not classified."""
    for entry in ENDPOINTS:
        if entry.method == method and entry.pattern.fullmatch(path):
            return entry
    return None


def grants(granted: Permissions, needed: Permissions) -> bool:
    """Whether ``granted`` (a token's permissions) covers ``needed`` (write implies read)."""
    held = {**ALWAYS_GRANTED, **granted}
    return all(LEVELS.get(held.get(name, ""), 0) >= LEVELS[level] for name, level in needed.items())


def allowed(granted: Permissions, entry: Endpoint) -> bool:
    return not entry.any_of or any(grants(granted, option) for option in entry.any_of)
