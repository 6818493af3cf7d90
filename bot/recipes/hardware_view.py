"""What a rendering can read of its hardware profile, so GPUs that look alike share one.

The JSON API renders every (variant, strategy, node count, …) once per hardware profile, but a
rendering reads only a few facts of the profile: the GPU count, the brand, the image it
resolves to, the TP a VRAM floor gives, and the generation or id only where the recipe or a
strategy keys a mapping by them (``hardware_overrides.mi355x``, ``hardware_overrides.
blackwell``, a mode's ``hardware`` gate). Two profiles with one :func:`hardware_view` render
the same JSON but for its ``hardware`` field: over the corpus of 2026-08-21, 15,075
renderings come from 6,967 views, and rendering each view once takes about a third off the
time the JSON API spends rendering (docs/speed.md).

Everything the rendering modules (deploy, nodes, pd, mooncake, layers, rendering,
command_text) read of a :class:`HardwareProfile` must be in the view; a new read of the
profile there needs its fact here. ``tests/recipes/test_hardware_view.py`` renders the
corpus with and without sharing and compares every file.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from bot.recipes.command_text import docker_flags_key
from bot.recipes.jsvalues import as_dict
from bot.recipes.layers import NVL4_HARDWARE
from bot.recipes.nodes import single_node_size
from bot.recipes.rendering import variant_image
from bot.recipes.repo import HardwareProfile, Recipe, RecipesRepo

# compared by value, not looked up: a CPU's TP is not capped at its GPU count, an XPU's
# image is its own
GENERATIONS_COMPARED = ("cpu", "xpu")


def hardware_view(
    repo: RecipesRepo, recipe: Recipe, variant_key: str, hw: HardwareProfile
) -> tuple[Hashable, ...]:
    """The facts of ``hw`` a rendering of ``recipe``'s variant can read (see the module)."""
    return recipe.memoised(
        ("hardware-view", variant_key, hw.id), _view, repo, recipe, variant_key, hw
    )


def _view(
    repo: RecipesRepo, recipe: Recipe, variant_key: str, hw: HardwareProfile
) -> tuple[Hashable, ...]:
    keys = mapping_keys(repo, recipe)
    generation = hw.generation
    image, origin = variant_image(recipe, variant_key, hw)
    tp = single_node_size(recipe, as_dict(recipe.variants.get(variant_key)), hw, "single_node_tp")
    return (
        hw.id if hw.id in keys else None,
        hw.id in NVL4_HARDWARE,
        generation if generation in keys or generation in GENERATIONS_COMPARED else None,
        hw.brand,
        hw.docker_brand,
        docker_flags_key(hw.docker_brand, generation),
        hw.gpus,
        tp,
        image,
        origin,
    )


def mapping_keys(repo: RecipesRepo, recipe: Recipe) -> frozenset[Any]:
    """Every mapping key a rendering of ``recipe`` can look a hardware id or generation up
    in: the recipe but its ``meta`` (read by the API's choice of hardware, select.py, never
    by a rendering), every strategy and KV store, and the taxonomy's KV-offload options."""
    shared = repo.memoised("rendering-mapping-keys", _shared_keys)
    return recipe.memoised("rendering-mapping-keys", _recipe_keys, recipe, shared)


def _shared_keys(repo: RecipesRepo) -> frozenset[Any]:
    found: set[Any] = set()
    for strategy in repo.strategies.values():
        _collect(strategy.data, found)
    _collect(as_dict(repo.taxonomy).get("kv_offload"), found)
    return frozenset(found)


def _recipe_keys(recipe: Recipe, shared: frozenset[Any]) -> frozenset[Any]:
    found = set(shared)
    _collect({k: v for k, v in recipe.data.items() if k != "meta"}, found)
    return frozenset(found)


def _collect(value: Any, found: set[Any]) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
