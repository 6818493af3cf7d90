"""Render one resolved profile into upstream's JSON shape, per deploy type
(docs/spec/recipe-rendering.md §3–§4).

A *profile* is fully resolved (recipe, variant key, hardware, strategy, node count, enabled
features, mode picks, PD node shapes, Mooncake serving strategy). The JSON API's choices of
those live in ``select.py``; here we only turn a profile into commands:

* single node (also a multi-node strategy asked for with one node),
* multi-node head + one command per follower rank,
* pd_cluster prefill / decode pools and the router,
* Mooncake KV-store composition around a serving strategy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bot.recipes.command_text import (
    DockerPrefix,
    docker_flags_key,
    docker_forms,
    docker_prefix,
    pip_tail,
    router_command,
)
from bot.recipes.jsvalues import as_dict, first_present, is_number, js_str, truthy
from bot.recipes.layers import (
    ArgOrigin,
    CommandLayers,
    EnvOrigin,
    Layered,
    RenderError,
    RenderTarget,
    gen_block,
    hw_keyed,
)
from bot.recipes.repo import HardwareProfile, Recipe, RecipesRepo, Strategy

DEFAULT_IMAGES = {
    "nvidia": "vllm/vllm-openai:latest",
    "amd": "vllm/vllm-openai-rocm:latest",
    "tpu": "vllm/vllm-tpu:latest",
    "intel": "vllm/vllm-openai-cpu:latest-x86_64",
}
NIGHTLY_IMAGES = {
    "nvidia": "vllm/vllm-openai:nightly",
    "amd": "vllm/vllm-openai-rocm:nightly",
    "tpu": "vllm/vllm-tpu:nightly",
}
XPU_IMAGE = "vllm/vllm-openai-xpu:latest"
IMAGE_BRANDS = ("nvidia", "amd", "tpu", "intel")
CUDA_KEYS = ("cu129", "cu130")
HEAD_ADDR = "$HEAD_IP"
ROUTER_INSTALL = "uv pip install vllm-router"


@dataclass(frozen=True)
class CommandRendering:
    """One rendered ``vllm serve`` command and where each of its pieces came from."""

    role: str  # "single" | "head" | "worker" | "prefill" | "decode" | "instance"
    argv: tuple[str, ...]  # ("vllm", "serve", model, ...)
    env: Mapping[str, Any]  # insertion order as rendered
    args: tuple[ArgOrigin, ...]  # one per emitted unit, argv order
    env_origins: tuple[EnvOrigin, ...]
    rank: int = 0


@dataclass(slots=True)  # not frozen: one per rendering, and frozen init is ~2.5x slower
class ResolvedRendering:
    """Every input of one rendering, resolved (not modified once built)."""

    recipe: Recipe
    variant_key: str
    hw: HardwareProfile
    strategy: Strategy  # the strategy of the file: a KV id for Mooncake
    nodes: int  # N; per instance for Mooncake
    features: tuple[str, ...]  # enabled features
    modes: Mapping[str, str] = field(default_factory=dict)
    pd_nodes: Mapping[str, Any] | None = None  # role → number or {nodes, rank, parallelism}
    serving: Strategy | None = None  # Mooncake: the serving strategy
    instances: int | None = None  # Mooncake: None → the deployment's default_instances
    advanced: tuple[str, ...] = ()  # UI "advanced" extra args (A10)
    kv_offload: tuple[str, Mapping[str, Any]] | None = None  # (name, taxonomy option); UI only
    pd_kv: Strategy | None = None  # PD × Mooncake: the KV deployment composed with PD (UI)

    @property
    def variant(self) -> Mapping[str, Any]:
        return as_dict(self.recipe.variants.get(self.variant_key))


@dataclass(slots=True)  # not frozen: one per rendering, and frozen init is ~2.5x slower
class Rendered:
    json: dict[str, Any]
    commands: tuple[CommandRendering, ...]
    image: str | None
    image_origin: str | None


# ---------------------------------------------------------------------------- images


def resolve_image(
    recipe: Recipe, variant_key: str, hw: HardwareProfile
) -> tuple[str | None, str | None]:
    """The Docker image and the YAML path it came from (docs/spec/recipe-rendering.md §3.2)."""
    variant = as_dict(recipe.variants.get(variant_key))
    model = as_dict(recipe.data.get("model"))
    brand = hw.docker_brand
    exact_path = f"variants.{variant_key}.hardware_overrides.{hw.id}"
    exact = as_dict(as_dict(variant.get("hardware_overrides")).get(hw.id)).get("docker_image")
    if isinstance(exact, str) and exact:
        return exact, f"{exact_path}.docker_image"
    pin: tuple[str, str] | None = None
    cuda: tuple[dict[str, Any], str] | None = None
    for path, candidate in (
        (f"variants.{variant_key}.docker_image", variant.get("docker_image")),
        ("model.docker_image", model.get("docker_image")),
    ):
        if isinstance(candidate, str) and candidate:
            if brand == "nvidia":
                pin = candidate, path
                break
            continue
        if not isinstance(candidate, dict) or not candidate:
            continue
        if any(key in candidate for key in IMAGE_BRANDS):
            value = candidate.get(brand)
            if isinstance(value, str) and value:
                pin = value, f"{path}.{brand}"
                break
            is_cuda_map = isinstance(value, dict) and any(key in value for key in CUDA_KEYS)
            if brand == "nvidia" and is_cuda_map:
                cuda = as_dict(value), f"{path}.{brand}"
                break
            continue
        if brand == "nvidia" and any(key in candidate for key in CUDA_KEYS):
            cuda = candidate, path
            break
    if pin is None and hw.generation == "xpu":
        return XPU_IMAGE, "default-image:xpu"
    if pin is not None:
        return pin
    if cuda is not None:
        mapping, path = cuda
        for key in ("cu130", "cu129"):
            if truthy(mapping.get(key)):
                return js_str(mapping[key]), f"{path}.{key}"
    if model.get("nightly_required") is True:
        image = NIGHTLY_IMAGES.get(brand)
        return image, (f"default-image:{brand}:nightly" if image else None)
    return DEFAULT_IMAGES[brand], f"default-image:{brand}"


# ---------------------------------------------------------------------------- parallelism


def served_model(recipe: Recipe, variant_key: str) -> str:
    # read by every rendering of the variant
    return recipe.memoised(("served-model", variant_key), _served_model, recipe, variant_key)


def _served_model(recipe: Recipe, variant_key: str) -> str:
    variant = as_dict(recipe.variants.get(variant_key))
    model = as_dict(recipe.data.get("model"))
    return js_str(variant.get("model_id") or model.get("model_id") or "unknown")


def _number(raw: Any, hw: HardwareProfile) -> Any:
    if isinstance(raw, dict):
        keyed = hw_keyed(raw, hw)
        return keyed[1] if keyed else None
    return raw


def single_node_size(
    profile_recipe: Recipe, variant: Mapping[str, Any], hw: HardwareProfile, strategy_name: str
) -> int | float:
    """``n`` of the single-node parallel flag: TP rules for single_node_tp, else G
    (docs/spec/recipe-rendering.md §4.1)."""
    gpus = hw.gpus
    if strategy_name != "single_node_tp":
        return gpus
    so = as_dict(as_dict(profile_recipe.data.get("strategy_overrides")).get("single_node_tp"))
    for raw in (variant.get("tp"), so.get("tp")):
        size = _number(raw, hw)
        if is_number(size) and size > 0:
            return size if hw.generation == "cpu" else min(size, gpus)
    minimum = variant.get("vram_minimum_gb")
    if truthy(minimum) and is_number(minimum) and truthy(hw.vram_gb) and hw.vram_gb is not None:
        return 1 if minimum <= hw.vram_gb / gpus else gpus
    return gpus


def dep_local_override(recipe: Recipe, hw: HardwareProfile, strategy_name: str) -> Any:
    """``L`` for multi-node DEP worker ranks: the last --data-parallel-size-local in so args."""
    so = as_dict(as_dict(recipe.data.get("strategy_overrides")).get(strategy_name))
    tokens: list[Any] = []
    for extra in (so.get("vllm_args"), so.get("extra_args")):
        if isinstance(extra, list):
            tokens.extend(extra)
    block = gen_block(so.get("hardware_overrides"), hw)
    if block is not None and isinstance(as_dict(block[1]).get("extra_args"), list):
        tokens.extend(as_dict(block[1])["extra_args"])
    exact = as_dict(as_dict(so.get("hardware_overrides")).get(hw.id)).get("extra_args")
    if isinstance(exact, list):
        tokens.extend(exact)
    found = None
    for index, token in enumerate(tokens[:-1]):
        if token == "--data-parallel-size-local":
            found = tokens[index + 1]
    if found is None:
        return hw.gpus
    try:
        value = float(js_str(found))
    except ValueError:
        return hw.gpus
    return int(value) if value.is_integer() else value


def multi_node_args(
    strategy: Strategy, hw: HardwareProfile, nodes: int, rank: int, addr: str, local: Any
) -> list[str]:
    """A5 for a multi-node head (rank 0) or follower (docs/spec/recipe-rendering.md §4.2)."""
    gpus = hw.gpus
    total = gpus * max(1, nodes)
    flag = js_str(strategy.data.get("parallel_flag") or "--tensor-parallel-size")
    parallelism = strategy.data.get("parallelism")
    rendezvous = ["--nnodes", js_str(nodes), "--node-rank", js_str(rank), "--master-addr", addr]
    headless = ["--headless"] if rank > 0 else []
    if parallelism == "tp_pp":
        return [
            "--tensor-parallel-size",
            js_str(gpus),
            "--pipeline-parallel-size",
            js_str(nodes),
            *rendezvous,
            *headless,
        ]
    if parallelism == "tp_dp":
        args = [
            "--tensor-parallel-size",
            js_str(gpus),
            "--data-parallel-size",
            js_str(nodes),
            "--data-parallel-size-local",
            "1",
            "--data-parallel-address",
            addr,
        ]
        return args + (["--data-parallel-start-rank", js_str(rank)] if rank > 0 else [])
    if flag == "--data-parallel-size":
        args = [
            "--data-parallel-size",
            js_str(total),
            "--data-parallel-size-local",
            js_str(gpus),
            "--data-parallel-address",
            addr,
        ]
        if rank > 0:
            args += ["--data-parallel-start-rank", js_str(rank * local)]
        return args
    return [flag, js_str(total), *rendezvous, *headless]


# ---------------------------------------------------------------------------- command forms


@dataclass(slots=True)  # not frozen: built per command, and frozen init is ~4x slower
class Forms:
    command: str
    argv: list[str]
    docker_command: str
    docker_argv: list[str | None]


def command_forms(
    model: str,
    layered: Layered,
    hw: HardwareProfile,
    image: str | None,
    port: int,
    prefix: DockerPrefix | None = None,
) -> Forms:
    """The pip command, its argv, and both Docker forms (``prefix`` when already known)."""
    tokens = layered.tokens
    tail = pip_tail(tokens)
    argv = ["vllm", "serve", model, *tokens]
    if prefix is None:
        flags_key = docker_flags_key(hw.docker_brand, hw.generation)
        prefix = docker_prefix(flags_key, port, layered.env, image, model)
    docker_text, docker_argv = docker_forms(prefix, tokens, tail)
    return Forms(f"vllm serve {model}{tail}", argv, docker_text, docker_argv)


def _command(role: str, model: str, layered: Layered, rank: int = 0) -> CommandRendering:
    return CommandRendering(
        role=role,
        argv=("vllm", "serve", model, *layered.tokens),
        env=layered.env,
        args=layered.args,
        env_origins=layered.env_origins,
        rank=rank,
    )


# ---------------------------------------------------------------------------- deploy types


def render_profile(
    repo: RecipesRepo, profile: ResolvedRendering, provenance: bool = False
) -> Rendered:
    """Render ``profile``; raises :class:`RenderError` where upstream's renderer throws.

    With ``provenance`` every command also carries the origin of each unit and env var.
    """
    recipe, variant_key, hw = profile.recipe, profile.variant_key, profile.hw
    image, image_origin = recipe.memoised(
        ("image", variant_key, hw.id), resolve_image, recipe, variant_key, hw
    )
    common: dict[str, Any] = {
        "hardware": profile.hw.id,
        "strategy": profile.strategy.name,
        "variant": profile.variant_key,
        "node_count": profile.nodes,
        "deploy_type": profile.strategy.deploy_type,
        "env": {},
    }
    if image is not None:
        common["docker_image"] = image
    strategy = profile.strategy
    if strategy.is_kv:
        body, commands = _kv(profile, image, provenance)
    elif strategy.is_pd:
        body, commands = _pd(profile, image, provenance)
    elif strategy.is_multi_node and profile.nodes > 1:
        body, commands = _multi(profile, strategy, image, HEAD_ADDR, None, provenance)
    else:
        body, commands = _single(profile, strategy, image, None, provenance)
    common.update(body)  # keys already present keep their position, as in JS
    return Rendered(common, tuple(commands), image, image_origin)


def kv_offload_applies(
    name: str, option: Mapping[str, Any], recipe: Recipe, hw: HardwareProfile, strategy: Strategy
) -> bool:
    """Whether a taxonomy KV-offload option's gates let it apply to this command."""
    if strategy.is_pd or strategy.is_kv:
        return False  # those strategies own --kv-transfer-config
    support = as_dict(recipe.data.get("kv_offload_support")).get(name)
    if support == "unsupported":
        return False
    if option.get("requires_opt_in") is True and support != "verified":
        return False
    brands = option.get("brands")
    if isinstance(brands, list) and brands and hw.brand not in brands:
        return False
    allow = option.get("strategies")
    return not (isinstance(allow, list) and allow and strategy.name not in allow)


