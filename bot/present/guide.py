"""Texts about the recipe guide: the reproduction sections an alignment writes and the
hand-written guide commands that drift from the launch line (PR body and comment)."""

from __future__ import annotations

from collections.abc import Sequence

from bot import markdown as md
from bot.align.guide_images import ImageLine
from bot.align.reproduction import GuideDrift, GuidePlacement, ReproCommand
from bot.align.reproduction.sections import IN_RECIPE
from bot.align.result import RecipeOutcome
from bot.present.sections.common import code, details
from bot.vllm import FlagDiff
from bot.words import count

ACTIONS = {
    "inserted": "adds",
    "updated": "updates",
    "adopted": "adopts (replaces in place)",
    "unchanged": "keeps (unchanged)",
}


def _command_summary(command: ReproCommand) -> str:
    parts = [f"{md.text(command.topology)}, {md.text(command.arm)},"]
    if command.router is not None:
        parts.append("with the router command")
    if command.conc_rules:
        parts.append(
            "with "
            + ", ".join(f"{code(flag)} = {md.text(rule)}" for flag, rule in command.conc_rules)
        )
    if command.conc_values:
        parts.append(
            ("and " if command.conc_rules else "with ")
            + ", ".join(code(flag) for flag, _, _ in command.conc_values)
            + " per concurrency"
        )
    return " ".join(parts).rstrip(",")


def placement_lines(placements: Sequence[GuidePlacement]) -> list[str]:
    """One bullet per reproduction section: what happened, where, and what it carries."""
    out: list[str] = []
    for placed in placements:
        section = placed.section
        if placed.action == "skipped":
            out.append(
                f"- Reproduction section {code(section.heading)} not written: "
                f"{md.text(placed.reason)}."
            )
            continue
        commands = "; ".join(_command_summary(c) for c in section.commands)
        deltas = sorted({d for c in section.commands for _, d in c.deltas})
        benchmark_only = sorted(
            {name for c in section.commands for cls, name, _ in c.env if cls != IN_RECIPE}
        )
        evidence = " and the eval evidence" if section.evidence else ""
        line = (
            f"- The guide {ACTIONS.get(placed.action, placed.action)} the managed section "
            f"{code(section.heading)} ({md.text(placed.where)}) for {commands}"
        )
        by_class: dict[str, int] = {}
        for command in section.commands:
            for cls, _ in command.deltas:
                by_class[cls] = by_class.get(cls, 0) + 1
        exports = ", ".join(code(n) for n in benchmark_only)
        if deltas:
            counts = ", ".join(f"{n} {cls}" for cls, n in sorted(by_class.items()))
            also = f"; env {exports}" if exports else ""
            line += (
                f": its deltas from the recipe's command ({counts}{also}), the image{evidence}; "
                "they stay there, not in the recipe."
            )
        elif exports:
            line += f": its exports {exports}, the image{evidence}; not in the recipe."
        else:
            line += f": the image{evidence}; the recipe's command already matches it."
        out.append(line)
    return out


# settings a drifted guide command's bullet names inline; more are listed folded below it
# (#2487's bullet ran to 10 settings and ~200 words, a JSON connector config among them)
DRIFT_INLINE = 3


def _drift_setting(diff: FlagDiff) -> str:
    bench = code(" ".join(diff.bench_tokens)) if diff.bench_tokens else "omits it"
    guide = code(" ".join(diff.recipe_tokens)) if diff.recipe_tokens else "omits it"
    return f"{code(diff.flag)}: the benchmark {bench}, the guide {guide}"


def drift_lines(drift: Sequence[GuideDrift], policy: str) -> list[str]:
    """Bullets for hand-written guide commands that differ from the launch line; past
    :data:`DRIFT_INLINE` settings the differences are folded under the bullet."""
    out: list[str] = []
    for item in drift:
        if item.managed or not item.drifted:
            continue
        action = (
            "replaced by the managed section (policy guide_sections: adopt)"
            if policy == "adopt" and item.cites_benchmark
            else "not rewritten (hand-written; policy guide_sections: report)"
        )
        folded = len(item.diffs) > DRIFT_INLINE
        settings = count(len(item.diffs), "setting")
        shown = f"{settings} differ" if folded else "; ".join(map(_drift_setting, item.diffs))
        line = (
            f"- Guide command under {code(item.heading or '(no heading)')} (line {item.line}) "
            f"vs {code(item.key)} {md.text(item.point)}: {shown}; {action}."
        )
        if item.not_compared:
            line += (
                " Not compared (shell variables in the guide): "
                + ", ".join(code(f) for f in item.not_compared)
                + "."
            )
        out.append(line)
        if folded:
            summary = f"The {settings} the guide command at line {item.line} differs in"
            out += ["", *details(summary, [f"- {_drift_setting(d)}" for d in item.diffs])]
    return out


def image_lines(found: Sequence[ImageLine]) -> list[str]:
    """Guide lines naming an image the patch re-pins: the ones updated, and the ones left for
    a maintainer (with why)."""
    out: list[str] = []
    updated = [i for i in found if i.new is not None]
    left = [i for i in found if i.new is None]
    if updated:
        out.append(
            "- Guide lines re-pinned with the image: "
            + "; ".join(f"line {i.line} ({code(i.old)} → {code(i.new)})" for i in updated)
            + "."
        )
    if left:
        out.append(
            "- Guide lines naming the old image left for a maintainer: "
            + "; ".join(f"line {i.line} ({code(i.old)}: {md.text(i.why)})" for i in left)
            + "."
        )
    return out


def guide_section(outcome: RecipeOutcome, policy: str) -> list[str]:
    """The PR body's / comment's "Guide" part (empty when the guide is not involved)."""
    lines = placement_lines(outcome.guide) + drift_lines(outcome.guide_drift, policy)
    lines += image_lines(outcome.guide_images)
    if not lines:
        return []
    return ["### Guide", "", *lines]
