"""What the recipes history says maintainers do, computed from a scorecard (issue #24 item 5).

Per knob class: where maintainers placed the leaves of changes linked to benchmark PRs
(variant x GPU, generation, …) and how often they adopted the bot's proposals of that class.
``recipe-sync score --practice FILE`` writes it as YAML (``rules/practice.yaml``); the PR
text quotes it for each edit ("maintainers placed kernel settings at variant × GPU in 9 of
14 linked changes"), so the practice behind an edit is a number anyone can recompute.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bot.agreement.score import LinkedChange, Proposal


@dataclass(frozen=True)
class ClassPractice:
    knob: str
    placements: tuple[tuple[str, int], ...]  # (placement, linked leaves), most first
    linked: int  # linked leaves of this class (moves and removals left out)
    proposed: int  # distinct bot proposals of this class with history after them
    adopted: int  # of which maintainers made the same value (any node)


@dataclass(frozen=True)
class Practice:
    source: str  # what history it was computed from, in words
    command: str  # the command that computes it
    classes: tuple[ClassPractice, ...]


def practice(
    proposals: Sequence[Proposal], linked: Sequence[LinkedChange], source: str, command: str
) -> Practice:
    placed: dict[str, Counter[str]] = {}
    for change in linked:
        for verdict in change.leaves:
            if verdict.removed:
                continue
            placed.setdefault(verdict.knob, Counter())[verdict.placement] += 1
    scored: dict[str, list[Proposal]] = {}
    for proposal in proposals:
        if proposal.outcome != "too recent":
            scored.setdefault(proposal.knob, []).append(proposal)
    classes = []
    for knob in sorted({*placed, *scored}):
        counts = placed.get(knob, Counter())
        mine = scored.get(knob, [])
        classes.append(
            ClassPractice(
                knob,
                tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0]))),
                sum(counts.values()),
                len(mine),
                sum(1 for p in mine if p.adopted),
            )
        )
    return Practice(source, command, tuple(classes))


def to_yaml(found: Practice) -> str:
    """The practice file: a header saying how to remake it, then one block per class."""
    lines = [
        "# Where recipe maintainers put the settings of changes linked to benchmark PRs, and how",
        "# often they adopted recipe-sync's proposals, per knob class (rules/knobs.yaml).",
        "# Computed, never edited by hand; remake it with:",
        f"#   {found.command}",
        f"source: {_quoted(found.source)}",
        "classes:",
    ]
    for entry in found.classes:
        lines.append(f"  {entry.knob}:")
        lines.append(f"    linked: {entry.linked}")
        if entry.placements:
            lines.append("    placements:")
            lines += [f"      {_quoted(name)}: {count}" for name, count in entry.placements]
        lines.append(f"    proposed: {entry.proposed}")
        lines.append(f"    adopted: {entry.adopted}")
    return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
