"""Provenance: every emitted unit, env var and the image names the YAML node it came from."""

from __future__ import annotations

from collections.abc import Callable

from bot.recipes import ArgOrigin, CommandRendering, EnvOrigin, RecipesRepo, RenderRequest, render

MakeRepo = Callable[..., RecipesRepo]
V4F = "deepseek-ai/DeepSeek-V4-Flash"


def unit(command: CommandRendering, flag: str) -> ArgOrigin:
    (found,) = [u for u in command.args if u.flag == flag]
    return found


def env(command: CommandRendering, name: str) -> EnvOrigin:
    (found,) = [o for o in command.env_origins if o.name == name]
    return found


LAYERED = """
meta: {title: Layered, tasks: [text]}
model:
  model_id: test/Layered
  base_args: ["--x", "base", "--keep"]
  base_env: {E: "base"}
variants:
  default:
    extra_args: ["--x", "variant"]
    hardware_overrides:
      mi355x:
        extra_args: ["--x", "variant-mi355x"]
        extra_env: {E: "variant-mi355x"}
hardware_overrides:
  amd:
    extra_args: ["--y", "1", "--x", "recipe-amd"]
    extra_env: {E: "recipe-amd"}
compatible_strategies: [single_node_tp]
strategy_overrides:
  single_node_tp:
    hardware_overrides:
      mi355x:
        extra_args: ["--x", "strategy-mi355x"]
        extra_env: {E: "strategy-mi355x"}
"""


def test_brand_block_vs_strategy_exact_block_vs_variant_gpu_block(make_repo: MakeRepo) -> None:
    repo = make_repo({"models/test/Layered.yaml": LAYERED})
    command = render(repo, RenderRequest("test/Layered", "mi355x", "single_node_tp")).commands[0]
    assert unit(command, "--x") == ArgOrigin(
        "--x",
        "strategy-mi355x",
        "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args[0]",
        (
            "model.base_args[0]",
            "variants.default.extra_args[0]",
            "variants.default.hardware_overrides.mi355x.extra_args[0]",  # A3: weak
            "hardware_overrides.amd.extra_args[2]",  # A7: recipe brand/generation block
        ),
    )
    assert unit(command, "--y") == ArgOrigin("--y", "1", "hardware_overrides.amd.extra_args[0]")
    assert unit(command, "--keep") == ArgOrigin("--keep", None, "model.base_args[2]")
    assert unit(command, "--tensor-parallel-size").path == "generated:parallelism"
    assert [u.flag for u in command.args] == ["--keep", "--tensor-parallel-size", "--y", "--x"]
    assert env(command, "E") == EnvOrigin(
        "E",
        "strategy-mi355x",
        "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_env.E",
        (
            "model.base_env.E",
            "variants.default.hardware_overrides.mi355x.extra_env.E",
            "hardware_overrides.amd.extra_env.E",
        ),
    )


def test_without_the_strategy_block_the_generation_block_wins(make_repo: MakeRepo) -> None:
    repo = make_repo({"models/test/Layered.yaml": LAYERED})
    command = render(repo, RenderRequest("test/Layered", "mi300x", "single_node_tp")).commands[0]
    assert unit(command, "--x").path == "hardware_overrides.amd.extra_args[2]"
    assert unit(command, "--x").shadowed == ("model.base_args[0]", "variants.default.extra_args[0]")


def test_real_recipe_generation_block_shadows_variant_gpu_block(corpus_repo: RecipesRepo) -> None:
    rendering = render(corpus_repo, RenderRequest(V4F, "dgx_spark_gb10", "single_node_tep"))
    command = rendering.commands[0]
    moe = unit(command, "--moe-backend")
    assert (moe.value, moe.path) == (
        "deep_gemm_mega_moe",
        "variants.default.hardware_overrides.blackwell.extra_args[0]",
    )
    assert moe.shadowed == ("variants.default.hardware_overrides.dgx_spark_gb10.extra_args[11]",)
    assert unit(command, "--attention_config.use_fp4_indexer_cache").path == (
        "hardware_overrides.blackwell.extra_args[0]"
    )
    assert unit(command, "--enable-expert-parallel").path == (
        "strategies/single_node_tep.yaml:vllm_args[0]"
    )
    assert unit(command, "--speculative-config").path == (
        "features.spec_decoding.modes.dspark.hardware_overrides.dgx_spark_gb10.args[0]"
    )
    assert (
        rendering.image_origin == "variants.default.hardware_overrides.dgx_spark_gb10.docker_image"
    )


