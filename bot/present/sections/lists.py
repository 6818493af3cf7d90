"""The collapsed lists at the end of the body: defaults one side omits, what was left alone,
and the older drift this PR did not introduce."""

from __future__ import annotations

from collections.abc import Sequence

from bot import markdown as md
from bot.align.plan import AlignmentPlan, FlagNote
from bot.present.sections.common import (
    TextBudget,
    code,
    details,
    prose,
)


def defaults_section(plan: AlignmentPlan) -> list[str]:
    """Flags one side omits, resolved with vLLM's defaults: collapsed, one bullet each."""
    if not plan.defaults:
        return []
    pinned = {e.subject: e for e in plan.edits if e.kind == "flag-new"}
    lines = []
    for note in plan.defaults:
        if note.subject in pinned:
            verdict = "not equivalent, pinned"
        elif note.verdict.startswith("equivalent"):
            verdict = "equivalent, no edit"
        else:
            verdict = md.text(note.verdict)
        lines.append(f"- {code(note.subject)}: {verdict}: {prose(note.reason)}.")
    count = len(plan.defaults)
    return details(
        f"Defaults correspondence: {count} flag{'s' if count > 1 else ''} one side omits", lines
    )


# a comparison recipe-sync cannot decide (an explicit value against a default it cannot
# resolve): the knob is classified, the answer is what is unknown
UNKNOWN_WHY = "whether the recipe's command already runs it is not known; not copied"


def _notes_list(name: str, notes: Sequence[FlagNote], why: str, listed: int) -> list[str]:
    if not notes:
        return []
    out = [f"**{name}** ({why}):", ""]
    for note in notes[:listed]:
        out.append(f"- {code(note.shown)}: {prose(note.reason)}.")
    if len(notes) > listed:
        out.append(f"- … and {len(notes) - listed} more (see plan.json)")
    return [*out, ""]


def _names_line(name: str, notes: Sequence[FlagNote], why: str, listed: int) -> list[str]:
    """One line of values for a class whose name is its reason (front-end, benchmark-only)."""
    if not notes:
        return []
    values = ", ".join(code(n.shown) for n in notes[:listed])
    more = f" and {len(notes) - listed} more (see plan.json)" if len(notes) > listed else ""
    return [f"**{name}** ({why}): {values}{more}.", ""]


def _texts_list(name: str, items: Sequence[str], listed: int) -> list[str]:
    if not items:
        return []
    out = [f"**{name}**", "", *[f"- {prose(item)}." for item in items[:listed]]]
    if len(items) > listed:
        out.append(f"- … and {len(items) - listed} more (see plan.json)")
    return [*out, ""]


def lists_section(plan: AlignmentPlan, budget: TextBudget) -> list[str]:
    policy = (
        "reported, not removed"
        if not any(e.kind == "flag-remove" for e in plan.edits)
        else "removed by policy"
    )
    why = f"rules/policy.yaml recipe_only_flags: {policy}"
    listed = budget.listed
    body = [
        *_notes_list("Recipe-only", plan.recipe_only, why, listed),
        # one the recipe already sets is no "never copied": said apart, as the diff says it
        *_names_line(
            "Benchmark-only",
            [n for n in plan.benchmark_only if n.recipe is None],
            "never copied into a recipe",
            listed,
        ),
        *_names_line(
            "Benchmark-only, yet the recipe sets it too",
            [n for n in plan.benchmark_only if n.recipe is not None],
            "left as it is; a maintainer may drop it",
            listed,
        ),
        *_names_line("Front-end only", plan.front_end, "not serving configuration", listed),
        *_notes_list("Unknown", plan.unknown, UNKNOWN_WHY, listed),
        *_texts_list("Not edited", plan.skipped, listed),
        *_texts_list("Notes", plan.notes, listed),
    ]
    if not body:
        return []
    counts = [
        f"{len(items)} {name}"
        for name, items in (
            ("recipe-only", plan.recipe_only),
            ("benchmark-only", plan.benchmark_only),
            ("front-end", plan.front_end),
            ("unknown", plan.unknown),
            ("not edited", plan.skipped),
            ("notes", plan.notes),
        )
        if items
    ]
    return details(f"Left alone: {', '.join(counts)}", body[:-1])


def older_drift(plan: AlignmentPlan) -> list[str]:
    """One sentence for the drift this PR did not introduce, so a reviewer knows it was seen
    and left out on purpose (docs/alignment.md §1b)."""
    subjects = list(dict.fromkeys(note.subject for note in plan.preexisting))
    if not subjects:
        return []
    named = ", ".join(code(s) for s in subjects[:6])
    more = f" and {len(subjects) - 6} more" if len(subjects) > 6 else ""
    return [
        f"Left out: the recipe also differs from the launch line in {named}{more}, which this "
        "PR did not change (older drift, tracked on the drift dashboard).",
        "",
    ]
