"""Which head a ``/recipe-sync`` comment approves: the one the maintainer saw.

The job runs after the comment (seconds, or longer behind a queue), and reads the PR's head
then. On a fork PR the contributor may have pushed in between, or just before the comment
while the maintainer was reading the previous head; approving the head read at job time
would run code nobody looked at. So:

* ``/recipe-sync <sha>`` approves the commit it names, and only while it is the head (a
  prefix of at least 7 hex digits, as GitHub shows it): what the maintainer reviewed is
  written in the comment;
* a bare ``/recipe-sync`` on a fork PR approves the head only when the fork was last pushed
  (the head repository's ``pushed_at``, any branch) at least ``SETTLED_FOR`` seconds before
  the comment's ``created_at``: a head that was there for a minute is the one on the page
  the maintainer commented from. A push closer to the comment (a push 150 ms before it was
  approved), after it, or a deleted fork approves nothing, and the maintainer is asked to
  name the commit;
* on a same-repository branch only writers push: a bare command approves the head.

The reply (:func:`bot.present.posted.approved_comment`) names the approved commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bot.github.gateway import PullInfo

SETTLED_FOR = 60.0  # seconds between a fork's last push and a bare command that approves it


@dataclass(frozen=True)
class CommandApproval:
    """What a command approves: ``sha`` (None: nothing) and the reason, for the reply."""

    sha: str | None
    reason: str  # named | settled | same-repository | named-moved | unsettled


def _utc(stamp: datetime) -> datetime:
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def parse_github_time(text: str) -> datetime | None:
    """``2026-01-01T00:00:00Z`` (fractions tolerated) → an aware datetime; None if unreadable."""
    try:
        return _utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return None


def command_approval(pull: PullInfo, named_sha: str, commented_at: str) -> CommandApproval:
    """The head ``/recipe-sync [<named_sha>]``, written at ``commented_at``, approves."""
    if named_sha:
        if pull.head_sha.lower().startswith(named_sha.lower()):
            return CommandApproval(pull.head_sha, "named")
        return CommandApproval(None, "named-moved")
    if not pull.is_fork:
        return CommandApproval(pull.head_sha, "same-repository")
    if not commented_at:
        return CommandApproval(pull.head_sha, "settled")  # queued before times were recorded
    commented = parse_github_time(commented_at)
    if commented is None or pull.head_pushed_at is None:
        return CommandApproval(None, "unsettled")
    if (commented - _utc(pull.head_pushed_at)).total_seconds() >= SETTLED_FOR:
        return CommandApproval(pull.head_sha, "settled")
    return CommandApproval(None, "unsettled")
