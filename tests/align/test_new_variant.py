"""A lane that benchmarks a quantised checkpoint of a recipe's model becomes a new variant
of that recipe (the July 2026 practice: MiniMax-M3 ``mxfp4``/``nvfp4``, Kimi-K2.5 ``mxfp4``),
and nothing else makes one."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import cast

import pytest

from bot.align.compare import Comparer
from bot.align.new_variant import checkpoint_variant, propose, with_tp
from bot.align.overlay import OverlaySource
from bot.align.plan import AlignmentPlan
from bot.align.run import _carries_settings, classify
from bot.align.skeletons import unmoved_by
from bot.benchmarks import LaunchLine
from bot.recipes import RecipesRepo, RenderRequest, load_recipes, render
from bot.recipes.edit import apply_edits
from bot.recipes.repo import with_recipe_files
from bot.rules import Rules
from bot.shell import Unresolved
from bot.shell.effects import classify as classify_effects
from bot.sources import GitTreeSource

RECIPE = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"


@pytest.fixture(scope="module")
def recipes(source: GitTreeSource) -> RecipesRepo:
    return load_recipes(source)


def test_a_quantised_checkpoint_of_the_recipe_model_proposes_a_variant(
    recipes: RecipesRepo, rules: Rules, launch: LaunchLine, source: GitTreeSource
) -> None:
    lane = replace(launch, model="amd/DeepSeek-V4.1-Flash-MXFP4")
    (variant,) = propose(recipes, rules, [lane])
    assert (variant.recipe_path, variant.key, variant.model_id) == (
        RECIPE,
        "mxfp4",
        "amd/DeepSeek-V4.1-Flash-MXFP4",
    )
    assert variant.hardware == ("mi355x",)
    # the sibling default (fp8, 300 GB) scaled by 4/8 bits per weight
    assert variant.vram_minimum_gb == 150
    assert variant.mapping()["supported_hardware"] == ["mi355x"]
    # the skeleton renders: the new variant serves the checkpoint
    edit = variant.edit()
    assert edit.kind == "variant" and edit.node == "variants.mxfp4"
    text = apply_edits(source.read_bytes(RECIPE), [edit.edit], file=RECIPE).text
    after = load_recipes(OverlaySource(source, {RECIPE: text.encode()}))
    assert "mxfp4" in after.by_path[RECIPE].variants
    rendered = render(
        after,
        RenderRequest("deepseek-ai/DeepSeek-V4.1-Flash", "mi355x", "single_node_tp", "mxfp4"),
    )
    assert "amd/DeepSeek-V4.1-Flash-MXFP4" in rendered.commands[0].argv
    # with the lane's TP when every eval point ran one
    assert variant.edits() == (edit,)
    _, tp = with_tp(variant, [4, 4]).edits()
    assert (tp.kind, tp.node, tp.after) == ("tp", "variants.mxfp4.tp", "4")
    assert with_tp(variant, [4, 8]).edits() == (edit,)  # the lane ran two TPs: none
    both = apply_edits(source.read_bytes(RECIPE), [edit.edit, tp.edit], file=RECIPE).text
    assert "    tp: 4\n" in both.split("  mxfp4:", 1)[1]


def _note(line: str) -> str:
    """What the evaluator records for a command it skips."""
    effect = classify_effects(line.split())
    assert effect is not None
    return effect.note


def test_nothing_else_makes_a_variant(
    recipes: RecipesRepo, rules: Rules, launch: LaunchLine
) -> None:
    # the recipe's own checkpoint, an unlisted suffix, another model: no variant
    assert propose(recipes, rules, [launch]) == ()
    assert checkpoint_variant(recipes, rules, "amd/DeepSeek-V4.1-Flash-Eagle3") is None
    assert checkpoint_variant(recipes, rules, "amd/Other-Model-MXFP4") is None
    # a tag the recipe already has a variant for is not proposed again
    assert checkpoint_variant(recipes, rules, "x/DeepSeek-V4.1-Flash-DEFAULT") is None
    # nor a checkpoint a lane served only after patching its engine in the container
    lane = replace(launch, model="amd/DeepSeek-V4.1-Flash-MXFP4")
    patch = Unresolved("`git apply -p1 fix.diff`", _note("git apply -p1 fix.diff"),
                       "benchmarks/x.sh", 3)  # fmt: skip
    assert propose(recipes, rules, [replace(lane, assumptions=(patch,))]) == ()
    assert len(propose(recipes, rules, [lane])) == 1


def test_a_variant_the_lane_sets_nothing_in_is_not_proposed(
    recipes: RecipesRepo, rules: Rules, launch: LaunchLine
) -> None:
    # a bare skeleton (checkpoint, TP) would be a claim with no setting to verify, and its
    # renderings would read "expected to move but unchanged" in the regression table
    (variant,) = propose(recipes, rules, [replace(launch, model="amd/DeepSeek-V4.1-Flash-MXFP4")])
    sized = with_tp(variant, [4])
    bare = cast(AlignmentPlan, SimpleNamespace(edits=sized.edits()))
    assert not _carries_settings(sized, bare)
    assert not _carries_settings(sized, None)  # no point of the lane stands for it
    setting = replace(
        sized.edit(), kind="env-new", node="variants.mxfp4.extra_env.VLLM_ROCM_USE_AITER"
    )
    assert _carries_settings(
        sized, cast(AlignmentPlan, SimpleNamespace(edits=(*sized.edits(), setting)))
    )
    elsewhere = replace(setting, node="variants.default.extra_env.VLLM_ROCM_USE_AITER")
    assert not _carries_settings(
        sized, cast(AlignmentPlan, SimpleNamespace(edits=(*sized.edits(), elsewhere)))
    )


def test_only_the_lines_a_skeleton_can_move_are_classified_again(
    recipes: RecipesRepo, rules: Rules, launch: LaunchLine, source: GitTreeSource
) -> None:
    lane = replace(launch, model="amd/DeepSeek-V4.1-Flash-MXFP4")
    (variant,) = propose(recipes, rules, [lane])
    text = apply_edits(source.read_bytes(RECIPE), [variant.edit().edit], file=RECIPE).text
    after = with_recipe_files(recipes, OverlaySource(source, {RECIPE: text.encode()}), [RECIPE])
    unmoved = unmoved_by(recipes, after, rules, {RECIPE})
    # the lane's checkpoint is now a variant, the recipe's own model is in the rewritten file
    assert not unmoved(lane) and not unmoved(launch)
    before_lane = classify(Comparer(recipes, rules), lane)
    after_lane = classify(Comparer(after, rules), lane)
    assert (before_lane.status, after_lane.status) == ("unmapped", "represents")
    # a line of another model, or one that launches nothing, is classified alike
    others = [
        replace(launch, model="deepseek-ai/DeepSeek-R1"),
        replace(launch, model="Qwen/Qwen3-Other"),
        replace(launch, status="no-server", reason="no server"),
        replace(launch, framework="sglang"),
    ]
    statuses = set()
    for line in others:
        assert unmoved(line)
        statuses.add(classify(Comparer(after, rules), line).status)
        assert classify(Comparer(recipes, rules), line) == classify(Comparer(after, rules), line)
    assert {"unmapped", "no-launch"} < statuses and len(statuses) == 3  # R1: mapped
    # a tree loaded whole shares nothing with the first: every line is classified again
    whole = load_recipes(OverlaySource(source, {RECIPE: text.encode()}))
    assert not any(map(unmoved_by(recipes, whole, rules, {RECIPE}), others))
