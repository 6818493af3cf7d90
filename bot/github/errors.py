"""Errors of the GitHub layer: transient (the job is retried) or permanent (it is not)."""

from __future__ import annotations

from bot.errors import RecipeSyncError


class TransientGitHubError(Exception):
    """GitHub is unavailable or rate-limited right now; retry the job (after ``retry_after``)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class GitHubRequestError(RecipeSyncError):
    """GitHub refused a request for good (4xx other than rate limits)."""

    def __init__(self, operation: str, status: int, message: str) -> None:
        super().__init__(f"GitHub {operation}: HTTP {status}: {message}")
        self.operation = operation
        self.status = status
        self.message = message


class CredentialsInvalid(RecipeSyncError):
    """The configured credentials cannot be used (e.g. an unparseable private key): permanent
    until the operator fixes them, so jobs fail with this reason instead of retrying."""


class AppNotInstalled(RecipeSyncError):
    """The App has no installation on a repository it must act on."""


class PushRefused(RecipeSyncError):
    """The remote refused a push for a reason other than a lost lease (a server-side hook,
    branch protection, a permission the App lacks): retrying cannot help until someone grants
    or allows it. ``reason`` is the remote's one-line reason, ``grant`` what would fix it."""

    def __init__(self, repo: str, branch: str, reason: str, grant: str) -> None:
        super().__init__(f"the push of `{branch}` to {repo} was refused: {reason}. {grant}")
        self.repo = repo
        self.branch = branch
        self.reason = reason
        self.grant = grant


class HeadMoved(Exception):
    """The benchmark PR head is no longer the approved SHA: abort before writing."""


class LeaseLost(Exception):
    """Another worker took this sync over (our heartbeat stopped): abort before writing."""
