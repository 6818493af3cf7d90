"""Summary bullets about single hunks of an alignment PR: recipe comments about a value the
patch changes (docs/alignment.md §5) and hunks dropped on request (``/recipe-sync drop``)."""

from __future__ import annotations

from bot import markdown as md
from bot.align.model import CommentChange
from bot.align.plan import AlignmentPlan


def _quoted(lines: tuple[str, ...]) -> str:
    return "“" + md.prose(" ".join(lines).strip().rstrip(".")) + "”"


def comment_line(change: CommentChange) -> str:
    """One bullet: the comment, the value it names, and what the patch does with it."""
    if change.action == "kept":
        value = md.code(change.value)
        said = (
            f"quotes the benchmark script's comment ({md.code(change.source)})"
            if change.source
            else "says in a comment what it replaces"
        )
        return (
            f"- The recipe comment on {value} (above {md.code(change.at)}) still holds where "
            f"{value} is kept; the new override {said}."
        )
    head = f"- The recipe comment above {md.code(change.at)}, {_quoted(change.old)},"
    if change.action == "replaced":
        return (
            f"{head} described {md.code(change.value)}: replaced by the benchmark script's "
            f"comment ({md.code(change.source)})."
        )
    return (
        f"{head} described {md.code(change.value)}: removed (the benchmark script has no "
        "comment on the new value)."
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
