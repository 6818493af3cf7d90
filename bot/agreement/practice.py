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
from typing import Any

from bot.agreement.proposals import Proposal, Replay
from bot.agreement.score import LinkedChange
from bot.agreement.taxonomy import Taxonomy
from bot.align.confidence import change_of


@dataclass(frozen=True)
class ClassPractice:
    knob: str
    placements: tuple[tuple[str, int], ...]  # (placement, linked leaves), most first
    linked: int  # linked leaves of this class (moves and removals left out)
    proposed: int  # distinct bot proposals of this class with history after them
    adopted: int  # of which maintainers made the same value (any node)


@dataclass(frozen=True)
class KindPractice:
    """Scored proposals of one kind (knob class / change / vendor): what the engine's
    adoption estimate (bot.align.confidence) reads."""

    key: str
    proposed: int
    adopted: int
    authors: int  # distinct authors of the adopting commits


@dataclass(frozen=True)
class Practice:
    source: str  # what history it was computed from, in words
    command: str  # the command that computes it
    classes: tuple[ClassPractice, ...]
    kinds: tuple[KindPractice, ...] = ()


def practice(
    proposals: Sequence[Proposal],
    linked: Sequence[LinkedChange],
    source: str,
    command: str,
    *,
    replays: Sequence[Replay] = (),
    taxonomy: Taxonomy | None = None,
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
    return Practice(source, command, tuple(classes), _kinds(scored, replays, taxonomy))


def _kinds(
    scored: dict[str, list[Proposal]], replays: Sequence[Replay], taxonomy: Taxonomy | None
) -> tuple[KindPractice, ...]:
    """Counts per ``knob/change/vendor`` and per ``knob/change/any``."""
    rows = {replay.row.number: replay.row for replay in replays}
    counts: dict[str, list[Proposal]] = {}
    for knob, mine in scored.items():
        for proposal in mine:
            change = change_of(proposal.edit.kind, proposal.edit.before, proposal.edit.node)
            vendor = _vendor(proposal, rows, taxonomy)
            for key in (f"{knob}/{change}/{vendor or 'any'}", f"{knob}/{change}/any"):
                counts.setdefault(key, []).append(proposal)
    out = []
    for key in sorted(counts):
        found = list({id(p): p for p in counts[key]}.values())
        adopted = [p for p in found if p.adopted]
        authors = {m.commit.author for p in adopted for m in p.matches if m.commit.author}
        out.append(KindPractice(key, len(found), len(adopted), len(authors)))
    return tuple(out)


def _vendor(proposal: Proposal, rows: dict[int, Any], taxonomy: Taxonomy | None) -> str:
    """The brand of the GPUs the proposal's lanes ran on ("" when several or unknown)."""
    if taxonomy is None:
        return ""
    gpus = taxonomy.gpus_of_scope(proposal.leaves[0].scope) if proposal.leaves else None
    if gpus is None:
        gpus = frozenset(
            digest.hardware
            for number in proposal.prs
            if number in rows
            for digest in rows[number].launches
            if digest.recipe == proposal.edit.recipe
        )
    brands = {taxonomy.gpus[g].brand for g in gpus if g in taxonomy.gpus}
    return brands.pop() if len(brands) == 1 else ""


def to_yaml(found: Practice) -> str:
    """The practice file: a header saying how to remake it, then one block per class."""
    lines = [
        "# Where recipe maintainers put the settings of changes linked to benchmark PRs, and how",
        "# often they adopted recipe-sync's proposals, per knob class (rules/knobs.yaml).",
        f"# Computed from {found.source}.",
        "# Regenerated by the command below, never edited by hand (the recipes corpus snapshot",
        "# is never an input: it shows recipes after the weeks the score holds out):",
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
    if found.kinds:
        lines.append("kinds:  # knob class / what the edit changes / vendor (or any)")
        for kind in found.kinds:
            lines.append(
                f"  {_quoted(kind.key)}: {{proposed: {kind.proposed}, adopted: {kind.adopted}, "
                f"authors: {kind.authors}}}"
            )
    return "\n".join(lines) + "\n"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
