"""Which recipe rendering a benchmark launch line corresponds to (docs/alignment.md §3).

Pure: a :class:`~bot.benchmarks.LaunchLine`, the recipes repository and the rules go in; a
:class:`Profile` (recipe file, variant, hardware, strategy, features, modes) or an
:class:`Unmapped` with a reason a maintainer can act on comes out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bot.benchmarks import LaunchLine
from bot.errors import RecipeSyncError
from bot.recipes import Coordinates, Recipe, RecipesRepo, RenderRequest, render
from bot.recipes.select import kept_strategies
from bot.rules import Rules
from bot.vllm import normalise

# `rejection_sample_method: synthetic` or a preset acceptance makes an arm a throughput
# measurement; such an arm never stands for the published recipe.
SYNTHETIC_KEYS = ("synthetic_acceptance_length", "synthetic_acceptance_rates")


@dataclass(frozen=True)
class Profile:
    """One recipe profile, resolved enough to render."""

    recipe_path: str
    model: str  # the recipe's hf_id (what RenderRequest.model takes)
    variant: str
    hardware: str
    strategy: str
    features: tuple[str, ...]
    modes: Mapping[str, str] = field(default_factory=dict)
    represents_recipe: bool = True  # False for synthetic-acceptance throughput arms
    note: str = ""  # why it does not represent the recipe, when it does not

    @property
    def coordinates(self) -> Coordinates:
        return Coordinates(
            self.model,
            self.hardware,
            self.strategy,
            self.variant,
            self.features,
            tuple(self.modes.items()),
        )

    def request(self) -> RenderRequest:
        return self.coordinates.request()

    @property
    def key(self) -> tuple[Any, ...]:
        """Identity of the rendering: equal keys render the same command."""
        return (
            self.recipe_path,
            self.variant,
            self.hardware,
            self.strategy,
            self.features,
            tuple(sorted(self.modes.items())),
        )

    @property
    def label(self) -> str:
        """``DeepSeek-V4.1-Flash mi355x single_node_tp (spec_decoding=dspark, text_only)``."""
        name = self.recipe_path.rsplit("/", 1)[-1].removesuffix(".yaml")
        extras = [
            f"{feature}={self.modes[feature]}" if feature in self.modes else feature
            for feature in self.features
        ]
        return f"{name} {self.hardware} {self.strategy}" + (
            f" ({', '.join(extras)})" if extras else ""
        )


@dataclass(frozen=True)
class Unmapped:
    kind: str  # framework | model | variant | hardware | strategy | launch
    reason: str


def synthetic_acceptance(argv: Sequence[str]) -> bool:
    """True when the launch line's --speculative-config uses synthetic acceptance."""
    setting = normalise(list(argv)).get("speculative_config")
    value = setting.value if setting is not None else None
    if not isinstance(value, Mapping):
        return False
    return value.get("rejection_sample_method") == "synthetic" or any(
        key in value for key in SYNTHETIC_KEYS
    )


def find_recipe(
    recipes: RecipesRepo, rules: Rules, model: str, precision: str
) -> tuple[Recipe, str] | Unmapped:
    """(recipe, variant key) for a benchmark MODEL, by hf_id, variant model_id, then rules."""
    recipe = recipes.by_hf_id.get(model)
    if recipe is not None:
        return recipe, _variant_for_precision(rules, model, precision) or _serving_variant(
            recipe, model
        )
    for candidate in recipes.recipes:
        for key, variant in candidate.variants.items():
            if isinstance(variant, Mapping) and variant.get("model_id") == model:
                return candidate, key
    for rule in rules.models.models:
        if rule.benchmark_model != model:
            continue
        path = f"models/{rule.recipe}.yaml"
        target = recipes.by_path.get(path)
        if target is None:
            return Unmapped("model", f"rules/models.yaml maps {model} to {path}, which is missing")
        variant_key = rule.precisions.get(precision) or rule.variant or "default"
        if variant_key not in target.variants:
            return Unmapped("variant", f"{path} has no variant '{variant_key}' for {model}")
        return target, variant_key
    return Unmapped("model", f"no recipe for model {model}")


def _serving_variant(recipe: Recipe, model: str) -> str:
    """The variant that serves checkpoint ``model`` (the recipe's own hf_id).

    Usually ``default``; but a recipe may point ``default`` at a newer checkpoint and keep the
    original under another key that inherits the hf_id (seen in the real corpus: the default
    DeepSeek-V4-Pro variant moved to a dated release while benchmarks still serve the
    original). Comparing against the moved default would report the checkpoint as drift.
    """
    default = recipe.variants.get("default")
    if not isinstance(default, Mapping) or default.get("model_id") in (None, model):
        return "default"
    for key, variant in recipe.variants.items():
        if isinstance(variant, Mapping) and variant.get("model_id") in (None, model):
            return key
    return "default"


def _variant_for_precision(rules: Rules, model: str, precision: str) -> str | None:
    for rule in rules.models.models:
        if rule.benchmark_model == model:
            return rule.precisions.get(precision) or rule.variant
    return None


def strategy_for(launch: LaunchLine) -> str:
    """Benchmark parallelism → recipes strategy (docs/alignment.md §3)."""
    if launch.point.dp_attn:
        return "single_node_dep"
    if launch.point.ep > 1:
        return "single_node_tep"
    return "single_node_tp"


