"""pd_cluster deploys (docs/spec/recipe-rendering.md §4): the prefill and decode pools,
their parallelism and node shapes, and the router in front of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from bot.recipes.command_text import router_command
from bot.recipes.jsvalues import as_dict, first_present, is_number, js_str, truthy
from bot.recipes.layers import CommandLayers, Layered
from bot.recipes.nodes import served_model
from bot.recipes.rendering import (
    CommandRendering,
    ResolvedRendering,
    command_forms,
    render_target,
    rendered_command,
)
from bot.recipes.repo import HardwareProfile, Recipe, Strategy

ROUTER_INSTALL = "uv pip install vllm-router"


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


def render_pd(
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
        layers = CommandLayers.of(render_target(profile, strategy, role, profile.pd_kv))
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
            commands.append(rendered_command(role, model, layered, pool.rank))
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
