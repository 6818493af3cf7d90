"""Candidate edits below the adoption threshold (``bot.align.confidence``): not in the
patch, offered as a list a maintainer answers with ``/recipe-sync add FLAG``, each with the
history behind its estimate — "of 9 scored proposals of this kind, maintainers adopted 6" —
so a reader sees why it was not proposed and what taking it means."""

from __future__ import annotations

from bot import markdown as md
from bot.align.plan import AlignmentPlan, PlannedEdit

SHOWN = 20  # candidates listed; the rest are counted


def offered_lines(plan: AlignmentPlan, *, command: str) -> list[str]:
    """A heading line with how to take one, then one item per candidate; [] when nothing
    is offered."""
    if not plan.offered:
        return []
    how = (
        f"comment `{command} add FLAG` on the benchmark PR or this recipe's alignment PR "
        "(`recipe-sync align --include FLAG` offline) to have one proposed"
    )
    out = [
        f"**Offered, not proposed** — benchmarked settings whose kind maintainers have rarely "
        f"taken ({how}):",
        "",
    ]
    for edit in plan.offered[:SHOWN]:
        estimate = plan.estimate_of(edit)
        why = f" — {md.text(estimate.sentence())}" if estimate is not None else ""
        out.append(f"- {_setting(edit)} at {md.code(edit.node)}{why}")
    if len(plan.offered) > SHOWN:
        out.append(f"- … and {len(plan.offered) - SHOWN} more")
    return out


def _setting(edit: PlannedEdit) -> str:
    if edit.kind in ("env", "env-new"):
        return md.code(f"{edit.subject}={edit.after}")
    if edit.after is None:
        return f"remove {md.code(edit.subject)}"
    if edit.kind in ("flag", "flag-new") and not edit.after.startswith(edit.subject):
        return md.code(f"{edit.subject} {edit.after}")
    return md.code(edit.after)
