"""Which head a ``/recipe-sync`` comment approves on a fork PR (bot/service/approval.py)."""

from __future__ import annotations

import datetime

from bot.github.gateway import PullInfo
from bot.service.approval import head_is_the_commented_one


def _pull(head_repo: str, pushed_at: datetime.datetime | None) -> PullInfo:
    return PullInfo(
        number=1, state="open", merged=False, draft=False, title="", body="", html_url="",
        user="contrib", head_sha="b" * 40, head_ref="tune", head_repo=head_repo,
        base_sha="a" * 40, base_ref="main", base_repo="org/bench", labels=(),
        head_pushed_at=pushed_at,
    )  # fmt: skip


def test_a_command_approves_a_fork_head_only_if_it_was_pushed_before_the_comment() -> None:
    at = datetime.datetime(2026, 12, 5, 7, 0, 0, tzinfo=datetime.UTC)
    second = datetime.timedelta(seconds=1)
    comment = "2026-12-05T07:00:00Z"
    assert head_is_the_commented_one(_pull("contrib/bench", at - second), comment)
    assert not head_is_the_commented_one(_pull("contrib/bench", at + second), comment)
    # GitHub's times are whole seconds: a push in the comment's second may be after it
    assert not head_is_the_commented_one(_pull("contrib/bench", at), comment)
    assert not head_is_the_commented_one(_pull("", None), comment)  # a deleted fork
    assert not head_is_the_commented_one(_pull("contrib/bench", at - second), "yesterday")
    # a same-repository branch is pushed by writers only; a trigger queued before the
    # comment time was recorded keeps the former rule
    assert head_is_the_commented_one(_pull("org/bench", at + second), comment)
    assert head_is_the_commented_one(_pull("contrib/bench", at + second), "")
