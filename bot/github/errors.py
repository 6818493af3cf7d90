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


class HeadMoved(Exception):
    """The benchmark PR head is no longer the approved SHA: abort before writing."""


class LeaseLost(Exception):
    """Another worker took this sync over (our heartbeat stopped): abort before writing."""
