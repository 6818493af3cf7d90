"""What a webhook delivery asks the service to do: one frozen type per event.

Intake (:mod:`bot.service.intake`) turns a verified payload into one of these or an
``Ignored`` with its reason; each carries only the fields its handler needs, none of its
identity optional. The delivery row stores the event as JSON (``kind`` names the type) and
the ``handle_delivery`` job reads it back with :func:`event_from_json`; an event is a prompt,
not state to apply: handlers re-read what they need from the API.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

import orjson


@dataclass(frozen=True, kw_only=True)
class Delivered:
    """Who sent what where: the part every event shares."""

    repo: str
    action: str
    sender: str = ""

    @property
    def serial_key(self) -> str:
        """What must not run concurrently: one PR or issue, or one repository."""
        return self.repo


@dataclass(frozen=True, kw_only=True)
class OnIssue(Delivered):
    """An event about one pull request (or, for the dashboard, one issue)."""

    pr_number: int

    @property
    def serial_key(self) -> str:
        return f"{self.repo}#{self.pr_number}"


@dataclass(frozen=True, kw_only=True)
class PullEvent(OnIssue):
    """A ``pull_request`` event: the head it concerns."""

    head_sha: str
    head_ref: str
    head_repo: str
    is_fork: bool


@dataclass(frozen=True, kw_only=True)
class InstallationChanged(Delivered):
    """The App was (un)installed or its repositories changed: forget cached tokens."""

    kind: Literal["installation"] = field(default="installation", init=False)
    installation_id: int


@dataclass(frozen=True, kw_only=True)
class LabelAdded(PullEvent):
    """The trigger label was applied: approve the labelled head."""

    kind: Literal["label_added"] = field(default="label_added", init=False)


@dataclass(frozen=True, kw_only=True)
class LabelRemoved(PullEvent):
    """The trigger label was removed: approval withdrawn."""

    kind: Literal["label_removed"] = field(default="label_removed", init=False)


@dataclass(frozen=True, kw_only=True)
class PullUpdated(PullEvent):
    """opened / reopened / synchronize / ready_for_review on a labelled PR."""

    kind: Literal["pr_updated"] = field(default="pr_updated", init=False)


@dataclass(frozen=True, kw_only=True)
class PullClosed(PullEvent):
    """A benchmark PR or an alignment PR was closed."""

    kind: Literal["pr_closed"] = field(default="pr_closed", init=False)
    merged: bool


@dataclass(frozen=True, kw_only=True)
class RebaseRequested(PullEvent):
    """The rebase label was put on a pull request (an alignment PR's is acted on)."""

    kind: Literal["rebase"] = field(default="rebase", init=False)


@dataclass(frozen=True, kw_only=True)
class CommentCommand(OnIssue):
    """A command comment on a pull request, by a user (bots are ignored at intake)."""

    comment_id: int


@dataclass(frozen=True, kw_only=True)
class SyncCommand(CommentCommand):
    """``/recipe-sync [dry-run] [<sha>]``: approve a head and sync."""

    kind: Literal["command"] = field(default="command", init=False)
    dry_run: bool
    named_sha: str  # the commit the command approves (lower-case hex), "" for the head
    commented_at: str  # GitHub's comment.created_at (the head it approves)


@dataclass(frozen=True, kw_only=True)
class HunkCommand(CommentCommand):
    """``/recipe-sync drop|keep|add <subject>``: a maintainer's choice of one hunk."""

    subject: str  # a flag (``--moe-backend``), an environment variable, or ``image``


@dataclass(frozen=True, kw_only=True)
class DropHunk(HunkCommand):
    """Leave a hunk out of the alignment PRs."""

    kind: Literal["drop"] = field(default="drop", init=False)


@dataclass(frozen=True, kw_only=True)
class AddHunk(HunkCommand):
    """Propose a candidate the adoption estimate left out."""

    kind: Literal["add"] = field(default="add", init=False)


@dataclass(frozen=True, kw_only=True)
class KeepHunk(HunkCommand):
    """Forget a drop or an add: back to recipe-sync's own judgement."""

    kind: Literal["keep"] = field(default="keep", init=False)


@dataclass(frozen=True, kw_only=True)
class DashboardEdited(OnIssue):
    """Someone edited the bot's dashboard issue (``pr_number`` is the issue's number)."""

    kind: Literal["dashboard_edit"] = field(default="dashboard_edit", init=False)


@dataclass(frozen=True, kw_only=True)
class WorkflowRunCompleted(Delivered):
    """A workflow run completed: refresh the evidence of the PR it ran on."""

    kind: Literal["workflow_run"] = field(default="workflow_run", init=False)
    run_id: int
    run_attempt: int
    head_sha: str
    head_ref: str
    head_repo: str
    pr_numbers: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class CheckRunRequested(Delivered):
    """Our check run was re-requested or its "Re-check" button clicked."""

    kind: Literal["check_run"] = field(default="check_run", init=False)
    check_run_id: int
    head_sha: str
    external_id: str
    pr_numbers: tuple[int, ...]


Event = (
    InstallationChanged
    | LabelAdded
    | LabelRemoved
    | PullUpdated
    | PullClosed
    | RebaseRequested
    | SyncCommand
    | DropHunk
    | AddHunk
    | KeepHunk
    | DashboardEdited
    | WorkflowRunCompleted
    | CheckRunRequested
)

EVENT_TYPES: tuple[type[Event], ...] = get_args(Event)

BY_KIND: dict[str, type[Event]] = {cls.kind: cls for cls in EVENT_TYPES}


@dataclass(frozen=True)
class Ignored:
    """A delivery that asks nothing of the service, and why."""

    reason: str


def event_json(event: Event) -> str:
    """The event as its delivery row keeps it (``kind`` names its type)."""
    # orjson and the instance's own fields: json.dumps(asdict(…)) was ~5% of the ack; the
    # kind is a class-level default, not in the instance's __dict__
    return orjson.dumps({**vars(event), "kind": event.kind}, option=orjson.OPT_SORT_KEYS).decode()


def event_from_json(text: str) -> Event:
    """The event a delivery row stored (keys of other kinds, as older rows hold, are left)."""
    data: dict[str, Any] = json.loads(text)
    cls = BY_KIND[data["kind"]]
    known = {f.name for f in fields(cls) if f.init}
    values = {k: v for k, v in data.items() if k in known}
    if "pr_numbers" in values:
        values["pr_numbers"] = tuple(values["pr_numbers"])
    return cls(**values)
