"""A new quantised variant for a checkpoint the recipe does not serve yet.

A benchmark lane that runs ``amd/MiniMax-M3-MXFP4`` beside the ``MiniMaxAI/MiniMax-M3``
recipe runs a quantisation of that recipe's model. Maintainers answered each such lane of
July 2026 with a variant named for the tag (MiniMax-M3 ``mxfp4`` #580 and ``nvfp4`` #605,
Kimi-K2.5 ``mxfp4`` #650), holding the checkpoint, its precision and the lane's TP; the
settings the lane runs then follow like any variant's. This module finds such lanes and
writes the variant's skeleton; :mod:`bot.align.run` plans the settings against the recipes
with the skeleton in place, so they go through the same rules as every other edit.

Only a tag rules/models.yaml lists (``checkpoint_tags``) makes a variant, and only for a
recipe whose own checkpoint name is the benchmark's without the tag: nothing else is
invented (no feature, no strategy, no variant for an unrelated model).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.align.model import PlannedEdit
from bot.benchmarks import LaunchLine
from bot.recipes import RecipesRepo
from bot.recipes.edit import EnsurePath
from bot.recipes.repo import Recipe
from bot.rules import Rules

# precisions the builder ties to NVIDIA Blackwell by themselves (recipe-rendering.md §5):
# a variant of one of them needs no hardware allowlist
IMPLIED_HARDWARE = frozenset({"nvfp4", "fp4"})


@dataclass(frozen=True)
class NewVariant:
    """The skeleton of one variant to add: what the lane's checkpoint is and where it ran."""

    recipe_path: str
    key: str  # the tag, lower case: "mxfp4"
    model_id: str  # the benchmark's checkpoint
    hardware: tuple[str, ...]  # the GPUs the lane ran it on
    tp: int | None = None  # the lane's TP where the recipe would render another
    vram_minimum_gb: int | None = None  # scaled from a sibling variant by bits per weight
    vram_from: str = ""  # which sibling, for the PR text

    @property
    def allowlist(self) -> tuple[str, ...]:
        """``supported_hardware``: the benchmarked GPUs, unless the precision implies them."""
        return () if self.key in IMPLIED_HARDWARE else self.hardware

    def mapping(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model_id": self.model_id, "precision": self.key}
        if self.vram_minimum_gb is not None:
            out["vram_minimum_gb"] = self.vram_minimum_gb
        out["description"] = (
            f"{self.key.upper()} checkpoint {self.model_id}, as benchmarked on "
            f"{', '.join(h.upper() for h in self.hardware)}."
        )
        if self.allowlist:
            out["supported_hardware"] = list(self.allowlist)
        return out

    def edits(self) -> tuple[PlannedEdit, ...]:
        """The skeleton as the first edits of the plan (the settings follow them): the
        variant, then the lane's TP as its own edit (maintainers wrote ``tp`` into each such
        variant, and a reviewer checks it apart from the checkpoint)."""
        if self.tp is None:
            return (self.edit(),)
        tp = PlannedEdit(
            edit=EnsurePath(("variants", self.key, "tp"), self.tp),
            kind="tp",
            subject="tp",
            before=None,
            after=str(self.tp),
            node=f"variants.{self.key}.tp",
            scope=f"new variant {self.key}",
            reason=f"every eval point of the lane runs TP{self.tp}",
            placement="the variant's tp: the variant serves only what the lane ran",
            targets=(),
        )
        return (self.edit(), tp)

    def edit(self) -> PlannedEdit:
        """The variant itself: checkpoint, precision, size, description, allowlist."""
        where = ", ".join(h.upper() for h in self.hardware)
        scope = f"new variant {self.key}: renders only what selects it"
        vram = (
            f"; vram_minimum_gb {self.vram_minimum_gb} scales {self.vram_from} by bits per weight"
            if self.vram_minimum_gb is not None
            else "; no sibling variant of known precision and size to scale vram_minimum_gb from"
        )
        return PlannedEdit(
            edit=EnsurePath(("variants", self.key), self.mapping()),
            kind="variant",
            subject=self.key,
            before=None,
            after=self.model_id,
            node=f"variants.{self.key}",
            scope=scope,
            reason=f"the benchmark serves {self.model_id} on {where}; the recipe has no variant "
            f"for it (a {self.key} quantisation of its model, rules/models.yaml checkpoint_tags)"
            + vram,
            placement="a variant per checkpoint, named for its quantisation tag",
            targets=(),
        )


def checkpoint_variant(recipes: RecipesRepo, rules: Rules, model: str) -> tuple[Recipe, str] | None:
    """(recipe, tag) when ``model`` is a recipe's checkpoint name plus a listed tag and the
    recipe has no variant of that name; None otherwise."""
    tags = rules.models.checkpoint_tags
    name = model.rsplit("/", 1)[-1].lower()
    best: tuple[Recipe, str] | None = None
    for recipe in recipes.recipes:
        if recipe.is_omni:
            continue
        base = recipe.hf_id.rsplit("/", 1)[-1].lower()
        if not base or not name.startswith(base + "-"):
            continue
        tag = name[len(base) + 1 :]
        if tag not in tags or tag in recipe.variants:
            continue
        if best is None or len(recipe.hf_id) > len(best[0].hf_id):
            best = (recipe, tag)
    return best


def propose(
    recipes: RecipesRepo, rules: Rules, launches: Iterable[LaunchLine]
) -> tuple[NewVariant, ...]:
    """One skeleton per (recipe, tag) the unmapped ``launches`` ask for."""
    found: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for launch in launches:
        if launch.framework != "vllm" or recipes.by_hf_id.get(launch.model) is not None:
            continue
        if launch.engine_patch is not None:
            continue  # served by a patched engine: nothing says the image as published can
        match = checkpoint_variant(recipes, rules, launch.model)
        hardware = rules.hardware.hardware_for_runner(launch.runner)
        if match is None or hardware is None:
            continue
        recipe, tag = match
        model, gpus = found.setdefault((recipe.path, tag), (launch.model, []))
        if model == launch.model and hardware not in gpus:
            gpus.append(hardware)
    out = []
    for (path, tag), (model, gpus) in found.items():
        size, sibling = _scaled_vram(recipes.by_path[path], tag, rules.models.checkpoint_tags)
        out.append(NewVariant(path, tag, model, tuple(sorted(gpus)), None, size, sibling))
    return tuple(out)


def _scaled_vram(recipe: Recipe, tag: str, bits: Mapping[str, int]) -> tuple[int | None, str]:
    """The first sibling variant with a size and a precision of known bits, scaled by the
    ratio of bits per weight (MiniMax-M3: mxfp8 513 GB → mxfp4 257, as maintainers wrote)."""
    for key, variant in recipe.variants.items():
        if not isinstance(variant, Mapping):
            continue
        size, precision = variant.get("vram_minimum_gb"), variant.get("precision")
        if isinstance(size, int | float) and isinstance(precision, str) and precision in bits:
            return math.ceil(size * bits[tag] / bits[precision]), f"variant {key} ({precision})"
    return None, ""


def with_tp(variant: NewVariant, tps: Sequence[int]) -> NewVariant:
    """The skeleton with the lane's TP when every eval point of it ran the same one."""
    distinct = set(tps)
    if len(distinct) != 1:
        return variant
    return NewVariant(
        variant.recipe_path,
        variant.key,
        variant.model_id,
        variant.hardware,
        distinct.pop(),
        variant.vram_minimum_gb,
        variant.vram_from,
    )
