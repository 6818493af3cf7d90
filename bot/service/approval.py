"""Which head a ``/recipe-sync`` comment approves: the one the maintainer saw.

The job runs after the comment (seconds, or longer behind a queue), and reads the PR's head
then. On a fork PR the contributor may have pushed in between; approving the head read at job
time would run code nobody looked at. GitHub gives no head SHA with a comment, but it gives
two server-set times: the comment's ``created_at`` and the head repository's ``pushed_at``
(its last push, to any branch). A head read later is the commented one when the fork was last
pushed strictly before the comment; otherwise (including the same second, GitHub's resolution,
and a deleted fork) the approval is not given and the maintainer is asked to comment again.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bot.github.gateway import PullInfo


def _utc(stamp: datetime) -> datetime:
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def parse_github_time(text: str) -> datetime | None:
    """``2026-01-01T00:00:00Z`` (fractions tolerated) → an aware datetime; None if unreadable."""
    try:
        return _utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None


def head_is_the_commented_one(pull: PullInfo, commented_at: str) -> bool:
    """Whether ``pull.head_sha`` was already the head when the comment was written."""
    if not pull.is_fork:
        return True  # only writers push to a same-repository branch: their push approves
    if not commented_at:
        return True  # a command queued before comment times were recorded
    commented = parse_github_time(commented_at)
    if commented is None or pull.head_pushed_at is None:
        return False
    return _utc(pull.head_pushed_at) < commented
