"""Candidate edits below the adoption threshold (``bot.align.confidence``): not in the
patch, offered as a list a maintainer answers with ``/recipe-sync add FLAG``, each with the
history behind its estimate — "of 9 scored proposals of this kind, maintainers adopted 6" —
so a reader sees why it was not proposed and what taking it means."""

from __future__ import annotations

from bot import markdown as md
from bot.align.model import OFFERED_WORDS, Wait
from bot.align.plan import AlignmentPlan, PlannedEdit
from bot.present.sections.values import new_value
from bot.words import count as counted

SHOWN = 20  # candidates listed; the rest are counted


def offered_lines(plan: AlignmentPlan, *, command: str) -> list[str]:
    """One visible line (how many, and how to take one), the candidates folded below it,
    each with the history behind its estimate; [] when nothing is offered."""
    if not plan.offered:
        return []
    count = len(plan.offered)
    # tuning last: the benchmark's choices for its sweep are the least likely to be taken
    offered = sorted(plan.offered, key=plan.offered_as_tuning)
    items = []
    for edit in offered[:SHOWN]:
        estimate = plan.estimate_of(edit)
        condition = plan.waits_for(edit)
        if condition is not None and condition.reason == "verify":
            why = f" — {_verify_waits(plan, edit, condition, command)}"
        elif condition is not None:
            why = f" — {_waiting(edit, condition)}"
        else:
            why = f" — {md.text(estimate.sentence())}" if estimate is not None else ""
        items.append(f"- {_setting(edit)} at {md.code(edit.node)}{why}")
    if count > SHOWN:
        items.append(f"- … and {count - SHOWN} more")
    # one setting offered at several nodes (per GPU) is named once here; the list says where
    settings = list(dict.fromkeys(_setting(edit) for edit in offered))
    names = ", ".join(settings[:3])
    more = f" and {len(settings) - 3} more" if len(settings) > 3 else ""
    reasons = {w.reason if (w := plan.waits_for(edit)) else "" for edit in plan.offered}
    kinds = "; ".join(heading for r, (_, heading) in OFFERED_WORDS.items() if r in reasons)
    return [
        f"**Offered, not proposed** ({kinds}): {names}{more}; `{command} add FLAG` proposes one.",
        "",
        f"<details><summary>{counted(count, 'offered setting')} and "
        f"{'its' if count == 1 else 'their'} history</summary>",
        "",
        *items,
        "",
        "</details>",
    ]


def _waiting(edit: PlannedEdit, wait: Wait) -> str:
    travels = "" if wait.setting == edit.subject else f"travels with {md.code(wait.setting)}, "
    if wait.reason == "older":
        return (
            f"{travels}the recipe differed from the benchmark here before this PR: not part "
            "of its change"
        )
    if wait.reason == "tuning":
        return (
            f"{travels}tuning ({md.text(wait.what)}): the benchmark's choice, kept out of "
            "the recipe unless ticked"
        )
    if wait.reason == "unknown":
        return (
            f"{travels}{md.text(wait.what)}: the recipe leaves it to vLLM, whose default here "
            "recipe-sync cannot resolve, so whether the recipe already runs it is not known"
        )
    if wait.reason == "patched":
        return (
            f"{travels}{md.prose(wait.what)}: a recipe runs its image as published, so whether "
            "this setting runs there as benchmarked is not known"
        )
    if wait.reason == "per-point":
        return (
            f"{travels}the lane launched {md.text(wait.what)}: a recipe holds one value, "
            "so which is the model's is a maintainer's choice"
        )
    if wait.reason == "together":
        return (
            f"{travels}which is offered: {md.text(wait.what)}, so they go into the recipe "
            "together or not at all"
        )
    what = f"an accuracy setting ({md.text(wait.what)})"
    return f"{travels}{what}: proposed once an eval passes at these settings"


def _verify_waits(plan: AlignmentPlan, mark: PlannedEdit, wait: Wait, command: str) -> str:
    """When a verification mark may be written, and what still separates the recipe from
    the launch the benchmark ran on that GPU (offered, or older drift left out)."""
    on_gpu = set(mark.targets)
    offered = [e.subject for e in plan.offered if e.kind != "verified" and on_gpu & set(e.targets)]
    older = [note.subject for note in plan.preexisting if note.target in on_gpu]
    differs = list(dict.fromkeys([*offered, *older]))
    named = ", ".join(md.code(s) for s in differs[:4])
    more = f" and {len(differs) - 4} more" if len(differs) > 4 else ""
    still = (
        f", and the recipe as edited still differs from the launch the benchmark ran here in "
        f"{named}{more}"
        if differs
        else ""
    )
    ask = md.code(f"{command} add {mark.node}")
    return (
        f"{ask} writes it once an eval has passed at the recipe's settings on this GPU; "
        f"recipe-sync saw no eval run ({md.text(wait.what)}){still}"
    )


def _setting(edit: PlannedEdit) -> str:
    if edit.kind == "verified":
        return md.code(f"{edit.subject}: verified")
    if edit.kind == "image":  # named as `add` takes it: a bare tag reads as any value
        return f"image {md.code(edit.after or '')}"
    if edit.kind in ("env", "env-new"):
        return md.code(f"{edit.subject}={edit.after}")
    if edit.after is None:
        return f"remove {md.code(edit.subject)}"
    if edit.after.startswith("["):
        # a whole args list written (an override replacing its layer's list): the flag's own
        value = new_value(edit)
        return md.code(edit.subject if value == edit.after else f"{edit.subject} {value}".strip())
    # a value that is a flag itself is another spelling of the subject (``--no-x`` for
    # ``--x``): shown as it is, not after the subject
    spelled = edit.after.startswith(edit.subject) or edit.after.startswith("--")
    if edit.kind in ("flag", "flag-new") and not spelled:
        return md.code(f"{edit.subject} {edit.after}")
    return md.code(edit.after)
