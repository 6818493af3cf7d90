"""The texts of one alignment run (what :func:`bot.present.report.present` returns)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.contract import Annotation


@dataclass(frozen=True)
class PullRequestText:
    title: str
    body: str  # the alignment PR body, without the hidden metadata line
    meta: str  # the hidden metadata line (``<!-- recipe-sync:meta {...} -->``)

    @property
    def full_body(self) -> str:
        """What the PR body is on GitHub: the metadata line, then the body."""
        return f"{self.meta}\n{self.body}"


@dataclass(frozen=True)
class CheckRun:
    conclusion: str  # success | neutral | action_required | failure
    title: str
    summary: str
    annotations: tuple[Annotation, ...]


@dataclass(frozen=True)
class AlignTexts:
    prs: Mapping[str, PullRequestText]  # recipe path → its alignment PR (outcomes with a patch)
    comment: str  # the verification comment (the service adds marker, metadata, PR links)
    check: CheckRun
