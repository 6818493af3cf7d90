"""What the JSON API renders: hardware list, variant substitution, strategies, node counts.

These are the builder's choices (docs/spec/recipe-rendering.md §5), separate from how one profile
renders
(``deploy.py``). ``plan_hardware`` answers, for one (recipe, variant, hardware): which
strategies are offered, which one is recommended with how many nodes, and how every
alternative is shaped (PD node shapes, the Mooncake serving strategy).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.recipes.jsvalues import as_dict, first_present, is_number
from bot.recipes.layers import hw_keyed
from bot.recipes.pd import effective_compatible, role_parallelism
from bot.recipes.rendering import ResolvedRendering
from bot.recipes.repo import HardwareProfile, Recipe, RecipesRepo, Strategy

BLACKWELL_DEFAULTS = ("b200", "gb200")
FALLBACK_HARDWARE = "h200"
MAX_PD_NODES = 4


# ---------------------------------------------------------------------------- hardware


def precision_constraint(variant: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """(brand, generation) the variant needs: precision_hardware, or NVIDIA Blackwell for FP4."""
    explicit = variant.get("precision_hardware")
    if isinstance(explicit, dict) and explicit:
        return explicit.get("brand"), explicit.get("generation")
    if variant.get("precision") in ("nvfp4", "fp4"):
        return "NVIDIA", "blackwell"
    return None


def meets(constraint: tuple[Any, Any] | None, hw: HardwareProfile) -> bool:
    if constraint is None:
        return True
    brand, generation = constraint
    if brand is not None and hw.brand != brand:
        return False
    return generation is None or generation in hw.generations


def passes_allowlist(variant: Mapping[str, Any], hw: HardwareProfile) -> bool:
    allow = variant.get("supported_hardware")
    return not isinstance(allow, list) or hw.id in allow


def candidate_hardware(
    repo: RecipesRepo, recipe: Recipe, variant: Mapping[str, Any]
) -> list[HardwareProfile]:
    meta_hw = as_dict(as_dict(recipe.data.get("meta")).get("hardware"))
    constraint = precision_constraint(variant)
    found = []
    for hw in repo.hardware.values():
        if not meets(constraint, hw) or meta_hw.get(hw.id) == "unsupported":
            continue
        if not passes_allowlist(variant, hw):
            continue
        if hw.restricted and hw.id not in meta_hw:
            continue
        found.append(hw)
    return found


def default_hardware(
    recipe: Recipe, variant: Mapping[str, Any], candidates: list[HardwareProfile]
) -> str:
    ids = [hw.id for hw in candidates]
    preferred = as_dict(recipe.data.get("meta")).get("default_hardware")
    if preferred in ids:
        return str(preferred)
    constraint = precision_constraint(variant)
    if constraint is not None and constraint[1] == "blackwell":
        for hw_id in BLACKWELL_DEFAULTS:
            if hw_id in ids:
                return hw_id
    if FALLBACK_HARDWARE in ids:
        return FALLBACK_HARDWARE
    if not candidates:
        return FALLBACK_HARDWARE
    order = {"NVIDIA": 0, "AMD": 1}
    ranked = sorted(candidates, key=lambda hw: (order.get(hw.brand, 2), hw.id))
    return ranked[0].id


def hardware_order(repo: RecipesRepo, recipe: Recipe, variant_key: str) -> tuple[str, list[str]]:
    """(default hardware, rendering order): the default first, then the candidates."""
    variant = as_dict(recipe.variants.get(variant_key))
    candidates = candidate_hardware(repo, recipe, variant)
    default = default_hardware(recipe, variant, candidates)
    order = [default] + [hw.id for hw in candidates if hw.id != default]
    return default, [hw_id for hw_id in order if hw_id in repo.hardware]


def _too_big(variant: Mapping[str, Any], hw: HardwareProfile) -> bool:
    minimum = variant.get("vram_minimum_gb")
    return is_number(minimum) and hw.vram_gb is not None and minimum > hw.vram_gb


def substitute_variant(recipe: Recipe, variant_key: str, hw: HardwareProfile) -> str | None:
    """On non-scalable hardware a variant that does not fit is replaced by the largest fit."""
    variant = as_dict(recipe.variants.get(variant_key))
    if hw.scalable or not _too_big(variant, hw):
        return variant_key
    best: str | None = None
    best_size: float = -math.inf
    for key, other in recipe.variants.items():
        other = as_dict(other)
        if not meets(precision_constraint(other), hw) or not passes_allowlist(other, hw):
            continue
        if _too_big(other, hw):
            continue
        raw = other.get("vram_minimum_gb")
        size: float = raw if is_number(raw) else -math.inf
        if best is None or size > best_size:
            best, best_size = key, size
    return best


# ---------------------------------------------------------------------------- strategies


def strategy_floor(recipe: Recipe, key: str, hw: HardwareProfile) -> Any:
    """strategy_min_gpus for ``key`` (a strategy id, or tp/tep/dep for PD pools)."""
    floors = recipe.data.get("strategy_min_gpus")
    if is_number(floors):
        return floors
    if not isinstance(floors, dict):
        return 0

    def look(mapping: Mapping[str, Any]) -> Any:
        return first_present(
            mapping.get(key),
            mapping.get("multi_node_" + key),
            mapping.get("single_node_" + key),
            0,
        )

    per_hw = floors.get(hw.id)
    if isinstance(per_hw, dict):
        hw_floor = look(per_hw)
    elif is_number(per_hw):
        hw_floor = per_hw
    else:
        hw_floor = 0
    base = look(floors)
    base = base if is_number(base) else 0
    hw_floor = hw_floor if is_number(hw_floor) else 0
    return max(base, hw_floor)


def floor_nodes(recipe: Recipe, key: str, hw: HardwareProfile) -> int:
    per_node = hw.gpu_count or 8
    return math.ceil(strategy_floor(recipe, key, hw) / per_node) or 1


def kept_strategies(repo: RecipesRepo, recipe: Recipe, hw: HardwareProfile) -> list[str]:
    """Strategies offered on ``hw``: compatible ones that pass the gates, then Mooncake."""
    # the same for every variant of the recipe (~2 plans per recipe and hardware)
    return list(recipe.memoised(("kept-strategies", hw.id), _kept_strategies, repo, recipe, hw))


def _kept_strategies(repo: RecipesRepo, recipe: Recipe, hw: HardwareProfile) -> list[str]:
    listed = recipe.data.get("compatible_strategies")
    listed = listed if isinstance(listed, list) else []
    per_strategy = as_dict(recipe.data.get("strategy_hardware"))
    kv_gates = as_dict(recipe.data.get("kv_cache_strategy_hardware"))
    kept: list[str] = []
    for name in dict.fromkeys([*effective_compatible(recipe), *repo.kv_ids]):
        strategy = repo.strategies.get(name)
        if strategy is None:
            continue
        if strategy.is_kv:
            gate = as_dict(kv_gates.get(name)).get(hw.id)
            if hw.scalable and hw.brand in ("NVIDIA", "AMD") and gate != "unsupported":
                kept.append(name)
            continue
        keyed = hw_keyed(per_strategy.get(name), hw)
        allowed = keyed[1] == "supported" if keyed is not None else name in listed
        spread = 16 if strategy.is_multi_node or strategy.is_pd else 1
        reachable = spread * (hw.gpu_count or 8) >= strategy_floor(recipe, name, hw)
        clusters = strategy.is_multi_node or strategy.is_pd
        if allowed and reachable and (hw.scalable or not clusters):
            kept.append(name)
    return kept


def recommend(repo: RecipesRepo, recipe: Recipe, nodes: int) -> str:
    """The builder's recommendation for a node count, before the offered-set check."""
    compatible = effective_compatible(recipe)
    preferred = recipe.data.get("default_strategy")
    if isinstance(preferred, str) and preferred in compatible:
        if nodes > 1 and preferred.startswith("single_node_"):
            sibling = "multi_node_" + preferred[len("single_node_") :]
            if sibling in compatible:
                return sibling
        else:
            return preferred
    if nodes > 1:
        for name in ("multi_node_tp", "multi_node_dep", "multi_node_tep"):
            if name in compatible:
                return name
    if "single_node_tp" in compatible:
        return "single_node_tp"
    if compatible:
        return compatible[0]
    return "single_node_tp"


