"""The comment command grammar: one table of the forms ``/recipe-sync …`` takes.

Only a comment's first line is read. The first form whose pattern matches the whole line
decides; a line that no form matches is not a command. The hunk forms come before the sync
form, so ``/recipe-sync drop`` without a subject reads as the sync form with an unknown
argument (and is refused as such).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from bot.service.events import (
    AddHunk,
    DropHunk,
    Event,
    Ignored,
    KeepHunk,
    SyncCommand,
)

COMMIT = re.compile(r"^[0-9a-fA-F]{7,40}$")  # the head a command approves, as the PR shows it

# what a hunk command names: a flag (``--moe-backend``), an env var, ``image``, or a GPU's
# verification mark (``meta.hardware.b200``)
SUBJECT = re.compile(
    r"^(--[A-Za-z0-9][A-Za-z0-9._-]*|[A-Za-z_][A-Za-z0-9_]*|meta\.hardware\.[a-z0-9][a-z0-9_-]*)$"
)
MAX_SUBJECT = 200


class Comment(Protocol):
    """A command comment as intake reads it. The payload fields are read only once a form
    matched (and in this order), so a comment that is no command is ignored, not refused,
    whatever else its payload lacks."""

    repo: str
    action: str
    sender: str

    def pr_number(self) -> int: ...

    def comment_id(self) -> int: ...

    def commented_at(self) -> str: ...


Reader = Callable[[re.Match[str], Comment], Event | Ignored]


@dataclass(frozen=True)
class CommandForm:
    usage: str  # after the command word, as the help and the docs show it
    pattern: str  # regex after the command word (the whole line must match)
    read: Reader


def _hunk(event: type[DropHunk | KeepHunk | AddHunk]) -> Reader:
    def read(match: re.Match[str], comment: Comment) -> Event | Ignored:
        subject = match.group(1)
        if not SUBJECT.match(subject) or len(subject) > MAX_SUBJECT:
            named = f"'{subject[:40]}'"
            return Ignored(f"{named} is not a flag, an environment variable or meta.hardware.GPU")
        return event(
            repo=comment.repo,
            action=comment.action,
            sender=comment.sender,
            pr_number=comment.pr_number(),
            comment_id=comment.comment_id(),
            subject=subject,
        )

    return read


def _sync(match: re.Match[str], comment: Comment) -> Event | Ignored:
    arguments = match.group(1).split()
    named = [a for a in arguments if COMMIT.match(a)]
    unknown = [a for a in arguments if a != "dry-run" and not COMMIT.match(a)]
    if unknown or len(named) > 1 or arguments.count("dry-run") > 1:
        what = (unknown or arguments)[-1][:40]
        return Ignored(f"unknown command argument '{what}'")
    return SyncCommand(
        repo=comment.repo,
        action=comment.action,
        sender=comment.sender,
        pr_number=comment.pr_number(),
        comment_id=comment.comment_id(),
        dry_run="dry-run" in arguments,
        named_sha=named[0].lower() if named else "",
        commented_at=comment.commented_at(),
    )


GRAMMAR: tuple[CommandForm, ...] = (
    CommandForm("drop <flag>", r"\s+drop\s+(\S+)", _hunk(DropHunk)),
    CommandForm("keep <flag>", r"\s+keep\s+(\S+)", _hunk(KeepHunk)),
    CommandForm("add <flag>", r"\s+add\s+(\S+)", _hunk(AddHunk)),
    # ``dry-run`` and a commit SHA, in any order, each at most once
    CommandForm("[dry-run] [<sha>]", r"((?:\s+\S+){0,2})", _sync),
)


@lru_cache(maxsize=8)
def _patterns(command: str) -> tuple[tuple[re.Pattern[str], Reader], ...]:
    return tuple(
        (re.compile(rf"^\s*{re.escape(command)}{form.pattern}\s*$"), form.read) for form in GRAMMAR
    )


def read_command(line: str, command: str, comment: Comment) -> Event | Ignored:
    """The event a comment's first line asks for, or why it asks for none."""
    for pattern, read in _patterns(command):
        match = pattern.match(line)
        if match is not None:
            return read(match, comment)
    return Ignored("comment is not a command")