def _scope(
    profile: ResolvedRendering, strategy: Strategy, role: str | None, kv: Strategy | None
) -> RenderTarget:
    offload = None
    if profile.kv_offload is not None and kv is None:
        name, option = profile.kv_offload
        if kv_offload_applies(name, option, profile.recipe, profile.hw, strategy):
            offload = profile.kv_offload
    return RenderTarget(
        recipe=profile.recipe,
        variant_key=profile.variant_key,
        variant=profile.variant,
        hw=profile.hw,
        strategy=strategy,
        role=role,
        features=profile.features,
        modes=profile.modes,
        kv=kv,
        advanced=profile.advanced,
        kv_offload=offload,
    )


def _single(
    profile: ResolvedRendering,
    strategy: Strategy,
    image: str | None,
    kv: Strategy | None,
    provenance: bool,
    port: int = 8000,
) -> tuple[dict[str, Any], list[CommandRendering]]:
    hw = profile.hw
    recipe = profile.recipe
    # the same for every rendering of this strategy on this (variant, hardware)
    size_key = ("single-node-size", profile.variant_key, hw.id, strategy.name)
    size = recipe.memoised(size_key, single_node_size, recipe, profile.variant, hw, strategy.name)
    flag = js_str(strategy.data.get("parallel_flag") or "--tensor-parallel-size")
    layers = CommandLayers.of(_scope(profile, strategy, None, kv))
    layered = layers.command([flag, js_str(size)], provenance=provenance)
    model = served_model(profile.recipe, profile.variant_key)
    forms = command_forms(model, layered, hw, image, port)
    body: dict[str, Any] = {
        "env": layered.env,
        "command": forms.command,
        "argv": forms.argv,
        "docker_command": forms.docker_command,
        "docker_argv": forms.docker_argv,
    }
    companions = _companions(layers.scope)
    if companions:
        body["companions"] = companions
    if not provenance:  # the JSON API needs only the JSON
        return body, []
    return body, [_command("single" if kv is None else "instance", model, layered)]


