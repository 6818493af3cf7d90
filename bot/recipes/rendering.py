"""What a deploy renders (docs/spec/recipe-rendering.md §3): the resolved profile, each
command with its provenance and the result; the image; the pip and Docker forms of a command;
the render target of one command of a profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.recipes.command_text import (
    DockerPrefix,
    docker_flags_key,
    docker_forms,
    docker_prefix,
    pip_tail,
)
from bot.recipes.jsvalues import as_dict, js_str, truthy
from bot.recipes.layers import ArgOrigin, EnvOrigin, Layered, RenderTarget
from bot.recipes.repo import HardwareProfile, Recipe, Strategy

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


def variant_image(
    recipe: Recipe, variant_key: str, hw: HardwareProfile
) -> tuple[str | None, str | None]:
    """:func:`resolve_image`, once per (variant, hardware) of ``recipe``: every rendering of
    them reads it, and the JSON API's hardware view too (bot/recipes/hardware_view.py)."""
    return recipe.memoised(("image", variant_key, hw.id), resolve_image, recipe, variant_key, hw)


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


def rendered_command(role: str, model: str, layered: Layered, rank: int = 0) -> CommandRendering:
    return CommandRendering(
        role=role,
        argv=("vllm", "serve", model, *layered.tokens),
        env=layered.env,
        args=layered.args,
        env_origins=layered.env_origins,
        rank=rank,
    )


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


def render_target(
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