def default_features(
    recipe: Recipe, variant: Mapping[str, Any], hw: HardwareProfile
) -> tuple[str, ...]:
    """API features: all but opt-in ones, plus those a variant's default_modes force on."""
    opt_in = recipe.data.get("opt_in_features")
    off = set(opt_in) if isinstance(opt_in, list) else set()
    hw_off = as_dict(recipe.data.get("hardware_opt_in_features")).get(hw.id)
    if isinstance(hw_off, list):
        off.update(hw_off)
    forced = as_dict(variant.get("default_modes"))
    return tuple(
        name for name in as_dict(recipe.data.get("features")) if name in forced or name not in off
    )


@dataclass(frozen=True)
class Choice:
    """One strategy as the API renders it on one hardware."""

    strategy: str
    nodes: int
    pd_nodes: Mapping[str, Any] | None = None
    serving: str | None = None


@dataclass(frozen=True)
class HardwarePlan:
    hw: HardwareProfile
    variant_key: str  # after non-scalable substitution
    kept: tuple[str, ...]
    base_nodes: int
    recommended: Choice | None  # None: nothing offered on this hardware
    alternatives: tuple[Choice, ...]
    features: tuple[str, ...]

    def choice(self, strategy: str) -> Choice | None:
        if self.recommended is not None and self.recommended.strategy == strategy:
            return self.recommended
        for alternative in self.alternatives:
            if alternative.strategy == strategy:
                return alternative
        return None


