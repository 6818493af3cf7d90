"""Which head a ``/recipe-sync`` comment approves (bot/service/approval.py), and how the
command is read (bot/service/grammar.py)."""

from __future__ import annotations

import datetime

from bot.github.gateway import PullInfo
from bot.service.approval import CommandApproval, command_approval
from bot.service.events import Event, Ignored, SyncCommand
from bot.service.intake import classify
from tests.service.fakegithub import template

HEAD = "b" * 40


def _pull(head_repo: str, pushed_at: datetime.datetime | None) -> PullInfo:
    return PullInfo(
        number=1, state="open", merged=False, draft=False, title="", body="", html_url="",
        user="contrib", head_sha=HEAD, head_ref="tune", head_repo=head_repo,
        base_sha="a" * 40, base_ref="main", base_repo="org/bench", labels=(),
        head_pushed_at=pushed_at,
    )  # fmt: skip


def test_a_bare_command_approves_a_fork_head_pushed_a_minute_before_it() -> None:
    at = datetime.datetime(2026, 12, 5, 7, 0, 0, tzinfo=datetime.UTC)
    comment = "2026-12-05T07:00:00Z"

    def approves(pushed: datetime.datetime | None, head_repo: str = "contrib/bench") -> bool:
        return command_approval(_pull(head_repo, pushed), "", comment).sha == HEAD

    assert approves(at - datetime.timedelta(seconds=60))
    # a push in the minute before the comment (150 ms was approved): not what was reviewed
    assert not approves(at - datetime.timedelta(seconds=59))
    assert not approves(at - datetime.timedelta(milliseconds=150))
    assert not approves(at + datetime.timedelta(seconds=1))
    assert not approves(None, "")  # a deleted fork
    assert command_approval(_pull("contrib/bench", at), "", "yesterday").sha is None
    # a same-repository branch is pushed by writers only
    assert approves(at + datetime.timedelta(seconds=1), "org/bench")


def test_a_command_naming_a_commit_approves_it_while_it_is_the_head() -> None:
    just_pushed = datetime.datetime(2026, 12, 5, 7, 0, 0, tzinfo=datetime.UTC)
    fork = _pull("contrib/bench", just_pushed)
    comment = "2026-12-05T07:00:00Z"
    assert command_approval(fork, HEAD[:7], comment) == CommandApproval(HEAD, "named")
    assert command_approval(fork, HEAD.upper(), comment) == CommandApproval(HEAD, "named")
    assert command_approval(fork, "c" * 12, comment) == CommandApproval(None, "named-moved")
    same = _pull("org/bench", just_pushed)
    assert command_approval(same, "c" * 12, comment).sha is None


def _command(body: str) -> Event | Ignored:
    payload = template("issue_comment.created.pull_request.json")
    payload["comment"]["body"] = body
    payload["sender"] = {"login": "maintainer", "type": "User"}
    return classify(
        "issue_comment",
        payload,
        trigger_label="recipe-sync",
        comment_command="/recipe-sync",
        bot_login="recipe-sync[bot]",
    )


def test_the_command_takes_dry_run_and_a_commit_in_any_order() -> None:
    bare = _command("/recipe-sync")
    assert isinstance(bare, SyncCommand) and bare.named_sha == "" and not bare.dry_run
    named = _command("/recipe-sync dry-run ABCDEF1")
    assert isinstance(named, SyncCommand) and named.named_sha == "abcdef1" and named.dry_run
    again = _command("/recipe-sync abcdef1234 dry-run")
    assert isinstance(again, SyncCommand) and again.named_sha == "abcdef1234" and again.dry_run
    for refused in ("/recipe-sync abc12", "/recipe-sync please", "/recipe-sync abcdef1 abcdef2"):
        assert isinstance(_command(refused), Ignored), refused