def test_real_recipe_strategy_exact_block_over_strategy_generation_block(
    corpus_repo: RecipesRepo,
) -> None:
    command = render(corpus_repo, RenderRequest(V4F, "rtx_pro_6000_8x", "single_node_tp")).commands[
        0
    ]
    cache = unit(command, "--attention_config.use_fp4_indexer_cache")
    assert (cache.value, cache.path) == (
        "False",
        "strategy_overrides.single_node_tp.hardware_overrides.rtx_pro_6000_8x.extra_args[0]",
    )
    assert cache.shadowed == (
        "strategy_overrides.single_node_tp.hardware_overrides.blackwell.extra_args[0]",
    )


def test_generated_parallelism_shadowed_by_strategy_override(corpus_repo: RecipesRepo) -> None:
    command = render(corpus_repo, RenderRequest(V4F, "b200", "single_node_dep")).commands[0]
    size = unit(command, "--data-parallel-size")
    assert (size.value, size.path, size.shadowed) == (
        "4",
        "strategy_overrides.single_node_dep.extra_args[0]",
        ("generated:parallelism",),
    )


def test_env_origin_keeps_first_position_and_records_shadowing(corpus_repo: RecipesRepo) -> None:
    rendering = render(corpus_repo, RenderRequest(V4F, "dgx_spark_gb10", "multi_node_tp", nodes=2))
    head, worker = rendering.commands
    assert (head.role, worker.role, worker.rank) == ("head", "worker", 1)
    gloo = env(head, "GLOO_SOCKET_IFNAME")
    assert gloo.path == "strategies/multi_node_tp.yaml:env.GLOO_SOCKET_IFNAME"
    assert gloo.shadowed == (
        "variants.default.hardware_overrides.dgx_spark_gb10.extra_env.GLOO_SOCKET_IFNAME",
    )
    names = [origin.name for origin in head.env_origins]
    assert names == list(head.env)
    assert names.index("GLOO_SOCKET_IFNAME") < names.index("NCCL_IB_DISABLE")  # variant position
    assert unit(worker, "--headless").path == "generated:parallelism"


def test_amd_env_and_image_origin(corpus_repo: RecipesRepo) -> None:
    rendering = render(corpus_repo, RenderRequest(V4F, "mi355x"))
    command = rendering.commands[0]
    assert env(command, "VLLM_ROCM_USE_AITER").path == (
        "hardware_overrides.amd.extra_env.VLLM_ROCM_USE_AITER"
    )
    assert rendering.image_origin == "model.docker_image.amd"
    # one origin per emitted unit, in argv order
    rebuilt: list[str] = []
    for origin in command.args:
        rebuilt += [part for part in (origin.flag, origin.value) if part is not None]
    assert rebuilt == list(command.argv[3:])


def test_pd_and_mooncake_origins(corpus_repo: RecipesRepo) -> None:
    pd = render(corpus_repo, RenderRequest(V4F, "gb200", "pd_cluster"))
    prefill, decode = pd.commands
    assert (prefill.role, decode.role) == ("prefill", "decode")
    assert unit(prefill, "--port").path == "strategies/pd_cluster.yaml:prefill.vllm_args[0]"
    assert env(prefill, "CUDA_VISIBLE_DEVICES").path == "generated:pd-visible-devices"
    assert env(decode, "VLLM_NIXL_SIDE_CHANNEL_HOST").path == (
        "strategies/pd_cluster.yaml:decode.env.VLLM_NIXL_SIDE_CHANNEL_HOST"
    )
    kv = render(corpus_repo, RenderRequest(V4F, "b200", "kv_store_centralized_mooncake"))
    (instance,) = kv.commands
    assert instance.role == "instance"
    assert unit(instance, "--kv-transfer-config").path == (
        "kv_store/kv_store_centralized_mooncake.yaml:vllm.vllm_args[0]"
    )
    assert env(instance, "PYTHONHASHSEED").path == (
        "kv_store/kv_store_centralized_mooncake.yaml:vllm.env.PYTHONHASHSEED"
    )


def test_default_image_origin(corpus_repo: RecipesRepo) -> None:
    rendering = render(
        corpus_repo, RenderRequest("nvidia/DeepSeek-V4-Flash-NVFP4", "b200", "single_node_tep")
    )
    assert (rendering.image, rendering.image_origin) == (
        "vllm/vllm-openai:latest",
        "default-image:nvidia",
    )
    assert rendering.request.variant == "nvfp4"
    assert unit(rendering.commands[0], "--attention_config.use_fp4_indexer_cache").path == (
        "hardware_overrides.blackwell.extra_args[0]"
    )