def _fits(variant: Mapping[str, Any], hw: HardwareProfile) -> bool:
    return not _too_big(variant, hw)


def pd_shape(
    recipe: Recipe, strategy: Strategy, variant: Mapping[str, Any], hw: HardwareProfile
) -> tuple[bool, dict[str, int] | None]:
    """(offered, pdNodes) the API passes for pd_cluster on this hardware
    (docs/spec/recipe-rendering.md §4.3)."""
    minimum = variant.get("vram_minimum_gb")
    vram = hw.vram_gb
    if hw.gpus >= 2 and is_number(minimum) and vram is not None and vram >= 2 * minimum:
        return True, None
    if not is_number(minimum) or not minimum or vram is None or not vram:
        return True, None
    per_node = math.ceil(minimum / vram)
    if per_node > MAX_PD_NODES:
        return False, None
    shape = {}
    for role in ("prefill", "decode"):
        parallelism = role_parallelism(recipe, strategy, role)
        shape[role] = max(per_node, floor_nodes(recipe, parallelism, hw))
    return True, shape


def mooncake_serving(
    repo: RecipesRepo,
    recipe: Recipe,
    variant: Mapping[str, Any],
    hw: HardwareProfile,
    nodes: int | None = None,
) -> tuple[str, int] | None:
    """(serving strategy, nodes per instance) for a Mooncake rendering.

    ``nodes`` fixes the node count per instance (a direct request); by default it is 1 if
    the variant fits one node, else 2 (the JSON API).
    """
    compatible = effective_compatible(recipe)

    def fitting(name: str, nodes: int) -> bool:
        strategy = repo.strategies.get(name)
        if strategy is None or strategy.is_pd or strategy.is_kv:
            return False
        return strategy.is_multi_node == (nodes > 1)

    def choose(nodes: int) -> str | None:
        recommended = recommend(repo, recipe, nodes)
        if fitting(recommended, nodes):
            return recommended
        for name in compatible:
            if fitting(name, nodes):
                return name
        return None

    if nodes is not None:
        serving = choose(nodes) or choose(1 if nodes > 1 else 2)
        return (serving, nodes) if serving is not None else None
    nodes = 1 if _fits(variant, hw) else 2
    serving = choose(nodes)
    if serving is None and nodes == 2:
        nodes = 1
        serving = choose(nodes)
    if serving is None:
        return None
    if repo.strategies[serving].is_multi_node:
        nodes = max(nodes, floor_nodes(recipe, serving, hw))
    return serving, nodes


