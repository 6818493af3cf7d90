"""Mooncake KV-store deploys (docs/spec/recipe-rendering.md §4): the KV store composed around
a single-node or multi-node serving strategy, per instance, with its router.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.recipes.command_text import router_command
from bot.recipes.jsvalues import as_dict, is_number, js_str
from bot.recipes.layers import RenderError
from bot.recipes.nodes import HEAD_ADDR, render_multi, render_single
from bot.recipes.rendering import CommandRendering, ResolvedRendering


def render_kv(
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
        inner, commands = render_multi(profile, serving, image, addr, kv, provenance)
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
        head, commands = render_single(profile, serving, image, kv, provenance)
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
