"""The texts of one alignment run (what :func:`bot.present.report.present` returns)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.contract import Annotation
from bot.present.consistency import Finding
from bot.present.posted import PullMeta, pull_request_body


@dataclass(frozen=True)
class PullRequestText:
    title: str
    body: str  # the alignment PR's text, between the metadata line and the footer
    meta: PullMeta  # the hidden metadata line's state
    footer: str

    @property
    def full_body(self) -> str:
        """The PR body as posted (the App) and written (``recipe-sync align``)."""
        return pull_request_body(self.meta, self.body, self.footer)


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
    # recipe path → what its PR's texts contradict (a recipe-sync bug; the body says so too)
    findings: Mapping[str, tuple[Finding, ...]] = field(default_factory=dict)