def choice_for(
    repo: RecipesRepo,
    recipe: Recipe,
    variant: Mapping[str, Any],
    hw: HardwareProfile,
    name: str,
    base_nodes: int | None = None,
) -> Choice | None:
    """How the API shapes strategy ``name`` (recommended when ``base_nodes`` is given)."""
    strategy = repo.strategies[name]
    if strategy.is_pd:
        offered, shape = pd_shape(recipe, strategy, variant, hw)
        return Choice(name, 1, pd_nodes=shape) if offered else None
    if strategy.is_kv:
        serving = mooncake_serving(repo, recipe, variant, hw)
        if serving is None:
            return None
        return Choice(name, serving[1], serving=serving[0])
    minimum = max(2 if strategy.is_multi_node else 1, floor_nodes(recipe, name, hw))
    if base_nodes is not None:
        return Choice(name, max(base_nodes, minimum))
    return Choice(name, minimum)


def plan_hardware(
    repo: RecipesRepo,
    recipe: Recipe,
    variant_key: str,
    hw: HardwareProfile,
    substitute: bool = True,
) -> HardwarePlan | None:
    """The API's plan for one hardware, or None when it renders nothing there."""
    if substitute:
        chosen = substitute_variant(recipe, variant_key, hw)
        if chosen is None:
            return None
        variant_key = chosen
    variant = as_dict(recipe.variants.get(variant_key))
    kept = kept_strategies(repo, recipe, hw)
    multi = any(repo.strategies[name].is_multi_node for name in kept)
    base = 2 if _too_big(variant, hw) and multi and hw.scalable else 1
    recommended_name: str | None = recommend(repo, recipe, base)
    if recommended_name not in kept:
        plain = [n for n in kept if not repo.strategies[n].is_kv and not repo.strategies[n].is_pd]
        not_kv = [n for n in kept if not repo.strategies[n].is_kv]
        recommended_name = next(iter(plain or not_kv), None)
    features = default_features(recipe, variant, hw)
    if recommended_name is None:
        return HardwarePlan(hw, variant_key, tuple(kept), base, None, (), features)
    recommended = choice_for(repo, recipe, variant, hw, recommended_name, base_nodes=base)
    alternatives = []
    for name in kept:
        if name == recommended_name:
            continue
        choice = choice_for(repo, recipe, variant, hw, name)
        if choice is not None:
            alternatives.append(choice)
    return HardwarePlan(
        hw, variant_key, tuple(kept), base, recommended, tuple(alternatives), features
    )


def profile_for(
    repo: RecipesRepo,
    recipe: Recipe,
    plan: HardwarePlan,
    choice: Choice,
    features: tuple[str, ...] | None = None,
    modes: Mapping[str, str] | None = None,
) -> ResolvedRendering:
    strategy = repo.strategies[choice.strategy]
    return ResolvedRendering(
        recipe=recipe,
        variant_key=plan.variant_key,
        hw=plan.hw,
        strategy=strategy,
        nodes=choice.nodes,
        features=plan.features if features is None else features,
        modes=modes or {},
        pd_nodes=choice.pd_nodes,
        serving=repo.strategies[choice.serving] if choice.serving else None,
    )