def _companions(scope: RenderTarget) -> list[dict[str, Any]]:
    """Helper processes of an active KV-offload option (e.g. the LMCache server tab).

    Best effort: no JSON-API output has companions, so this shape is not checked upstream.
    """
    if scope.kv_offload is None:
        return []
    name, option = scope.kv_offload
    companion = option.get("companion")
    if not isinstance(companion, dict) or not truthy(companion.get("command")):
        return []
    entry = {"id": name, **companion}
    if option.get("install") is not None:
        entry["install"] = option["install"]
    return [entry]


def _rank_args(
    recipe: Recipe, strategy: Strategy, hw: HardwareProfile, nodes: int, addr: str
) -> tuple[tuple[str, ...], ...]:
    """Every rank's generated parallelism flags (A5)."""
    local = dep_local_override(recipe, hw, strategy.name)
    return tuple(
        tuple(multi_node_args(strategy, hw, nodes, rank, addr, local)) for rank in range(nodes)
    )


def _multi(
    profile: ResolvedRendering,
    strategy: Strategy,
    image: str | None,
    addr: str,
    kv: Strategy | None,
    provenance: bool,
) -> tuple[dict[str, Any], list[CommandRendering]]:
    hw, nodes = profile.hw, profile.nodes
    # every rank's A5 flags depend on the recipe only through L: the same for every variant
    ranks_key = ("multi-node-args", hw.id, strategy.name, nodes, addr)
    generated = profile.recipe.memoised(
        ranks_key, _rank_args, profile.recipe, strategy, hw, nodes, addr
    )
    layers = CommandLayers.of(_scope(profile, strategy, None, kv))
    model = served_model(profile.recipe, profile.variant_key)
    ranks = [layers.command(args, provenance=provenance) for args in generated]
    # every node shares the env, so the docker prefix is built once
    prefix = docker_prefix(
        docker_flags_key(hw.docker_brand, hw.generation), 8000, ranks[0].env, image, model
    )
    forms = [command_forms(model, layered, hw, image, 8000, prefix) for layered in ranks]
    head, workers = forms[0], forms[1:]
    body = {
        "env": ranks[0].env,
        "head_command": head.command,
        "worker_command": workers[0].command if workers else None,
        "worker_commands": [w.command for w in workers],
        "head_argv": head.argv,
        "worker_argv": workers[0].argv if workers else None,
        "worker_argvs": [w.argv for w in workers],
        "head_docker_command": head.docker_command,
        "worker_docker_command": workers[0].docker_command if workers else None,
        "worker_docker_commands": [w.docker_command for w in workers],
        "head_docker_argv": head.docker_argv,
        "worker_docker_argv": workers[0].docker_argv if workers else None,
        "worker_docker_argvs": [w.docker_argv for w in workers],
    }
    head_role = "head" if kv is None else "instance"
    if not provenance:
        return body, []
    commands = [_command(head_role, model, ranks[0])]
    commands += [_command("worker", model, layered, rank) for rank, layered in enumerate(ranks)][1:]
    return body, commands


