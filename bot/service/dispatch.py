"""Event → its handler (the ``handle_delivery`` job): :data:`HANDLERS` is the table.

Approval is tied to a head SHA:

* ``pull_request.labeled`` with the trigger label, by someone with triage permission or more
  (checked through the collaborators permission API), approves the labelled head.
* ``/recipe-sync [dry-run] [<sha>]`` by someone with write permission approves the commit
  it names, or without one the current head (on a fork PR only if it was pushed at least a
  minute before the comment: :mod:`bot.service.approval`); the reply names the commit;
  anyone else gets ONE polite refusal reply per PR (then silence), bots are ignored.
* ``/recipe-sync drop <flag>`` (``keep`` undoes it) by someone with write permission on an
  alignment PR records that hunk as declined for that PR's recipe file (on a benchmark PR:
  for every recipe file it aligns) and syncs the benchmark PR again, whose next update leaves
  it out; the same refusal rule applies.
* ``synchronize`` / ``reopened`` / ``opened`` / ``ready_for_review`` on a labelled PR from
  the same repository approves the new head (whoever can push there has write access).
* **Fork PRs: a new push needs re-approval.** On ``synchronize`` of a labelled fork PR the
  bot removes the trigger label, posts one sticky note saying a maintainer must apply it
  again, and does nothing else: no fetch, no engine run, no check run on the new head.
* ``unlabeled`` withdraws the approval; ``closed`` unmerged retires the PR's alignment PRs.
* ``workflow_run`` completed refreshes the evidence of the PR whose approved head it ran on
  (matched by the run's ``pull_requests``, or for fork runs by head SHA [+ branch]); a run on
  an alignment branch refreshes the benchmark PR it came from.
* ``check_run`` rerequested / "Re-check" re-runs the PR the check run belongs to.
* ``installation`` / ``installation_repositories`` (any action) drop the cached installation
  ids and tokens of that installation, so the next job looks them up again.
* ``issues`` edited on the bot's dashboard issue by someone with write permission: ticked
  "ignore" boxes are recorded in the store (unticked ones dropped), a ticked "re-run" box
  syncs again every benchmark PR that has an alignment PR for that recipe file, then the
  dashboard is refreshed (which unticks the "re-run" boxes, as Renovate's dashboard does).

Every path only records intent atomically in the store and enqueues at most one sync per
PR; the sync job itself re-reads the PR and aborts if its head is not the approved one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, assert_never

from bot.service.events import (
    AddHunk,
    CheckRunRequested,
    DashboardEdited,
    DropHunk,
    Event,
    InstallationChanged,
    KeepHunk,
    LabelAdded,
    LabelRemoved,
    PullClosed,
    PullUpdated,
    RebaseRequested,
    SyncCommand,
    WorkflowRunCompleted,
)
from bot.service.handlers.alignment import on_alignment_event
from bot.service.handlers.benchmark import (
    on_benchmark_closed,
    on_benchmark_run,
    on_check_run,
    on_label_added,
    on_label_removed,
    on_pull_updated,
    on_sync_command,
)
from bot.service.handlers.choices import on_dashboard_edit, on_hunk_command
from bot.service.runtime import Runtime

Handler = Callable[[Runtime, Any], str]


def on_installation(rt: Runtime, event: InstallationChanged) -> str:
    rt.connector.forget_installation(event.installation_id)
    return f"installation {event.installation_id} {event.action}: its cached tokens dropped"


def on_pull_closed(rt: Runtime, event: PullClosed) -> str:
    if event.repo == rt.settings.recipes_repo:
        return on_alignment_event(rt, event)
    return on_benchmark_closed(rt, event)


def on_rebase(rt: Runtime, event: RebaseRequested) -> str:
    if event.repo == rt.settings.recipes_repo:
        return on_alignment_event(rt, event)
    return f"{event.kind} in {event.repo}: nothing to do"


def on_workflow_run(rt: Runtime, event: WorkflowRunCompleted) -> str:
    if event.repo == rt.settings.recipes_repo:
        return on_alignment_event(rt, event)
    return on_benchmark_run(rt, event)


# Which handler each event reaches: the table the docs print and a test holds complete.
HANDLERS: dict[type[Event], Handler] = {
    InstallationChanged: on_installation,
    LabelAdded: on_label_added,
    LabelRemoved: on_label_removed,
    PullUpdated: on_pull_updated,
    PullClosed: on_pull_closed,
    RebaseRequested: on_rebase,
    SyncCommand: on_sync_command,
    DropHunk: on_hunk_command,
    AddHunk: on_hunk_command,
    KeepHunk: on_hunk_command,
    DashboardEdited: on_dashboard_edit,
    WorkflowRunCompleted: on_workflow_run,
    CheckRunRequested: on_check_run,
}


def dispatch(rt: Runtime, event: Event) -> str:
    """Act on one event; returns a one-line account for the delivery log."""
    # a renamed repository's webhooks carry its new name; records keep the one first known
    known = rt.store.names.known(event.repo)
    if known != event.repo:
        event = replace(event, repo=known)
    # a match, not a lookup in HANDLERS: mypy checks it is exhaustive and each call typed
    match event:
        case InstallationChanged():
            return on_installation(rt, event)
        case LabelAdded():
            return on_label_added(rt, event)
        case LabelRemoved():
            return on_label_removed(rt, event)
        case PullUpdated():
            return on_pull_updated(rt, event)
        case PullClosed():
            return on_pull_closed(rt, event)
        case RebaseRequested():
            return on_rebase(rt, event)
        case SyncCommand():
            return on_sync_command(rt, event)
        case DropHunk() | AddHunk() | KeepHunk():
            return on_hunk_command(rt, event)
        case DashboardEdited():
            return on_dashboard_edit(rt, event)
        case WorkflowRunCompleted():
            return on_workflow_run(rt, event)
        case CheckRunRequested():
            return on_check_run(rt, event)
        case _:
            assert_never(event)
