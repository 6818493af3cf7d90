"""Render one profile on request, with provenance (what the alignment planner calls).

A :class:`RenderRequest` names a model (a recipe's hf_id or a promoted variant's model_id)
and a hardware id; anything left ``None`` is filled in the way the JSON API would (variant
substitution, recommended strategy, node count, default features, PD node shapes, Mooncake
serving strategy). Explicit values are rendered as given, like upstream's renderer does for
the site's pickers (non-default variants, selected modes, feature sets, 1–3 nodes...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bot.errors import InputError, Location, RecipeSyncError
from bot.recipes.api import variant_jobs
from bot.recipes.deploy import render_profile
from bot.recipes.jsvalues import as_dict
from bot.recipes.rendering import CommandRendering, ResolvedRendering
from bot.recipes.repo import Recipe, RecipesRepo
from bot.recipes.select import (
    choice_for,
    default_features,
    mooncake_serving,
    plan_hardware,
    substitute_variant,
)

REQUEST = "render request"


@dataclass(frozen=True)
class RenderRequest:
    """One profile to render; ``None`` fields are resolved as the JSON API would."""

    model: str  # hf_id of a recipe file, or a promoted variant's model_id
    hardware: str  # taxonomy id
    strategy: str | None = None  # None → the strategy the JSON API recommends
    variant: str | None = None  # variant key; None → the API's (default, or substituted)
    # None → the API's default set (declaration order); a tuple is emitted in its own order
    features: tuple[str, ...] | None = None
    modes: Mapping[str, str] = field(default_factory=dict)  # feature → selected mode
    nodes: int | None = None  # None → the API's node count (per instance for Mooncake)
    # PD nodes per role (0 = co-located), or {"nodes", "rank", "parallelism"} per role
    pd_nodes: Mapping[str, int | Mapping[str, Any]] | None = None
    serving_strategy: str | None = None  # Mooncake serving strategy; None → the API's
    instances: int | None = None  # Mooncake instances; None → the deployment's default
    # what only the site's pickers render (never the JSON API):
    advanced_args: tuple[str, ...] = ()  # "advanced" extra args, after the strategy layers
    kv_offload: str | None = None  # a taxonomy kv_offload option (gates apply)
    pd_kv_store: str | None = None  # a Mooncake deployment composed with pd_cluster


RenderingKey = tuple[str, str, str]  # (variant, hardware, strategy)


@dataclass(frozen=True)
class Coordinates:
    """Which rendering of a recipe: what a recipe profile, a regression-matrix row and a
    JSON API file each name (hashable, unlike the request it makes)."""

    model: str  # the API base: hf_id or a promoted variant's model_id
    hardware: str
    strategy: str
    variant: str
    features: tuple[str, ...] | None = None  # None: the API's default features
    modes: tuple[tuple[str, str], ...] = ()  # (feature, mode) pairs

    def request(self) -> RenderRequest:
        return RenderRequest(
            model=self.model,
            hardware=self.hardware,
            strategy=self.strategy,
            variant=self.variant,
            features=self.features,
            modes=dict(self.modes),
        )

    @property
    def rendering_key(self) -> RenderingKey:
        """(variant, hardware, strategy): the rendering whatever its features."""
        return (self.variant, self.hardware, self.strategy)


def api_coordinates(files: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, Coordinates]]:
    """(path, coordinates) of each JSON API file (:func:`bot.recipes.api.build_api`)."""
    return [
        (
            path,
            Coordinates(
                model=path.split("/hw/", 1)[0],
                hardware=str(data.get("hardware")),
                strategy=str(data.get("strategy")),
                variant=str(data.get("variant")),
            ),
        )
        for path, data in files.items()
    ]


@dataclass(frozen=True)
class Rendering:
    request: RenderRequest  # with variant/strategy/nodes/features resolved
    recipe_path: str  # e.g. models/deepseek-ai/DeepSeek-V4-Flash.yaml
    json: Mapping[str, Any]  # what upstream writes for this profile (alternative-file shape)
    commands: tuple[CommandRendering, ...]
    image: str | None
    image_origin: str | None  # e.g. "model.docker_image.amd", "default-image:nvidia"


def _bad(key: str, reason: str) -> InputError:
    return InputError(Location(REQUEST, key), reason)


def find_model(repo: RecipesRepo, model: str) -> tuple[Recipe, str]:
    """(recipe, variant key) that the API renders under ``model``."""
    recipe = repo.by_hf_id.get(model)
    if recipe is not None:
        return recipe, "default"
    for job in reversed(variant_jobs(repo)):  # the last promotion of an id wins
        if job.promoted and job.base == model:
            return repo.by_path[job.recipe_path], job.variant_key
    raise _bad("model", f"no recipe or promoted variant is served as '{model}'")


def resolve(repo: RecipesRepo, request: RenderRequest) -> tuple[ResolvedRendering, RenderRequest]:
    """The full profile for ``request`` and the request with every default filled in."""
    recipe, variant_key = find_model(repo, request.model)
    hw = repo.hardware.get(request.hardware)
    if hw is None:
        raise _bad("hardware", f"unknown hardware id '{request.hardware}'")
    if request.variant is not None:
        if request.variant not in recipe.variants:
            known = ", ".join(recipe.variants)
            raise _bad("variant", f"{recipe.path} has no variant '{request.variant}' ({known})")
        variant_key = request.variant
    else:
        variant_key = substitute_variant(recipe, variant_key, hw) or variant_key
    variant = as_dict(recipe.variants.get(variant_key))
    plan = plan_hardware(repo, recipe, variant_key, hw, substitute=False)

    if request.strategy is not None:
        if request.strategy not in repo.strategies:
            raise _bad("strategy", f"unknown strategy '{request.strategy}'")
        strategy_name = request.strategy
    elif plan is not None and plan.recommended is not None:
        strategy_name = plan.recommended.strategy
    else:
        raise _bad(
            "strategy",
            f"the JSON API offers no strategy for {request.model} on {hw.id}; name one",
        )
    strategy = repo.strategies[strategy_name]
    choice = plan.choice(strategy_name) if plan is not None else None
    if choice is None:
        choice = choice_for(repo, recipe, variant, hw, strategy_name)

    nodes = request.nodes
    if nodes is None:
        nodes = choice.nodes if choice is not None else 1
    elif nodes < 1:
        raise _bad("nodes", "the node count must be at least 1")
    pd_nodes = request.pd_nodes
    if pd_nodes is None and request.nodes is None and choice is not None:
        pd_nodes = choice.pd_nodes
    serving = None
    if strategy.is_kv:
        name = request.serving_strategy
        if name is None:
            picked = mooncake_serving(repo, recipe, variant, hw, request.nodes)
            if picked is None:
                raise _bad("strategy", f"no serving strategy for {strategy_name} on {hw.id}")
            name = picked[0]
            if request.nodes is None:
                nodes = picked[1]
        serving = repo.strategies.get(name)
        if serving is None or serving.is_kv or serving.is_pd:
            raise _bad("serving_strategy", f"'{name}' cannot serve a KV-store deployment")

    features = request.features
    declared = as_dict(recipe.data.get("features"))
    if features is None:
        features = default_features(recipe, variant, hw)
    else:
        unknown = [name for name in features if name not in declared]
        if unknown:
            raise _bad("features", f"{recipe.path} has no feature {', '.join(unknown)}")
        # the caller's order, as upstream's resolveCommand emits an explicit list (the site
        # appends a feature when it is ticked); only the API's default sets are declaration-ordered
        features = tuple(features)
    for feature, mode in request.modes.items():
        modes = as_dict(as_dict(declared.get(feature)).get("modes"))
        if not modes:
            raise _bad("modes", f"{recipe.path} has no feature '{feature}' with modes")
        if mode not in modes:
            raise _bad("modes", f"feature '{feature}' has no mode '{mode}' ({', '.join(modes)})")

    offload = None
    if request.kv_offload is not None:
        option = as_dict(repo.taxonomy.get("kv_offload")).get(request.kv_offload)
        if not isinstance(option, dict):
            raise _bad(
                "kv_offload", f"taxonomy.yaml has no kv_offload option '{request.kv_offload}'"
            )
        offload = (request.kv_offload, option)
    pd_kv = None
    if request.pd_kv_store is not None:
        pd_kv = repo.strategies.get(request.pd_kv_store)
        if pd_kv is None or not pd_kv.is_kv:
            raise _bad("pd_kv_store", f"'{request.pd_kv_store}' is not a KV-store deployment")
        if not strategy.is_pd:
            raise _bad("pd_kv_store", "a KV store composes with pd_cluster only")

    profile = ResolvedRendering(
        recipe=recipe,
        variant_key=variant_key,
        hw=hw,
        strategy=strategy,
        nodes=nodes,
        features=features,
        modes=dict(request.modes),
        pd_nodes=pd_nodes,
        serving=serving,
        instances=request.instances,
        advanced=tuple(request.advanced_args),
        kv_offload=offload,
        pd_kv=pd_kv,
    )
    resolved = replace(
        request,
        strategy=strategy_name,
        variant=variant_key,
        features=features,
        nodes=nodes,
        pd_nodes=pd_nodes,
        serving_strategy=serving.name if serving is not None else None,
    )
    return profile, resolved


MAX_MEMO = 50_000  # renderings kept per repository (a recipe has a few hundred)


def render(repo: RecipesRepo, request: RenderRequest) -> Rendering:
    """Render one profile with provenance. Raises InputError / RenderError (one line each).

    Memoised on the repository (immutable once loaded): the planner, the comparison and the
    regression matrix render the same profiles again, and a backtest reuses one repository
    per recipes commit across PRs."""
    key = repr(request)
    found = repo.renders.get(key)
    if found is None:
        try:
            found = _render(repo, request)
        except RecipeSyncError as err:
            found = err
        if len(repo.renders) < MAX_MEMO:
            repo.renders[key] = found
    if isinstance(found, RecipeSyncError):
        raise found
    assert isinstance(found, Rendering)
    return found


def _render(repo: RecipesRepo, request: RenderRequest) -> Rendering:
    profile, resolved = resolve(repo, request)
    rendered = render_profile(repo, profile, provenance=True)
    return Rendering(
        request=resolved,
        recipe_path=profile.recipe.path,
        json=rendered.json,
        commands=rendered.commands,
        image=rendered.image,
        image_origin=rendered.image_origin,
    )


def rendering_as_json(rendering: Rendering) -> dict[str, Any]:
    """A JSON-ready view of a rendering with its provenance (the CLI's output)."""
    request = rendering.request
    return {
        "recipe_path": rendering.recipe_path,
        "request": {
            "model": request.model,
            "hardware": request.hardware,
            "strategy": request.strategy,
            "variant": request.variant,
            "features": list(request.features or ()),
            "modes": dict(request.modes),
            "nodes": request.nodes,
            "pd_nodes": dict(request.pd_nodes) if request.pd_nodes is not None else None,
            "serving_strategy": request.serving_strategy,
            "instances": request.instances,
            "advanced_args": list(request.advanced_args),
            "kv_offload": request.kv_offload,
            "pd_kv_store": request.pd_kv_store,
        },
        "image": rendering.image,
        "image_origin": rendering.image_origin,
        "commands": [
            {
                "role": command.role,
                "rank": command.rank,
                "argv": list(command.argv),
                "env": dict(command.env),
                "args": [
                    {
                        "flag": unit.flag,
                        "value": unit.value,
                        "path": unit.path,
                        "shadowed": list(unit.shadowed),
                    }
                    for unit in command.args
                ],
                "env_origins": [
                    {
                        "name": origin.name,
                        "value": origin.value,
                        "path": origin.path,
                        "shadowed": list(origin.shadowed),
                    }
                    for origin in command.env_origins
                ],
            }
            for command in rendering.commands
        ],
        "rendering": rendering.json,
    }
