"""Single-node and multi-node deploys (docs/spec/recipe-rendering.md §3–§4): the served
model, the parallelism size of one node, every rank's generated flags, and the JSON of a
single command or of a head and its followers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.recipes.command_text import docker_flags_key, docker_prefix
from bot.recipes.jsvalues import as_dict, is_number, js_str, truthy
from bot.recipes.layers import CommandLayers, RenderTarget, gen_block, hw_keyed
from bot.recipes.rendering import (
    CommandRendering,
    ResolvedRendering,
    command_forms,
    render_target,
    rendered_command,
)
from bot.recipes.repo import HardwareProfile, Recipe, Strategy

HEAD_ADDR = "$HEAD_IP"


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


def render_single(
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
    layers = CommandLayers.of(render_target(profile, strategy, None, kv))
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
    return body, [rendered_command("single" if kv is None else "instance", model, layered)]


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


def render_multi(
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
    layers = CommandLayers.of(render_target(profile, strategy, None, kv))
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
    commands = [rendered_command(head_role, model, ranks[0])]
    commands += [
        rendered_command("worker", model, layered, rank) for rank, layered in enumerate(ranks)
    ][1:]
    return body, commands