# ---------------------------------------------------------------------------- pd_cluster


def effective_compatible(recipe: Recipe) -> tuple[str, ...]:
    """Listed strategies, then any strategy that strategy_hardware grants somewhere."""
    return recipe.effective_compatible


def pool_modes(recipe: Recipe) -> list[str]:
    """Pool parallelism modes PD may use, from the compatible strategies' suffixes."""
    found = set()
    for name in effective_compatible(recipe):
        if name.endswith("_dep"):
            found.add("dep")
        elif name.endswith("_tep"):
            found.add("tep")
        elif name.endswith(("_tp", "_tp_pp", "_tp_dp")):
            found.add("tp")
    modes: list[str] = [m for m in ("tp", "tep", "dep") if m in found] or ["tp"]
    so = as_dict(as_dict(recipe.data.get("strategy_overrides")).get("pd_cluster"))
    narrow = so.get("pool_modes")
    if isinstance(narrow, list):
        narrowed = [m for m in modes if m in narrow]
        if narrowed:
            return narrowed
    return modes


def role_parallelism(recipe: Recipe, strategy: Strategy, role: str, pick: Any = None) -> str:
    """The unsnapped parallelism of a PD role (what the JSON metadata shows)."""
    so = as_dict(as_dict(recipe.data.get("strategy_overrides")).get("pd_cluster"))
    for value in (
        pick,
        as_dict(so.get(role)).get("parallelism"),
        as_dict(strategy.data.get(role)).get("parallelism"),
    ):
        if truthy(value):
            return js_str(value)
    return "tp"


