"""Whether the cited eval job verifies the edited recipe (``meta.hardware.<hw>: verified``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot import markdown as md
from bot.align.compare import (
    DRIFT,
    DRIFT_CLASSES,
    knob_of,
    recipe_min_version,
    recipe_side,
    taxonomy_vram,
)
from bot.align.model import Target, Verification
from bot.align.nodes import hw_label
from bot.align.profile import Profile
from bot.evidence.model import Evidence
from bot.recipes import RecipesRepo, Rendering
from bot.recipes.jsvalues import as_dict
from bot.recipes.repo import Recipe
from bot.rules import Rules
from bot.vllm import LaunchSide, Verdict, diff_launch


def run_image(launcher_image: str | None, image: str | None) -> str | None:
    """The image a job ran, as an image reference: the launcher's ``--container-image`` may
    be a pyxis squash file named after the image with ``/ : @ #`` turned into ``+``
    (``…/vllm+vllm-openai-rocm+nightly-eed1….sqsh``); it stands for ``image`` when the name
    is exactly that encoding."""
    if launcher_image is None or not launcher_image.endswith(".sqsh") or image is None:
        return launcher_image
    name = launcher_image.rsplit("/", 1)[-1].removesuffix(".sqsh")
    return image if name == re.sub(r"[/:@#]", "+", image) else launcher_image


def serving_match(
    evidence: Evidence, rendering: Rendering, profile: Profile, recipes: RecipesRepo, rules: Rules
) -> tuple[bool, str]:
    """Does the cited job's launch line (argv + image) match the edited rendering? And the
    sentence that says so, listing what was compared (trusted Markdown; values escaped)."""
    assert evidence.launch is not None
    ran = run_image(evidence.context.image, rendering.image)
    bench = LaunchSide(argv=tuple(evidence.launch.argv), env={}, image=ran)
    report = diff_launch(
        bench,
        recipe_side(rendering),
        hardware=profile.hardware,
        rules=rules,
        taxonomy_vram=taxonomy_vram(recipes),
        recipe_min_version=recipe_min_version(recipes, profile),
    )
    diffs = [d for d in report.diffs if d.kind in ("flag", "image")]
    if ran is None:
        diffs = [d for d in diffs if d.kind != "image"]
    # benchmark settings (tuning, workload, harness) are not the recipe: they do not decide
    settings = [
        d for d in diffs if d.verdict in DRIFT and knob_of(rules, d) not in (*DRIFT_CLASSES, None)
    ]
    diffs = [d for d in diffs if d not in settings]
    bad = [d for d in diffs if d.verdict in DRIFT or d.verdict is Verdict.UNKNOWN]
    if bad:
        reasons = "; ".join(md.text(d.reason) for d in bad[:5])
        return False, f"Its launch line does not match the serving subset above: {reasons}."
    shown: list[str] = []
    if ran is not None:
        shown.append("same image")
    shown.append(md.text(hw_label(recipes, profile.hardware)))
    more = 0
    # flags equal to vLLM's default, front-end and benchmark-only flags and benchmark settings
    # are set aside, not listed: the PR body lists them once (defaults, left alone, settings)
    for diff in diffs:
        if diff.key == "model" or diff.kind == "image":
            continue
        if diff.key == "parallel.tensor_parallel_size" and diff.verdict is Verdict.SAME:
            shown.append(f"TP{md.text(str(diff.recipe_value))}")
        elif diff.verdict is Verdict.SAME and diff.category == "engine":
            if isinstance(diff.recipe_value, Mapping):
                shown.append(f"{md.code(diff.flag)} (equal as data)")
            else:
                shown.append(md.code(" ".join(diff.recipe_tokens)))
        elif diff.verdict is Verdict.SAME:
            more += 1
    text = "It matches the serving subset above — " + ", ".join(shown)
    if more:
        text += f", and {more} more flag{'s' if more > 1 else ''} equal"
    text += "."
    return True, text


def verification_for(
    target: Target, rendering: Rendering, recipes: RecipesRepo, rules: Rules, recipe: Recipe
) -> Verification:
    hw = target.profile.hardware
    current = as_dict(as_dict(recipe.data.get("meta")).get("hardware")).get(hw)
    if target.evidence is None or target.evidence.launch is None:
        reason = target.evidence_note or "no workflow-run evidence was given"
        if current == "verified":
            return Verification(hw, "already", f"meta.hardware.{hw} is already verified; {reason}")
        return Verification(hw, "no-evidence", reason)
    matched, sentence = serving_match(target.evidence, rendering, target.profile, recipes, rules)
    if not matched:
        return Verification(hw, "not-verified", sentence, target.evidence, sentence)
    if current == "verified":
        return Verification(
            hw, "already", f"meta.hardware.{hw} is already verified", target.evidence, sentence
        )
    if not rules.policy.mark_verified:
        return Verification(
            hw, "policy-off", "rules/policy.yaml mark_verified is false", target.evidence, sentence
        )
    item = target.evidence
    reason = (
        f"run {item.run_id} (attempt {item.attempt}), job {item.job_name!r}: the eval passed, "
        "its launch line is the extracted one and matches the edited rendering, and the "
        "script blob is the one the PR ships"
    )
    return Verification(hw, "verified", reason, item, sentence)