def map_profile(recipes: RecipesRepo, rules: Rules, launch: LaunchLine) -> Profile | Unmapped:
    """The recipe profile ``launch`` corresponds to, or why there is none."""
    if launch.framework != "vllm":
        reason = rules.models.unrendered_frameworks.get(
            launch.framework, f"framework {launch.framework} is not rendered by vLLM recipes"
        )
        return Unmapped("framework", reason)
    found = find_recipe(recipes, rules, launch.model, launch.precision)
    if isinstance(found, Unmapped):
        return found
    recipe, variant = found
    if recipe.is_omni:
        return Unmapped("model", f"{recipe.path} is an omni recipe; the JSON API renders none")
    hardware = rules.hardware.hardware_for_runner(launch.runner)
    if hardware is None:
        return Unmapped("hardware", f"no rule in rules/hardware.yaml maps runner {launch.runner}")
    profile_hw = recipes.hardware.get(hardware)
    if profile_hw is None:
        return Unmapped("hardware", f"hardware {hardware} is not in the recipes taxonomy")
    meta_hw = recipe.data.get("meta", {}).get("hardware") or {}
    if isinstance(meta_hw, Mapping) and meta_hw.get(hardware) == "unsupported":
        return Unmapped("hardware", f"{recipe.path} marks {hardware} unsupported")
    strategy = strategy_for(launch)
    if strategy not in kept_strategies(recipes, recipe, profile_hw):
        return Unmapped("strategy", f"{recipe.path} does not offer {strategy} on {hardware}")
    base = Profile(
        recipe_path=recipe.path,
        model=recipe.hf_id,
        variant=variant,
        hardware=hardware,
        strategy=strategy,
        features=(),
    )
    try:
        features, modes = infer_features(recipes, base, launch.argv)
    except RecipeSyncError as err:
        return Unmapped("launch", f"cannot render {base.label}: {err}")
    workload = rules.policy.workload_feature(launch.point.scenario)
    declared = recipe.data.get("features") or {}
    if workload is not None and workload.feature in declared and workload.feature not in features:
        # the recipe's opt-in feature for this workload is what the benchmark measures
        features = (*features, workload.feature)
    profile = replace(base, features=features, modes=modes)
    if synthetic_acceptance(launch.argv):
        return replace(
            profile,
            represents_recipe=False,
            note="throughput arm with synthetic acceptance: context only, never the recipe",
        )
    return profile


def _flags(tokens: Sequence[str]) -> dict[str, Any]:
    """Canonical key → canonical value of the flags in ``tokens`` (vLLM's parser rules)."""
    config = normalise(["vllm", "serve", "_", *tokens])
    return {s.key: s.value for s in config.settings if s.spec is not None}


def _feature_units(recipes: RecipesRepo, profile: Profile, feature: str, mode: str | None) -> Any:
    """The argv units ``feature`` (in ``mode``) emits on this profile, with their paths."""
    request = replace(profile.request(), features=(feature,), modes={feature: mode} if mode else {})
    command = render(recipes, request).commands[0]
    prefix = f"features.{feature}."
    return [unit for unit in command.args if unit.path.startswith(prefix)]


def _match_score(units: Any, bench: Mapping[str, Any]) -> int:
    """How well a feature's units match the launch line: flags present, values equal."""
    tokens = [t for unit in units for t in (unit.flag, unit.value) if t is not None]
    score = 0
    for key, value in _flags(tokens).items():
        if key not in bench:
            continue
        score += 1
        other = bench[key]
        if isinstance(value, Mapping) and isinstance(other, Mapping):
            # JSON configs: the method decides the mode; other equal keys break ties
            if value.get("method") is not None and value.get("method") == other.get("method"):
                score += 100
            score += sum(1 for k, v in value.items() if other.get(k) == v)
        elif json.dumps(value, sort_keys=True, default=str) == json.dumps(
            other, sort_keys=True, default=str
        ):
            score += 1
    return score


def infer_features(
    recipes: RecipesRepo, profile: Profile, argv: Sequence[str]
) -> tuple[tuple[str, ...], dict[str, str]]:
    """Features on in ``argv`` (a feature is on when its args appear in it) and, for modal
    features, the mode whose args match best (``--speculative-config``'s method decides)."""
    bench = _flags(list(argv[3:]) if argv[:2] == ("vllm", "serve") else list(argv))
    recipe = recipes.by_path[profile.recipe_path]
    declared = recipe.data.get("features") or {}
    on: list[str] = []
    modes: dict[str, str] = {}
    for feature, spec in declared.items():
        mode_names = list((spec or {}).get("modes") or {}) if isinstance(spec, Mapping) else []
        if not mode_names:
            units = _feature_units(recipes, profile, feature, None)
            if units and _match_score(units, bench) > 0:
                on.append(feature)
            continue
        best: tuple[int, str] | None = None
        for mode in mode_names:
            units = _feature_units(recipes, profile, feature, mode)
            # a mode not allowed here falls back to another: count only this mode's units
            own = [u for u in units if f".modes.{mode}." in u.path]
            score = _match_score(own, bench) if own else 0
            if score > 0 and (best is None or score > best[0]):
                best = (score, mode)
        if best is not None:
            on.append(feature)
            modes[feature] = best[1]
    return tuple(on), modes
