"""Summary bullets about single hunks of an alignment PR: recipe comments about a value the
patch changes (docs/alignment.md §5) and hunks dropped on request (``/recipe-sync drop``)."""

from __future__ import annotations

from bot import markdown as md
from bot.align.plan import AlignmentPlan
from bot.align.values import CommentChange


def _quoted(lines: tuple[str, ...]) -> str:
    return "“" + md.text(" ".join(lines).strip().rstrip(".")) + "”"


def comment_line(change: CommentChange) -> str:
    """One bullet: the comment, the value it names, and what the patch does with it."""
    head = f"- Recipe comment {_quoted(change.old)} (above {md.code(change.at)})"
    script = f"the benchmark script's comment ({md.code(change.source)})"
    if change.action == "kept":
        said = f", quoting {script}" if change.source else ""
        return (
            f"{head} describes {md.code(change.value)}, which the other renderings keep: left "
            f"as it is; the new override ({md.code(change.new_at)}) says what it replaces"
            f"{said}."
        )
    if change.action == "replaced":
        return f"{head} described {md.code(change.value)}: replaced by {script}."
    return (
        f"{head} described {md.code(change.value)}: removed, since the benchmark script has "
        "no comment on the new value."
    )


def dropped_line(plan: AlignmentPlan) -> list[str]:
    """``Dropped on request: --x (by login)``: hunks a maintainer declined on this PR."""
    if not plan.dropped:
        return []
    items = ", ".join(
        f"{md.code(name)} (by {md.text(who)})" if who else f"{md.code(name)} (`--drop`)"
        for name, who in plan.dropped
    )
    undo = (
        "; `/recipe-sync keep <flag>` on this PR proposes it again"
        if any(who for _, who in plan.dropped)
        else ""
    )
    return [f"- Dropped on request: {items}{undo}."]


def hunk_lines(plan: AlignmentPlan) -> list[str]:
    """The bullets of this module for the PR body's summary."""
    return [*(comment_line(c) for c in plan.comments), *dropped_line(plan)]