@dataclass(frozen=True)
class Pool:
    role: str
    nodes: int
    rank: int
    parallelism: str  # as requested (metadata)
    mode: str  # snapped to the allowed pool modes (used for args)
    gpus: int  # poolGpus
    tp: Any  # the role's tp key (dep pools), None if absent
    local: int  # L: DP ranks per node (0 for tp pools)


def _pool(
    recipe: Recipe, strategy: Strategy, hw: HardwareProfile, role: str, nodes_n: int, entry: Any
) -> Pool:
    pick = None
    rank = 0
    if isinstance(entry, dict):
        nodes = entry.get("nodes")
        rank = int(entry.get("rank") or 0) if is_number(entry.get("rank")) else 0
        pick = entry.get("parallelism")
    else:
        nodes = entry
    nodes = int(nodes) if is_number(nodes) else (0 if nodes_n == 1 else 1)
    gpus = hw.gpus
    pool_gpus = gpus // 2 if nodes == 0 else nodes * gpus
    parallelism = role_parallelism(recipe, strategy, role, pick)
    allowed = pool_modes(recipe)
    mode = parallelism if parallelism in allowed else allowed[0]
    so = as_dict(as_dict(recipe.data.get("strategy_overrides")).get("pd_cluster"))
    tp = first_present(as_dict(so.get(role)).get("tp"), as_dict(strategy.data.get(role)).get("tp"))
    local = 0
    if mode == "dep":
        divisor = tp if tp is not None else 1
        local = max(1, math.floor(gpus / divisor)) if divisor else 1
    return Pool(role, nodes, rank, parallelism, mode, pool_gpus, tp, local)


