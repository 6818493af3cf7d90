"""Webhook payload → :data:`~bot.service.events.Event` or :class:`Ignored` (pure).

The web endpoint runs :func:`classify` on every verified delivery: events and actions outside
the allow-list, our own comments and check runs (self-loop guard), and events that cannot
concern us (another label, a comment that is not a command, an unlabelled PR) are ignored
there and never enqueued. What remains is stored as a small JSON event; the job re-reads
the state it needs from the API (an event is a prompt, not state to apply). The command
grammar is :mod:`bot.service.grammar`.
"""

from __future__ import annotations

from typing import Any

from bot.errors import RecipeSyncError
from bot.present.posted import DASHBOARD_MARKER, REBASE_LABEL
from bot.service.events import (
    CheckRunRequested,
    DashboardEdited,
    Event,
    Ignored,
    InstallationChanged,
    LabelAdded,
    LabelRemoved,
    PullClosed,
    PullUpdated,
    RebaseRequested,
    WorkflowRunCompleted,
)
from bot.service.grammar import read_command

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


class PayloadError(RecipeSyncError):
    """A verified delivery whose payload lacks a field we need."""


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


class _Comment:
    """A comment payload's command fields, read when a grammar form asks for them."""

    def __init__(self, payload: Any, repo: str, action: str, sender: str) -> None:
        self.payload = payload
        self.repo = repo
        self.action = action
        self.sender = sender

    def pr_number(self) -> int:
        return _number(_get(self.payload, "issue.number"), "issue.number")

    def comment_id(self) -> int:
        return _int(_get(self.payload, "comment.id"), "comment.id")

    def commented_at(self) -> str:
        return _text(_opt(self.payload, "comment.created_at"), "comment.created_at", empty_ok=True)


def classify(
    event: str, payload: Any, *, trigger_label: str, comment_command: str, bot_login: str
) -> Event | Ignored:
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
        return InstallationChanged(
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
    if installation is not None:  # not kept, but a signed payload of the wrong type is a 400
        _int(installation, "installation.id")
    if event == "pull_request":
        return _pull_request(payload, repo, action, sender, trigger_label)
    if event == "issues":
        if sender == bot_login or sender_type == "Bot":
            return Ignored("issue edited by a bot (self-loop guard)")
        if str(_opt(payload, "issue.user.login", "")) != bot_login:
            return Ignored("not an issue of the bot")
        if not str(_opt(payload, "issue.body", "") or "").startswith(DASHBOARD_MARKER):
            return Ignored("not the dashboard issue")
        return DashboardEdited(
            repo=repo,
            action=action,
            sender=sender,
            pr_number=_number(_get(payload, "issue.number"), "issue.number"),
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
        if not first_line:
            return Ignored("comment is not a command")
        comment = _Comment(payload, repo, action, sender)
        return read_command(first_line[0], comment_command, comment)
    if event == "workflow_run":
        run = _get(payload, "workflow_run")
        numbers = _numbers(_opt(payload, "workflow_run.pull_requests"), "pull_requests")
        return WorkflowRunCompleted(
            repo=repo,
            action=action,
            sender=sender,
            run_id=_int(_get(run, "id"), "workflow_run.id"),
            run_attempt=_int(_opt(run, "run_attempt", 1) or 1, "workflow_run.run_attempt"),
            head_sha=_text(_get(run, "head_sha"), "workflow_run.head_sha"),
            head_ref=_text(_opt(run, "head_branch"), "head_branch", empty_ok=True),
            head_repo=_text(
                _opt(run, "head_repository.full_name"), "head_repository", empty_ok=True
            ),
            pr_numbers=numbers,
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
    return CheckRunRequested(
        repo=repo,
        action=action,
        sender=sender,
        check_run_id=_int(_get(run, "id"), "check_run.id"),
        head_sha=_text(_get(run, "head_sha"), "check_run.head_sha"),
        external_id=_text(_opt(run, "external_id"), "check_run.external_id", empty_ok=True),
        pr_numbers=numbers,
    )


def _pull_request(
    payload: Any, repo: str, action: str, sender: str, trigger_label: str
) -> Event | Ignored:
    pr = _get(payload, "pull_request")
    head_repo = _text(_opt(pr, "head.repo.full_name"), "head.repo.full_name", empty_ok=True)
    base_repo = _text(_get(pr, "base.repo.full_name"), "base.repo.full_name")
    head: dict[str, Any] = {
        "repo": repo,
        "action": action,
        "sender": sender,
        "pr_number": _number(_get(pr, "number"), "pull_request.number"),
        "head_sha": _text(_get(pr, "head.sha"), "head.sha"),
        "head_ref": _text(_get(pr, "head.ref"), "head.ref"),
        "head_repo": head_repo,
        # a deleted fork has head.repo null: treat it as a fork (untrusted)
        "is_fork": head_repo != base_repo,
    }
    raw_labels = _opt(pr, "labels", [])
    labels = {
        label.get("name")
        for label in (raw_labels if isinstance(raw_labels, list) else [])
        if isinstance(label, dict)
    }
    if action in ("labeled", "unlabeled"):
        if action == "labeled" and _opt(payload, "label.name") == REBASE_LABEL:
            return RebaseRequested(**head)
        if _opt(payload, "label.name") != trigger_label:
            return Ignored("another label")
        return LabelAdded(**head) if action == "labeled" else LabelRemoved(**head)
    if action == "closed":
        return PullClosed(merged=bool(_opt(pr, "merged", False)), **head)
    if trigger_label not in labels:
        return Ignored(f"pull request is not labelled '{trigger_label}'")
    return PullUpdated(**head)
