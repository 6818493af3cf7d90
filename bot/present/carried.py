"""The benchmark settings an alignment does not carry into the recipe, grouped by knob class
(rules/knobs.yaml), each with its reason: one compact list for the comment and the PR body."""

from __future__ import annotations

from bot import markdown as md
from bot.align.model import Setting
from bot.align.plan import AlignmentPlan
from bot.align.reproduction import shortened
from bot.present.sections.common import code
from bot.rules.knobs import CLASSIFIED
from bot.words import count

ORDER = (*CLASSIFIED, "image")


HEADING = "Benchmark settings not carried into the recipe"


def settings_lines(plan: AlignmentPlan, listed: int = 40, *, folded: bool = False) -> list[str]:
    """``**Not carried into the recipe** …`` then one bullet per class, one item per setting
    in it (a flag launched with a value per concurrency is one item, its values folded
    together, each reason after its values); [] when none. ``folded``: the same list in a
    ``<details>`` (a PR body over its word budget)."""
    groups: dict[str, dict[str, list[Setting]]] = {}
    for item in plan.settings:
        groups.setdefault(item.knob, {}).setdefault(item.subject, []).append(item)
    if not groups and not plan.to_classify:
        return []
    out = [f"**{HEADING}** (for a reproduction section):", ""]
    for knob in sorted(groups, key=lambda k: ORDER.index(k) if k in ORDER else len(ORDER)):
        items = list(groups[knob].values())
        text = "; ".join(_item(same, listed) for same in items[:listed])
        more = f"; {len(items) - listed} more" if len(items) > listed else ""
        out.append(f"- {md.text(knob)}: {text}{more}")
    if plan.to_classify:
        names = ", ".join(md.code(n) for n in dict.fromkeys(plan.to_classify))
        out.append(f"- rules to classify (not edited until rules/knobs.yaml classes them): {names}")
    if folded:
        settings = sum(len(g) for g in groups.values())
        summary = f"{HEADING}: {count(settings, 'setting')} (for a reproduction section)"
        return [f"<details><summary>{summary}</summary>", "", *out[2:], "", "</details>"]
    return out


def _item(same: list[Setting], listed: int) -> str:
    """One setting: ``--max-num-seqs 128 (why)`` when launched one way; else its values
    (``--max-num-seqs`` ``4``, ``8`` … ``(why)``), numbers in order, each reason after the
    values it is given for."""
    shown = {item.bench or item.subject: item for item in same}
    subject = same[0].subject
    values = {shown: _value(item, shown) for shown, item in shown.items()}
    head = ""
    if len(shown) > 1 and all(v is not None for v in values.values()):
        head = md.code(subject) + " "
        shown = {str(values[s]): item for s, item in shown.items()}  # one spelling each
    by_reason: dict[str, list[str]] = {}
    for text, item in shown.items():
        by_reason.setdefault(item.reason, []).append(text)
    parts = []
    for reason, texts in by_reason.items():
        if head and all(_number(t) is not None for t in texts):
            texts.sort(key=lambda t: _number(t) or 0.0)
        more = f", {len(texts) - listed} more" if len(texts) > listed else ""
        codes = ", ".join(_code(t) for t in texts[:listed])
        parts.append(f"{codes}{more} ({md.text(reason.rstrip('.'))})")
    return head + ", ".join(parts)


def _code(text: str) -> str:
    """A value in a code span; a long list as its first items, the last and the count (a
    capture-size list of 135 numbers is no reading for a reviewer)."""
    found = shortened(text)
    if found is None:
        return code(text)
    items, length = found
    return f"{md.code(items)} ({length} values)"


def _value(item: Setting, shown: str) -> str | None:
    """The value in ``--flag VALUE``, ``--flag=VALUE`` or ``NAME=VALUE``; None otherwise."""
    for sep in (" ", "=") if item.kind == "flag" else ("=",):
        if shown.startswith(item.subject + sep):
            return shown[len(item.subject) + 1 :]
    return None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
