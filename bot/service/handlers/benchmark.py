"""Events on a benchmark PR: approval by label, push or command; withdrawal; closing;
the runs and check runs that refresh its evidence.

Approval is tied to a head SHA: the trigger label (triage permission or more) approves the
labelled head; a push to a labelled same-repository PR approves the new head, while a push
to a labelled fork PR needs re-approval (the label is removed, one sticky note asks for it
again, nothing else runs); ``/recipe-sync [dry-run] [<sha>]`` (write permission) approves
the commit it names or the head it was written for (:mod:`bot.service.approval`).
"""

from __future__ import annotations

from bot.github.gateway import BENCH_SCOPE, GitHubRepo, PullInfo
from bot.present.posted import (
    APPROVED_MARKER,
    REAPPROVE_MARKER,
    approved_comment,
    not_approved_comment,
    reapproval_comment,
)
from bot.service.approval import command_approval
from bot.service.comments import StickyComments
from bot.service.events import (
    CheckRunRequested,
    LabelAdded,
    LabelRemoved,
    PullClosed,
    PullUpdated,
    SyncCommand,
    WorkflowRunCompleted,
)
from bot.service.handlers.common import (
    TRIAGE_OR_MORE,
    acknowledge,
    benchmark_only,
    refused,
    request_sync,
    role,
)
from bot.service.runtime import Runtime
from bot.state.records import Approval


@benchmark_only
def on_label_added(rt: Runtime, event: LabelAdded) -> str:
    gh = rt.connector.repo(event.repo, BENCH_SCOPE)
    if role(gh, event.sender) not in TRIAGE_OR_MORE:
        return f"label by {event.sender} ignored: needs triage permission or more"
    approval = Approval(event.head_sha, event.sender, event.is_fork)
    return request_sync(rt, event.repo, event.pr_number, approval)


@benchmark_only
def on_label_removed(rt: Runtime, event: LabelRemoved) -> str:
    rt.store.syncs.revoke_approval(event.repo, event.pr_number)
    return "approval withdrawn"


@benchmark_only
def on_pull_updated(rt: Runtime, event: PullUpdated) -> str:
    sync = rt.store.syncs.find(event.repo, event.pr_number)
    if not event.is_fork:
        return request_sync(
            rt, event.repo, event.pr_number, Approval(event.head_sha, "label", False)
        )
    if sync is not None and sync.approved_sha == event.head_sha:
        return request_sync(rt, event.repo, event.pr_number, None)
    return _require_reapproval(rt, event, sync.approved_sha if sync else None)


def on_benchmark_closed(rt: Runtime, event: PullClosed) -> str:
    """Closed unmerged: its open alignment PRs are retired by one more sync."""
    if event.merged:
        return "merged: alignment PRs stay for the recipes maintainers"
    records = rt.store.alignments.for_bench_pr(event.repo, event.pr_number)
    if not any(r.state.is_live for r in records):
        return "closed: no alignment PR to retire"
    return request_sync(rt, event.repo, event.pr_number, None, require_approval=False)


@benchmark_only
def on_sync_command(rt: Runtime, event: SyncCommand) -> str:
    gh = rt.connector.repo(event.repo, BENCH_SCOPE)
    refusal = refused(rt, gh, event, rt.policy.comment_command)
    if refusal is not None:
        return refusal
    acknowledge(rt, event)
    current = gh.pull(event.pr_number)
    if current.state != "open":
        return "command on a closed PR ignored"
    return _approve_by_command(rt, gh, event, current)


def on_benchmark_run(rt: Runtime, event: WorkflowRunCompleted) -> str:
    """A run completed: the PRs whose approved head it ran on are synced again."""
    numbers = list(event.pr_numbers) or _fork_run_prs(rt, event)
    return _resync_at(rt, event.repo, numbers, event.head_sha) or "no approved PR at this head"


@benchmark_only
def on_check_run(rt: Runtime, event: CheckRunRequested) -> str:
    numbers = list(event.pr_numbers)
    if not numbers:
        found = rt.store.conversation.pr_of_check_run(event.repo, event.check_run_id)
        numbers = [found] if found is not None else []
    resynced = _resync_at(rt, event.repo, numbers, event.head_sha)
    return resynced or "check run of an unapproved or unknown head"


def _resync_at(rt: Runtime, repo: str, numbers: list[int], head_sha: str) -> str:
    """Sync again each PR of ``numbers`` whose approved head is ``head_sha``."""
    outcomes = []
    for number in numbers:
        sync = rt.store.syncs.find(repo, number)
        if sync is not None and sync.approved_sha == head_sha:
            outcomes.append(request_sync(rt, repo, number, None))
    return "; ".join(outcomes)


def _approve_by_command(rt: Runtime, gh: GitHubRepo, event: SyncCommand, current: PullInfo) -> str:
    """Approve the head the command was written for (:mod:`bot.service.approval`) and say
    which one; on a fork PR (or a command naming a commit) the reply names it."""
    decided = command_approval(current, event.named_sha, event.commented_at)
    command = rt.policy.comment_command
    stickies = StickyComments(gh, rt.store, rt.connector.bot_login())
    if decided.sha is None:
        stickies.upsert(
            event.pr_number,
            "reapprove",
            REAPPROVE_MARKER,
            not_approved_comment(current.head_sha, event.named_sha, decided.reason, command),
        )
        return f"head {current.head_sha[:12]} not approved by the command ({decided.reason})"
    if current.is_fork or event.named_sha:
        stickies.upsert(
            event.pr_number,
            "approved",
            APPROVED_MARKER,
            approved_comment(decided.sha, decided.reason, event.sender, command),
        )
    approval = Approval(decided.sha, event.sender, current.is_fork)
    return request_sync(rt, event.repo, event.pr_number, approval, dry_run=event.dry_run)


def _fork_run_prs(rt: Runtime, event: WorkflowRunCompleted) -> list[int]:
    """PRs a run without ``pull_requests`` (a fork's) belongs to: an approved PR whose head
    is the run's head SHA on the run's head branch."""
    candidates = [s.pr_number for s in rt.store.syncs.approved_at(event.repo, event.head_sha)]
    if not candidates:
        return []
    gh = rt.connector.repo(event.repo, BENCH_SCOPE)
    matched = []
    for number in candidates:
        pr = gh.pull(number)
        if pr.head_sha == event.head_sha and pr.head_ref == event.head_ref:
            matched.append(number)
    return matched


def _require_reapproval(rt: Runtime, event: PullUpdated, approved: str | None) -> str:
    rt.store.syncs.revoke_approval(event.repo, event.pr_number)
    gh = rt.connector.repo(event.repo, BENCH_SCOPE)
    gh.remove_label(event.pr_number, rt.policy.trigger_label)
    StickyComments(gh, rt.store, rt.connector.bot_login()).upsert(
        event.pr_number,
        "reapprove",
        REAPPROVE_MARKER,
        reapproval_comment(
            approved, event.head_sha, rt.policy.trigger_label, rt.policy.comment_command
        ),
    )
    return "fork push: approval withdrawn, label removed, re-approval requested"
