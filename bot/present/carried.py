"""The benchmark settings an alignment does not carry into the recipe, grouped by knob class
(rules/knobs.yaml), each with its reason: one compact list for the comment and the PR body."""

from __future__ import annotations

from bot import markdown as md
from bot.align.plan import AlignmentPlan
from bot.rules.knobs import CLASSIFIED

ORDER = (*CLASSIFIED, "image")


def settings_lines(plan: AlignmentPlan, listed: int = 40) -> list[str]:
    """``**Not carried into the recipe** …`` then one bullet per class; [] when none."""
    groups: dict[str, dict[str, str]] = {}
    for item in plan.settings:
        shown = item.bench or item.subject
        groups.setdefault(item.knob, {}).setdefault(shown, item.reason)
    if not groups and not plan.to_classify:
        return []
    out = ["**Benchmark settings not carried into the recipe** (for a reproduction section):", ""]
    for knob in sorted(groups, key=lambda k: ORDER.index(k) if k in ORDER else len(ORDER)):
        items = list(groups[knob].items())
        text = "; ".join(f"{md.code(v)} ({md.text(r.rstrip('.'))})" for v, r in items[:listed])
        more = f"; {len(items) - listed} more" if len(items) > listed else ""
        out.append(f"- {md.text(knob)}: {text}{more}")
    if plan.to_classify:
        names = ", ".join(md.code(n) for n in dict.fromkeys(plan.to_classify))
        out.append(f"- rules to classify (not edited until rules/knobs.yaml classes them): {names}")
    return out
