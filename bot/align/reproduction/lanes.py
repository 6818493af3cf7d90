"""Which benchmark lanes a PR's reproduction blocks document (docs/alignment.md §6b): only
lanes whose launch settings the PR moved, only beside a recipe edit (policy
``reproduction: with_edits``) and then only for the hardware that edit is for."""

from __future__ import annotations

from collections.abc import Mapping

from bot.align.delta import KeyDelta, moves_launch
from bot.align.model import AlignmentPlan, edited_hardware
from bot.align.reproduction.model import SectionPoint
from bot.rules import Rules


def writes_reproduction(rules: Rules, edited: bool) -> bool:
    """Policy ``reproduction``: a guide block only beside a recipe edit (``with_edits``, the
    default: never a guide-only PR), also on its own (``always``), or never."""
    wanted = rules.policy.reproduction
    return wanted == "always" or (wanted == "with_edits" and edited)


def documents(rules: Rules, plan: AlignmentPlan, point: SectionPoint) -> bool:
    """With ``with_edits`` a block documents the hardware the recipe edit is for: an edit for
    one GPU does not bring blocks for the recipe's other GPUs into its PR. Never a lane that
    patched its engine before it launched: the recipe's command and deltas do not run it."""
    if point.launch.engine_patch is not None:
        return False
    if rules.policy.reproduction != "with_edits":
        return True
    return point.profile.hardware in edited_hardware(plan)


def changed_lane(deltas: Mapping[str, KeyDelta], point: SectionPoint, rules: Rules) -> bool:
    """Did the PR move a launch setting of the point's lane (:func:`moves_launch`)?"""
    launch = point.launch
    return moves_launch(deltas.get(point.key), launch.point, launch.arm, rules)