def _pool_args(pool: Pool, recipe: Recipe, strategy: Strategy) -> list[str]:
    upper = pool.role.upper()
    if pool.mode == "dep":
        span = max(1, pool.nodes)
        args = ["--tensor-parallel-size", js_str(pool.tp)] if pool.tp is not None else []
        args += [
            "--data-parallel-size",
            js_str(span * pool.local),
            "--data-parallel-size-local",
            js_str(pool.local),
            "--data-parallel-start-rank",
            js_str(pool.rank * pool.local),
            "--data-parallel-address",
            f"${upper}_NODE_1",
            "--data-parallel-rpc-port",
            f"${upper}_DP_RPC_PORT",
        ]
        if span > 1:
            args.append("--data-parallel-hybrid-lb")
        args.append("--enable-expert-parallel")
        return args
    so = as_dict(as_dict(recipe.data.get("strategy_overrides")).get("pd_cluster"))
    flag = "--tensor-parallel-size"
    for value in (
        as_dict(so.get(pool.role)).get("parallel_flag"),
        as_dict(strategy.data.get(pool.role)).get("parallel_flag"),
        strategy.data.get("parallel_flag"),
    ):
        if truthy(value):
            flag = js_str(value)
            break
    args = [flag, js_str(max(1, pool.gpus))]
    if pool.mode == "tep":
        args.append("--enable-expert-parallel")
    if pool.nodes > 1:
        args += [
            "--nnodes",
            js_str(pool.nodes),
            "--node-rank",
            js_str(pool.rank),
            "--master-addr",
            f"${upper}_NODE_1",
        ]
        if pool.rank > 0:
            args.append("--headless")
    return args


