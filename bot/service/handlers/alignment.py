"""Events on an alignment PR (in the recipes repository), found by its branch: merged or
closed unmerged (the change is declined, never proposed again), the rebase label, and
recipes CI finishing on the current alignment commit (both sync its benchmark PR again).

Merged, or closed by recipe-sync itself: the benchmark PRs whose same change it carried
(records ``duplicate`` of it) are synced again, to find their recipe aligned or open a PR
of their own. Closed unmerged by a human, they are left as they are (the change was
declined)."""

from __future__ import annotations

from typing import assert_never

from bot.service.events import PullClosed, RebaseRequested, WorkflowRunCompleted
from bot.service.handlers.common import request_sync
from bot.service.runtime import Runtime
from bot.state.records import AlignmentRecord
from bot.state.states import AlignmentState


def on_alignment_event(
    rt: Runtime, event: PullClosed | RebaseRequested | WorkflowRunCompleted
) -> str:
    record = rt.store.alignments.by_branch(event.repo, event.head_ref)
    if record is None:
        return f"{event.kind} on {event.head_ref or 'a branch'} that is not an alignment branch"
    match event:
        case PullClosed():
            return _closed(rt, event, record)
        case WorkflowRunCompleted() if record.last_pushed_sha != event.head_sha:
            return "run on an older alignment commit: ignored"
        case WorkflowRunCompleted() | RebaseRequested():
            return request_sync(rt, record.bench_repo, record.bench_pr, None)
        case _:
            assert_never(event)


def _closed(rt: Runtime, event: PullClosed, record: AlignmentRecord) -> str:
    if record.state is AlignmentState.DUPLICATE:
        # a late event about an older PR of this branch: its change is proposed elsewhere now
        return f"alignment PR #{event.pr_number} closed; its branch's change is a duplicate"
    if event.merged:
        _set_state(rt, record, AlignmentState.MERGED)
        return f"alignment PR #{event.pr_number} merged" + _resync_duplicates(
            rt, record, event.pr_number
        )
    if (
        record.state in (AlignmentState.AUTOCLOSED, AlignmentState.ABANDONED)
        or event.sender == rt.connector.bot_login()
    ):
        return "closed by recipe-sync itself" + _resync_duplicates(rt, record, event.pr_number)
    if record.fingerprint:
        rt.store.alignments.decline(
            record.recipes_repo,
            record.recipe_path,
            record.fingerprint,
            event.pr_number,
            edits_digest=record.edits_digest,
        )
    _set_state(rt, record, AlignmentState.CLOSED)
    return f"alignment PR #{event.pr_number} closed unmerged: change declined"


def _set_state(rt: Runtime, record: AlignmentRecord, state: AlignmentState) -> None:
    """Record what happened to an alignment PR (merged, closed unmerged)."""
    rt.store.alignments.save(
        bench_repo=record.bench_repo,
        bench_pr=record.bench_pr,
        recipe_path=record.recipe_path,
        recipes_repo=record.recipes_repo,
        branch=record.branch,
        state=state,
    )


def _resync_duplicates(rt: Runtime, record: AlignmentRecord, pr_number: int) -> str:
    """Sync again the benchmark PRs whose change this alignment PR carried for them."""
    synced = [
        f"{d.bench_repo}#{d.bench_pr}: " + request_sync(rt, d.bench_repo, d.bench_pr, None)
        for d in rt.store.alignments.duplicates_of(record.recipes_repo, pr_number)
    ]
    return "; duplicates synced again: " + "; ".join(synced) if synced else ""
