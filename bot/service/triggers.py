"""Webhook payload → :class:`Trigger` (pure).

The web endpoint runs :func:`classify` on every verified delivery: events and actions outside
the allow-list, our own comments and check runs (self-loop guard), and events that cannot
concern us (another label, a comment that is not a command, an unlabelled PR) are ignored
there and never enqueued. What remains is stored as a small JSON trigger; the job re-reads
the state it needs from the API (an event is a prompt, not state to apply).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from typing import Any, Literal

import orjson

from bot.errors import RecipeSyncError
from bot.present.posted import DASHBOARD_MARKER, REBASE_LABEL

CHECK_NAME = "recipe-sync / alignment"
RECHECK_ACTION = "recheck"

ALLOWED: dict[str, frozenset[str]] = {
    "pull_request": frozenset(
        {"opened", "reopened", "synchronize", "labeled", "unlabeled", "closed", "ready_for_review"}
    ),
    "issue_comment": frozenset({"created"}),
    "workflow_run": frozenset({"completed"}),
    "check_run": frozenset({"rerequested", "requested_action"}),
    "issues": frozenset({"edited"}),
}

# Delivered to every App without subscribing (so not in app.yml): the installation's id or
# repositories changed, so cached installation ids and tokens are dropped.
INSTALLATION_EVENTS = frozenset({"installation", "installation_repositories"})

TriggerKind = Literal[
    "installation",  # the App was (un)installed or its repositories changed: forget caches
    "label_added",  # trigger label applied: approve the labelled head
    "label_removed",  # approval withdrawn
    "pr_updated",  # opened / reopened / synchronize / ready_for_review on a labelled PR
    "pr_closed",  # a benchmark PR or an alignment PR was closed
    "command",  # `/recipe-sync [dry-run] [<sha>]` comment
    "workflow_run",  # a run completed: refresh the evidence of the matching PR
    "check_run",  # our check run was re-requested or its "Re-check" button clicked
    "rebase",  # the rebase label was put on an alignment PR
    "dashboard_edit",  # someone edited the bot's dashboard issue (ticked a box)
    "drop",  # `/recipe-sync drop <flag>` on an alignment PR or its benchmark PR
    "keep",  # `/recipe-sync keep <flag>`: forget a drop or an add (back to the estimate)
    "add",  # `/recipe-sync add <flag>`: propose a candidate the adoption estimate left out
]


class PayloadError(RecipeSyncError):
    """A verified delivery whose payload lacks a field we need."""


@dataclass(frozen=True)
class Trigger:
    kind: TriggerKind
    repo: str
    action: str
    sender: str = ""
    pr_number: int | None = None
    head_sha: str = ""
    head_ref: str = ""
    head_repo: str = ""
    is_fork: bool = False
    merged: bool = False
    dry_run: bool = False
    comment_id: int | None = None
    run_id: int | None = None
    run_attempt: int | None = None
    pr_numbers: tuple[int, ...] = ()
    check_run_id: int | None = None
    external_id: str = ""
    installation_id: int | None = None
    subject: str = ""  # drop / keep: the flag or env var
    commented_at: str = ""  # command: GitHub's comment.created_at (the head it approves)
    named_sha: str = ""  # command: the commit `/recipe-sync <sha>` approves (lower-case hex)

    def to_json(self) -> str:
        # orjson reads the dataclass directly: json.dumps(asdict(…)) was ~5% of the ack
        return orjson.dumps(self, option=orjson.OPT_SORT_KEYS).decode()

    @classmethod
    def from_json(cls, text: str) -> Trigger:
        data = json.loads(text)
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in data.items() if k in known}
        data["pr_numbers"] = tuple(data.get("pr_numbers", ()))
        return cls(**data)

    @property
    def serial_key(self) -> str:
        """What must not run concurrently: one benchmark PR (or one repo-level event)."""
        return f"{self.repo}#{self.pr_number}" if self.pr_number is not None else self.repo


@dataclass(frozen=True)
class Ignored:
    reason: str


def _get(payload: Any, path: str) -> Any:
    node = payload
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise PayloadError(f"payload has no '{path}'")
        node = node[part]
    return node


def _opt(payload: Any, path: str, default: Any = None) -> Any:
    try:
        return _get(payload, path)
    except PayloadError:
        return default


MAX_TEXT = 255  # names, refs and SHAs; longer values are not GitHub's


def _text(value: Any, path: str, *, empty_ok: bool = False) -> str:
    """A short string field (signed payloads can still carry the wrong type: 400, not 500)."""
    if value is None and empty_ok:
        return ""
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise PayloadError(f"'{path}' is not a string of at most {MAX_TEXT} characters")
    return value


def _int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise PayloadError(f"'{path}' is not a non-negative integer")
    return value


# issue and pull request numbers are stored in 32-bit columns; GitHub's start at 1
MAX_NUMBER = 2**31 - 1


def _number(value: Any, path: str) -> int:
    """An issue or pull request number: never coerced (``int(1.5)`` would act on #1)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_NUMBER:
        shown = repr(value) if isinstance(value, int | float) else type(value).__name__
        raise PayloadError(
            f"'{path}' is not an issue or pull request number "
            f"(an integer from 1 to {MAX_NUMBER}): got {shown[:40]}"
        )
    return value


def _numbers(items: Any, path: str) -> tuple[int, ...]:
    if not isinstance(items, list):
        return ()
    return tuple(
        _number(item["number"], f"{path}.number")
        for item in items[:100]
        if isinstance(item, dict) and "number" in item
    )


def command_pattern(command: str) -> re.Pattern[str]:
    """``/recipe-sync`` and up to two arguments (``dry-run``, a commit SHA), any order."""
    return re.compile(rf"^\s*{re.escape(command)}((?:\s+\S+){{0,2}})\s*$")


COMMIT = re.compile(r"^[0-9a-fA-F]{7,40}$")  # the head a command approves, as the PR shows it


HUNK_KINDS: dict[str, TriggerKind] = {"drop": "drop", "keep": "keep", "add": "add"}


def hunk_pattern(command: str) -> re.Pattern[str]:
    """``/recipe-sync drop|keep|add <flag>``."""
    return re.compile(rf"^\s*{re.escape(command)}\s+(drop|keep|add)\s+(\S+)\s*$")


# what a dropped hunk is named by: a flag (``--moe-backend``), an env var, or ``image``
SUBJECT = re.compile(r"^(--[A-Za-z0-9][A-Za-z0-9._-]*|[A-Za-z_][A-Za-z0-9_]*)$")


def classify(
    event: str, payload: Any, *, trigger_label: str, comment_command: str, bot_login: str
) -> Trigger | Ignored:
    if not isinstance(payload, dict):  # every GitHub webhook payload is an object
        raise PayloadError(f"a JSON {type(payload).__name__}, not an object")
    if event == "ping":
        return Ignored("ping")
    action = _opt(payload, "action", "")
    if not isinstance(action, str):
        return Ignored("payload action is not a string")
    if event in INSTALLATION_EVENTS:
        installation = _int(_get(payload, "installation.id"), "installation.id")
        account = _opt(payload, "installation.account.login", "")
        return Trigger(
            kind="installation",
            # no repository: the account serialises these deliveries
            repo=_text(account, "installation.account.login", empty_ok=True) or "installation",
            action=action,
            installation_id=installation,
        )
    if event not in ALLOWED or action not in ALLOWED[event]:
        return Ignored(f"event '{event}.{action}' is not handled")
    repo = _text(_get(payload, "repository.full_name"), "repository.full_name")
    sender = _text(_opt(payload, "sender.login", ""), "sender.login", empty_ok=True)
    sender_type = _text(_opt(payload, "sender.type", ""), "sender.type", empty_ok=True)
    installation = _opt(payload, "installation.id")
    common: dict[str, Any] = {
        "repo": repo,
        "action": action,
        "sender": sender,
        "installation_id": (
            _int(installation, "installation.id") if installation is not None else None
        ),
    }
    if event == "pull_request":
        return _pull_request(payload, action, trigger_label, common)
    if event == "issues":
        if sender == bot_login or sender_type == "Bot":
            return Ignored("issue edited by a bot (self-loop guard)")
        if str(_opt(payload, "issue.user.login", "")) != bot_login:
            return Ignored("not an issue of the bot")
        if not str(_opt(payload, "issue.body", "") or "").startswith(DASHBOARD_MARKER):
            return Ignored("not the dashboard issue")
        return Trigger(
            kind="dashboard_edit",
            pr_number=_number(_get(payload, "issue.number"), "issue.number"),
            **common,
        )
    if event == "issue_comment":
        if sender == bot_login or sender_type == "Bot":
            return Ignored("comment by a bot (self-loop guard)")
        if not _opt(payload, "issue.pull_request"):
            return Ignored("comment on an issue, not a pull request")
        body = _get(payload, "comment.body")
        if not isinstance(body, str):
            raise PayloadError("'comment.body' is not a string")
        first_line = body[:1000].strip().splitlines()[:1]
        hunk = hunk_pattern(comment_command).match(first_line[0]) if first_line else None
        if hunk is not None:
            subject = hunk.group(2)
            if not SUBJECT.match(subject) or len(subject) > 200:
                return Ignored(f"'{subject[:40]}' is not a flag or an environment variable")
            return Trigger(
                kind=HUNK_KINDS[hunk.group(1)],
                pr_number=_number(_get(payload, "issue.number"), "issue.number"),
                comment_id=_int(_get(payload, "comment.id"), "comment.id"),
                subject=subject,
                **common,
            )
        match = command_pattern(comment_command).match(first_line[0]) if first_line else None
        if not match:
            return Ignored("comment is not a command")
        arguments = match.group(1).split()
        named = [a for a in arguments if COMMIT.match(a)]
        unknown = [a for a in arguments if a != "dry-run" and not COMMIT.match(a)]
        if unknown or len(named) > 1 or arguments.count("dry-run") > 1:
            what = (unknown or arguments)[-1][:40]
            return Ignored(f"unknown command argument '{what}'")
        return Trigger(
            kind="command",
            pr_number=_number(_get(payload, "issue.number"), "issue.number"),
            comment_id=_int(_get(payload, "comment.id"), "comment.id"),
            dry_run="dry-run" in arguments,
            named_sha=named[0].lower() if named else "",
            commented_at=_text(
                _opt(payload, "comment.created_at"), "comment.created_at", empty_ok=True
            ),
            **common,
        )
    if event == "workflow_run":
        run = _get(payload, "workflow_run")
        numbers = _numbers(_opt(payload, "workflow_run.pull_requests"), "pull_requests")
        return Trigger(
            kind="workflow_run",
            run_id=_int(_get(run, "id"), "workflow_run.id"),
            run_attempt=_int(_opt(run, "run_attempt", 1) or 1, "workflow_run.run_attempt"),
            head_sha=_text(_get(run, "head_sha"), "workflow_run.head_sha"),
            head_ref=_text(_opt(run, "head_branch"), "head_branch", empty_ok=True),
            head_repo=_text(
                _opt(run, "head_repository.full_name"), "head_repository", empty_ok=True
            ),
            pr_numbers=numbers,
            **common,
        )
    # check_run
    if sender == bot_login:
        return Ignored("check run event caused by the bot (self-loop guard)")
    run = _get(payload, "check_run")
    if _get(run, "name") != CHECK_NAME:
        return Ignored("not our check run")
    if action == "requested_action":
        identifier = _opt(payload, "requested_action.identifier")
        if identifier != RECHECK_ACTION:
            return Ignored(f"unknown check run action '{identifier}'")
    numbers = _numbers(_opt(run, "pull_requests"), "check_run.pull_requests")
    return Trigger(
        kind="check_run",
        check_run_id=_int(_get(run, "id"), "check_run.id"),
        head_sha=_text(_get(run, "head_sha"), "check_run.head_sha"),
        external_id=_text(_opt(run, "external_id"), "check_run.external_id", empty_ok=True),
        pr_numbers=numbers,
        **common,
    )


def _pull_request(
    payload: Any, action: str, trigger_label: str, common: dict[str, Any]
) -> Trigger | Ignored:
    pr = _get(payload, "pull_request")
    head_repo = _text(_opt(pr, "head.repo.full_name"), "head.repo.full_name", empty_ok=True)
    base_repo = _text(_get(pr, "base.repo.full_name"), "base.repo.full_name")
    fields_: dict[str, Any] = {
        "pr_number": _number(_get(pr, "number"), "pull_request.number"),
        "head_sha": _text(_get(pr, "head.sha"), "head.sha"),
        "head_ref": _text(_get(pr, "head.ref"), "head.ref"),
        "head_repo": head_repo,
        # a deleted fork has head.repo null: treat it as a fork (untrusted)
        "is_fork": head_repo != base_repo,
        **common,
    }
    raw_labels = _opt(pr, "labels", [])
    labels = {
        label.get("name")
        for label in (raw_labels if isinstance(raw_labels, list) else [])
        if isinstance(label, dict)
    }
    if action in ("labeled", "unlabeled"):
        if action == "labeled" and _opt(payload, "label.name") == REBASE_LABEL:
            return Trigger(kind="rebase", **fields_)
        if _opt(payload, "label.name") != trigger_label:
            return Ignored("another label")
        kind: TriggerKind = "label_added" if action == "labeled" else "label_removed"
        return Trigger(kind=kind, **fields_)
    if action == "closed":
        return Trigger(kind="pr_closed", merged=bool(_opt(pr, "merged", False)), **fields_)
    if trigger_label not in labels:
        return Ignored(f"pull request is not labelled '{trigger_label}'")
    return Trigger(kind="pr_updated", **fields_)
