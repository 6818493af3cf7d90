"""Which benchmark lanes a PR's reproduction blocks document (docs/alignment.md §6b): only
lanes whose launch settings the PR moved, only beside a recipe edit (policy
``reproduction: with_edits``) and then only for the hardware that edit is for."""

from __future__ import annotations

from collections.abc import Mapping

from bot.align.delta import KeyDelta
from bot.align.model import AlignmentPlan, edited_hardware
from bot.align.reproduction.model import SectionPoint
from bot.rules import KnobClass, Rules


def writes_reproduction(rules: Rules, edited: bool) -> bool:
    """Policy ``reproduction``: a guide block only beside a recipe edit (``with_edits``, the
    default: never a guide-only PR), also on its own (``always``), or never."""
    wanted = rules.policy.reproduction
    return wanted == "always" or (wanted == "with_edits" and edited)


def documents(rules: Rules, plan: AlignmentPlan, point: SectionPoint) -> bool:
    """With ``with_edits`` a block documents the hardware the recipe edit is for: an edit for
    one GPU does not bring blocks for the recipe's other GPUs into its PR."""
    if rules.policy.reproduction != "with_edits":
        return True
    return point.profile.hardware in edited_hardware(plan)


def changed_lane(deltas: Mapping[str, KeyDelta], point: SectionPoint, rules: Rules) -> bool:
    """Did the PR move a launch setting of the point's lane? A change to the benchmark
    harness alone (metrics files, ports, log paths: class ``harness``) moves none."""
    delta = deltas.get(point.key)
    if delta is None:
        return True  # no base to compare with: all of it is the PR's
    changed = delta.subjects(point.launch.point, point.launch.arm)
    if changed is None:
        return True
    return any(
        kind == "image"
        or rules.knob_class("env" if kind == "env" else "flag", name) is not KnobClass.HARNESS
        for kind, name in changed
    )
