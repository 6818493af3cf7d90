"""What the handlers share: who may act, asking for a sync, the refusal, the reaction."""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import TypeVar

from bot.github.errors import AppNotInstalled, GitHubRequestError
from bot.github.gateway import REACTION_SCOPE, GitHubRepo
from bot.present.posted import REFUSAL_MARKER, refusal_comment
from bot.service.events import CommentCommand, Event
from bot.service.runtime import Runtime
from bot.state.records import Approval

log = logging.getLogger("recipe_sync.dispatch")

TRIAGE_OR_MORE = frozenset({"admin", "maintain", "write", "triage"})
WRITE_OR_MORE = frozenset({"admin", "maintain", "write"})

E = TypeVar("E", bound=Event)


def role(gh: GitHubRepo, login: str) -> str:
    permission, role_name = gh.permission(login)
    # role_name says triage/maintain; permission collapses them to read/write
    return role_name if role_name in TRIAGE_OR_MORE else permission


def request_sync(
    rt: Runtime,
    repo: str,
    pr: int,
    approval: Approval | None,
    *,
    dry_run: bool = False,
    require_approval: bool = True,
) -> str:
    ticket = rt.store.syncs.request(
        repo, pr, approval=approval, dry_run=dry_run, require_approval=require_approval
    )
    if ticket is None:
        return "not approved: nothing to do"
    if ticket.enqueue:
        rt.enqueue_sync(ticket.sync_id)
        return f"sync {ticket.sync_id} enqueued"
    return f"sync {ticket.sync_id} already {ticket.state}: request merged"


def benchmark_only(
    handler: Callable[[Runtime, E], str],
) -> Callable[[Runtime, E], str]:
    """A handler of benchmark PRs: the same event in the recipes repository is no concern."""

    @wraps(handler)
    def in_benchmark_repo(rt: Runtime, event: E) -> str:
        if event.repo == rt.settings.recipes_repo:
            return f"{event.kind} in the recipes repository: not a benchmark PR"
        return handler(rt, event)

    return in_benchmark_repo


def refused(
    rt: Runtime,
    gh: GitHubRepo,
    event: CommentCommand,
    command: str,
    *,
    starts_sync: bool = True,
) -> str | None:
    """None when the sender has write permission or more; else ONE polite refusal per user
    and PR (then silence), and the account for the delivery log."""
    if role(gh, event.sender) in WRITE_OR_MORE:
        return None
    if rt.store.conversation.claim_refusal(event.repo, event.pr_number, event.sender):
        gh.create_comment(
            event.pr_number,
            f"{REFUSAL_MARKER}\n" + refusal_comment(event.sender, command, starts_sync=starts_sync),
        )
        return f"refused {event.sender} (replied once)"
    return f"refused {event.sender} (already told)"


def acknowledge(rt: Runtime, event: CommentCommand) -> None:
    """👍 on the command comment, best effort: a reaction GitHub refuses (e.g. an installation
    that has not approved ``issues: write``) is logged and the command still runs."""
    try:
        rt.connector.repo(event.repo, REACTION_SCOPE).react(event.comment_id, "+1")
    except (GitHubRequestError, AppNotInstalled) as err:
        log.warning(
            "no reaction on comment %s in %s (the command goes on): %s",
            event.comment_id,
            event.repo,
            err,
        )
