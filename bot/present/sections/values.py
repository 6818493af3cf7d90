"""An edit's values as the summary and the change table show them: the old value the
benchmarked profile had, the new one, an image in words, and what they need to know."""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.align.plan import AlignmentPlan, PlannedEdit
from bot.align.quoted import RecipesNames
from bot.align.regression import RegressionMatrix
from bot.present.sections.common import (
    code,
)
from bot.rules import Rules
from bot.vllm import canonical_flag
from bot.vllm.argv import flag_value
from bot.vllm.versions import fmt_version, parse_image

PLATFORMS = {"amd": "ROCm", "nvidia": "CUDA", "tpu": "TPU", "intel": "XPU"}


@dataclass(frozen=True)
class SummaryContext:
    """What a summary bullet needs beyond the edit: the class of a knob, the scope in
    hardware words, what the other renderings keep (the regression matrix) and the upstream
    vLLM change the benchmark cites for a new image."""

    names: RecipesNames
    rules: Rules
    plan: AlignmentPlan
    matrix: RegressionMatrix | None = None
    upstream: tuple[int, ...] = ()  # vLLM PRs the benchmark's changelog entry cites


def image_words(image: str) -> str:
    ref = parse_image(image)
    if ref.release is not None:
        return f"vLLM {fmt_version(ref.release)}"
    if ref.nightly_sha:
        return f"nightly build of vLLM commit {code(ref.nightly_sha[:12])}"
    if ref.nightly:
        return "rolling tag"
    return "custom tag, vLLM version unknown"


def image_shown(old: str, new: str) -> str:
    """The old image as the bullet shows it: its tag when the repository stays."""
    before, after = parse_image(old), parse_image(new)
    return (before.tag or old) if before.repo == after.repo else old


def image_owner(edit: PlannedEdit, names: RecipesNames | None) -> str:
    parts = edit.node.split(".")
    key = parts[-2] if parts[-1] == "docker_image" else parts[-1]
    if names is not None and key in names.hardware:
        return names.hw_label(key)
    return key.upper() if key in PLATFORMS or parts[-1] == "docker_image" else key


def old_value(edit: PlannedEdit, plan: AlignmentPlan) -> str | None:
    """The benchmarked profile's value before the edit: the edited node's, or (a new
    override node) what the recipe rendered there."""
    if edit.before is not None:
        return edit.before
    # only the profiles that demanded this edit: another strategy's value is not "instead"
    # (labels compared without their features: the plan may add an opt-in feature)
    asked = {label.split(" (")[0] for label in edit.targets}
    demanding = [t for t in plan.targets if t.profile.label.split(" (")[0] in asked]
    for target in demanding:
        for diff in target.comparison.drift:
            if diff.flag == edit.subject and diff.recipe_tokens:
                return value_only(edit.subject, " ".join(diff.recipe_tokens))
    if edit.shadows is None or not edit.subject.startswith("--"):
        return None
    # an override of a whole config (its fields drifted, not the flag): the shadowed value
    for target in demanding:
        for unit in target.comparison.command.args:
            if unit.flag and canonical_flag(unit.flag) == edit.subject and unit.value:
                return unit.value
    return None


def value_only(subject: str, shown: str) -> str:
    """``aiter_triton_mxfp4_bf16`` for ``--moe-backend aiter_triton_mxfp4_bf16``: the flag is
    named beside it."""
    head, _, value = shown.partition(" ")
    return value if value and subject.startswith("-") and head == subject else shown


def new_value(edit: PlannedEdit) -> str:
    """What the edit sets its subject to. A feature's args list replaced on one GPU (its
    ``after`` is the whole list, ``["--x", "v", …]``) shows the subject's own value ``v``."""
    value = edit.after or ""
    if not value.startswith("["):
        return value
    try:
        tokens = json.loads(value)
    except ValueError:
        return value
    found = flag_value(tuple(map(str, tokens)), edit.subject) if isinstance(tokens, list) else None
    return value if found is None else found


KIND_ORDER = (
    "variant",
    "image",
    "flag",
    "flag-new",
    "env",
    "env-new",
    "flag-remove",
    "tp",
    "verified",
)
