"""The recipes the plans read when a PR's lanes call for new variants
(:mod:`bot.align.new_variant`): the recipes with the variants' skeletons in place, and the
PR's points classified against them (:mod:`bot.align.run` writes the patch against the
recipes without them, skeletons first). Only the lines a skeleton can move are classified
again (:func:`unmoved_by`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from bot.align.compare import Comparer
from bot.align.new_variant import NewVariant, propose, with_tp
from bot.align.overlay import OverlaySource
from bot.align.result import KeyResult
from bot.benchmarks import LaunchLine
from bot.recipes import RecipesRepo
from bot.recipes.edit import apply_edits
from bot.recipes.repo import with_recipe_files
from bot.rules import Rules
from bot.sources import FileSource

# (the comparer of a tree, a line → its known classification or None) → the PR's keys
# classified against that tree
ClassifyKeys = Callable[[Comparer, Callable[[LaunchLine], object | None]], tuple[KeyResult, ...]]


def with_new_variants(
    recipes: RecipesRepo,
    source: FileSource,
    rules: Rules,
    keys: tuple[KeyResult, ...],
    seen: Mapping[str, object],
    classify: ClassifyKeys,
) -> tuple[tuple[NewVariant, ...], RecipesRepo, tuple[KeyResult, ...]]:
    """New variants for checkpoints no recipe serves (:mod:`bot.align.new_variant`), the
    recipes with their skeletons and the points classified against them. The TP goes into
    the skeleton when every eval point of the variant runs the same one (those the recipe
    renders, and those that differ from it by TP alone). ``keys``: the points classified
    against ``recipes``, ``seen`` their classifications by the line's ``repr``, kept for the
    lines no skeleton can move; ``classify`` classifies the PR's keys again."""
    launches = [
        p.launch for k in keys for p in k.points if p.status == "unmapped" and p.launch is not None
    ]
    variants = propose(recipes, rules, launches)
    if not variants:
        return (), recipes, keys
    with_skeletons, found = _against_skeletons(recipes, source, rules, variants, seen, classify)
    sized = tuple(with_tp(v, _lane_tps(v, found)) for v in variants)
    if sized == variants:
        return variants, with_skeletons, found
    # the lane's TP changes which points represent the variant: classify once more
    with_skeletons, found = _against_skeletons(recipes, source, rules, sized, seen, classify)
    return sized, with_skeletons, found


def _against_skeletons(
    recipes: RecipesRepo,
    source: FileSource,
    rules: Rules,
    variants: Sequence[NewVariant],
    seen: Mapping[str, object],
    classify: ClassifyKeys,
) -> tuple[RecipesRepo, tuple[KeyResult, ...]]:
    """The recipes with the skeletons of ``variants`` and the points classified against them:
    a line no skeleton can move keeps its classification against ``recipes`` (``seen``)."""
    with_skeletons = _skeletons(recipes, source, variants)
    comparer = Comparer(with_skeletons, rules)
    unmoved = unmoved_by(recipes, with_skeletons, rules, {v.recipe_path for v in variants})

    def reuse(launch: LaunchLine) -> object | None:
        return seen.get(repr(launch)) if unmoved(launch) else None

    return with_skeletons, classify(comparer, reuse)


def unmoved_by(
    before: RecipesRepo, after: RecipesRepo, rules: Rules, paths: Collection[str]
) -> Callable[[LaunchLine], bool]:
    """Which launch lines classify against ``after`` (``before`` with the recipe files
    ``paths`` rewritten) as against ``before``.

    Sound where every other recipe, the taxonomy and the strategies are the same objects in
    both trees, in the same order (:func:`~bot.recipes.repo.with_recipe_files` shares them;
    checked here, else no line is said to be unmoved): a recipe's profiles, renderings and
    comparisons read nothing but its own data, the taxonomy, the strategies and the rules.
    A line is then classified alike unless :func:`~bot.align.profile.find_recipe` can land
    on a rewritten recipe or answer otherwise, that is unless its model is a rewritten
    recipe's hf_id or a ``model_id`` of one of its variants (before or after), or
    rules/models.yaml maps its model to a rewritten file. A line that launches nothing, or
    another framework, is classified without the recipes at all."""
    shared = (
        [r.path for r in before.recipes] == [r.path for r in after.recipes]
        and all(after.by_path.get(r.path) is r for r in before.recipes if r.path not in paths)
        and before.by_hf_id.keys() == after.by_hf_id.keys()
        and all(after.by_hf_id[k] is r for k, r in before.by_hf_id.items() if r.path not in paths)
        and after.hardware is before.hardware
        and after.strategies is before.strategies
        and after.taxonomy is before.taxonomy
        and after.platforms is before.platforms
    )
    if not shared:
        return lambda launch: False
    models: set[str] = set()
    for tree in (before, after):
        for path in paths:
            recipe = tree.by_path.get(path)
            if recipe is None:
                continue
            models.add(recipe.hf_id)
            for variant in recipe.variants.values():
                model_id = variant.get("model_id") if isinstance(variant, Mapping) else None
                if isinstance(model_id, str):
                    models.add(model_id)
    models.update(
        rule.benchmark_model
        for rule in rules.models.models
        if f"models/{rule.recipe}.yaml" in paths
    )

    def unmoved(launch: LaunchLine) -> bool:
        if launch.status != "launched" or launch.framework != "vllm":
            return True
        return launch.model not in models

    return unmoved


def _lane_tps(variant: NewVariant, keys: Sequence[KeyResult]) -> list[int]:
    """The TP of every eval point of the variant's lane: those the recipe renders, and
    those that differ from it by TP alone."""
    return [
        p.launch.point.tp
        for k in keys
        for p in k.points
        if p.arm == "eval"
        and p.launch is not None
        and p.profile is not None
        and p.profile.recipe_path == variant.recipe_path
        and p.profile.variant == variant.key
        and (
            p.status == "represents"
            or (
                p.status == "other-point"
                and p.comparison is not None
                and {d.key for d in p.comparison.parallelism_differs}
                == {"parallel.tensor_parallel_size"}
            )
        )
    ]


def _skeletons(
    recipes: RecipesRepo, source: FileSource, variants: Sequence[NewVariant]
) -> RecipesRepo:
    texts: dict[str, bytes] = {}
    for path in dict.fromkeys(v.recipe_path for v in variants):
        edits = [e.edit for v in variants if v.recipe_path == path for e in v.edits()]
        texts[path] = apply_edits(source.read_bytes(path), edits, file=path).text.encode()
    return with_recipe_files(recipes, OverlaySource(source, texts), texts)