def _pool_env(pool: Pool, hw: HardwareProfile) -> list[tuple[str, str, Any]]:
    gpus = hw.gpus
    if pool.nodes >= 1:
        visible = range(gpus)
    elif pool.role == "prefill":
        visible = range(gpus // 2)
    else:
        visible = range(gpus // 2, gpus)
    env = [("generated:pd-visible-devices", "CUDA_VISIBLE_DEVICES", ",".join(map(str, visible)))]
    if pool.nodes >= 2:
        env.append(("generated:pd-pool-network", "GLOO_SOCKET_IFNAME", "$IFACE_NAME"))
        env.append(("generated:pd-pool-network", "NCCL_SOCKET_IFNAME", "$IFACE_NAME"))
    return env


def _rank_env(layered: Layered, pool: Pool) -> Layered:
    """E13: a DEP follower binds its own node: $ROLE_NODE_1 values become $ROLE_NODE_<r+1>."""
    upper = pool.role.upper()
    head, own = f"${upper}_NODE_1", f"${upper}_NODE_{pool.rank + 1}"
    env = {name: own if value == head else value for name, value in layered.env.items()}
    origins = tuple(
        replace(origin, value=own) if origin.value == head else origin
        for origin in layered.env_origins
    )
    return replace(layered, env=env, env_origins=origins)


def _pool_meta(pool: Pool) -> dict[str, Any]:
    if pool.mode == "dep":
        tp = pool.tp if truthy(pool.tp) else 1
        dp_size = max(1, pool.nodes) * pool.local
        start = pool.rank * pool.local
    else:
        tp, dp_size, start = pool.gpus, 1, 0
    return {
        "nodes": pool.nodes,
        "parallelism": pool.parallelism,
        "tp": tp,
        "dpLocal": pool.local,
        "dpSize": dp_size,
        "poolGpus": pool.gpus,
        "currentNode": pool.rank,
        "startRank": start,
    }


def _pd(
    profile: ResolvedRendering, image: str | None, provenance: bool
) -> tuple[dict[str, Any], list[CommandRendering]]:
    recipe, hw, strategy = profile.recipe, profile.hw, profile.strategy
    model = served_model(recipe, profile.variant_key)
    body: dict[str, Any] = {"env": {}}
    commands: list[CommandRendering] = []
    pools: list[Pool] = []
    for role, port in (("prefill", 8001), ("decode", 8002)):
        entry = (profile.pd_nodes or {}).get(role)
        pool = _pool(recipe, strategy, hw, role, profile.nodes, entry)
        pools.append(pool)
        layers = CommandLayers.of(_scope(profile, strategy, role, profile.pd_kv))
        layered = layers.command(
            _pool_args(pool, recipe, strategy), _pool_env(pool, hw), provenance
        )
        if pool.mode == "dep" and pool.rank > 0:
            layered = _rank_env(layered, pool)
        forms = command_forms(model, layered, hw, image, port)
        body[role] = {
            "command": forms.command,
            "argv": forms.argv,
            "env": layered.env,
            **_pool_meta(pool),
            "docker_command": forms.docker_command,
            "docker_argv": forms.docker_argv,
        }
        if provenance:
            commands.append(_command(role, model, layered, pool.rank))
    router_spec = as_dict(strategy.data.get("router"))
    so = as_dict(as_dict(recipe.data.get("strategy_overrides")).get("pd_cluster"))
    policy = router_spec.get("policy") or "round_robin"
    lines = [f"vllm-router --policy {js_str(policy)}", "--vllm-pd-disaggregation"]
    for pool, port in zip(pools, (8001, 8002), strict=True):
        count = max(1, pool.nodes) if pool.mode == "dep" else 1
        for index in range(1, count + 1):
            lines.append(f"--{pool.role} http://${pool.role.upper()}_NODE_{index}:{port}")
    intra = first_present(
        as_dict(so.get("router")).get("intra_node_data_parallel_size"),
        max(pools[0].local, pools[1].local, 1),
    )
    lines += ["--host $ROUTER_HOST", "--port $ROUTER_PORT"]
    lines.append(f"--intra-node-data-parallel-size {js_str(intra)}")
    body["router"] = {"command": router_command(lines), "install": ROUTER_INSTALL}
    body["router_config"] = strategy.data.get("router")
    return body, commands


# ---------------------------------------------------------------------------- Mooncake


def _kv(
    profile: ResolvedRendering, image: str | None, provenance: bool
) -> tuple[dict[str, Any], list[CommandRendering]]:
    kv, hw = profile.strategy, profile.hw
    serving = profile.serving
    if serving is None:
        raise RenderError(f"{kv.name}: a KV-store deployment needs a serving strategy")
    instances = profile.instances
    if instances is None:
        default = kv.data.get("default_instances")
        instances = int(default) if is_number(default) else 1
    assert instances is not None
    addr = "$VLLM_INSTANCE_1" if instances >= 2 else HEAD_ADDR
    if serving.is_multi_node and profile.nodes > 1:
        inner, commands = _multi(profile, serving, image, addr, kv, provenance)
        head = {
            "env": inner["env"],
            "command": inner["head_command"],
            "argv": inner["head_argv"],
            "docker_command": inner["head_docker_command"],
            "docker_argv": inner["head_docker_argv"],
        }
        workers: dict[str, Any] = {
            "vllm_worker_command": inner["worker_command"],
            "vllm_worker_commands": inner["worker_commands"],
            "vllm_worker_argv": inner["worker_argv"],
            "vllm_worker_argvs": inner["worker_argvs"],
            "vllm_worker_docker_command": inner["worker_docker_command"],
            "vllm_worker_docker_argv": inner["worker_docker_argv"],
            "vllm_worker_docker_commands": inner["worker_docker_commands"],
            "vllm_worker_docker_argvs": inner["worker_docker_argvs"],
        }
    else:
        head, commands = _single(profile, serving, image, kv, provenance)
        workers = dict.fromkeys(
            (
                "vllm_worker_command",
                "vllm_worker_commands",
                "vllm_worker_argv",
                "vllm_worker_argvs",
                "vllm_worker_docker_command",
                "vllm_worker_docker_argv",
                "vllm_worker_docker_commands",
                "vllm_worker_docker_argvs",
            )
        )
    vllm = as_dict(kv.data.get("vllm"))
    install = as_dict(vllm.get("install"))
    brand_install = {"AMD": "amd", "NVIDIA": "nvidia"}.get(hw.brand)
    router_spec = as_dict(kv.data.get("router"))
    router = None
    if instances >= 2:
        port = vllm.get("port", 8000)
        lines = [f"vllm-router --policy {js_str(router_spec.get('policy'))}"]
        lines += [
            f"--backend-url http://$VLLM_INSTANCE_{i}:{js_str(port)}"
            for i in range(1, instances + 1)
        ]
        lines += [
            "--host $ROUTER_HOST",
            "--port $ROUTER_PORT",
            "--cache-threshold 0.5",
            "--balance-abs-threshold 4",
            "--balance-rel-threshold 1.1",
        ]
        router = _present(
            {
                "command": router_command(lines),
                "install": router_spec.get("install"),
                "port": router_spec.get("port"),
            },
            router_spec,
            ("install", "port"),
        )
    master_spec = as_dict(kv.data.get("mooncake_master"))
    store_spec = kv.data.get("mooncake_store_config")
    store = None
    if isinstance(store_spec, dict):
        store = _pick(store_spec, ("command", "description", "config", "note"))
    config = as_dict(kv.data.get("mooncake_vllm_config"))
    body: dict[str, Any] = {
        "env": head["env"],
        "serving_strategy": serving.name,
        "kv_min_vllm_version": kv.data.get("min_vllm_version"),
        "instances": instances,
        "vllm_command": head["command"],
        "vllm_argv": head["argv"],
        **workers,
        "vllm_install": install.get(brand_install) if brand_install else None,
        "vllm_docker_command": head["docker_command"],
        "vllm_docker_argv": head["docker_argv"],
        "master": _pick(master_spec, ("command", "description")),
        "store": store,
        "router": router,
        "mooncake_config": config.get("template"),
        "mooncake_config_note": config.get("note"),
    }
    return body, commands


def _pick(spec: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    return {key: spec[key] for key in keys if key in spec}


def _present(
    built: dict[str, Any], spec: Mapping[str, Any], optional: Sequence[str]
) -> dict[str, Any]:
    return {k: v for k, v in built.items() if k not in optional or k in spec}
