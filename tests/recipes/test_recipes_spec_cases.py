"""The spec's verified cases (recipe-rendering.md §6): T-cases from the JSON API, D-cases direct.

Expected values are transcribed from the spec, not produced by this implementation.
"""

from __future__ import annotations

from typing import Any

from bot.recipes import RecipesRepo, RenderRequest, render

V4F = "deepseek-ai/DeepSeek-V4-Flash"
REASONING_CONFIG = (
    '{"reasoning_parser":"deepseek_v4","reasoning_start_str":"","reasoning_end_str":""}'
)
V4F_FEATURES = [
    "--tokenizer-mode",
    "deepseek_v4",
    "--tool-call-parser",
    "deepseek_v4",
    "--enable-auto-tool-choice",
    "--reasoning-parser",
    "deepseek_v4",
    "--reasoning-config",
    REASONING_CONFIG,
]
DSPARK7 = '{"method":"dspark","num_speculative_tokens":7,"draft_sample_method":"probabilistic"}'
V4F_HEAD = ["vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash-0731", "--trust-remote-code"]
V4F_HEAD += ["--kv-cache-dtype", "fp8", "--block-size", "256"]


def test_t1_amd_generation_block_and_image(corpus_api: dict[str, Any]) -> None:
    found = corpus_api[f"{V4F}/hw/mi355x.json"]
    assert found["strategy"] == "single_node_tep"
    assert found["docker_image"] == "vllm/vllm-openai-rocm:nightly"
    assert found["env"] == {"VLLM_ROCM_USE_AITER": "1"}
    assert found["argv"] == [
        *V4F_HEAD,
        "--enable-expert-parallel",
        "--tensor-parallel-size",
        "8",
        "--distributed-executor-backend",
        "mp",
        "--gpu-memory-utilization",
        "0.9",
        "--max-num-seqs",
        "512",
        "--max-num-batched-tokens",
        "8192",
        "--compilation-config",
        '{"mode": 3, "cudagraph_mode": "FULL_DECODE_ONLY"}',
        *V4F_FEATURES,
        "--speculative-config",
        DSPARK7,
    ]


def test_t3_variant_exact_block_loses_to_generation_blocks(corpus_api: dict[str, Any]) -> None:
    found = corpus_api[f"{V4F}/hw/dgx_spark_gb10/strategies/single_node_tep.json"]
    argv = found["argv"]
    assert argv[argv.index("--moe-backend") + 1] == "deep_gemm_mega_moe"
    assert argv.count("--moe-backend") == 1
    tail = argv[argv.index("--enable-expert-parallel") :][:8]
    assert tail == [
        "--enable-expert-parallel",
        "--tensor-parallel-size",
        "1",
        "--attention_config.use_fp4_indexer_cache",
        "True",
        "--moe-backend",
        "deep_gemm_mega_moe",
        "--tokenizer-mode",
    ]
    assert found["docker_image"] == "eugr/spark-vllm-b12x:latest"


def test_t7_strategy_override_shadows_generated_parallelism(corpus_api: dict[str, Any]) -> None:
    argv = corpus_api[f"{V4F}/hw/b200/strategies/single_node_dep.json"]["argv"]
    assert argv[8:13] == [
        "--enable-expert-parallel",
        "--data-parallel-size",
        "4",
        "--compilation-config",
        '{"cudagraph_mode":"FULL_AND_PIECEWISE", "custom_ops":["all"]}',
    ]
    assert argv.count("--data-parallel-size") == 1


def test_t8_multi_node_dep_worker_start_rank(corpus_api: dict[str, Any]) -> None:
    found = corpus_api.get(f"{V4F}/hw/h200.json")
    assert found is not None and found["strategy"] == "single_node_tep"
    # h200 is V4F's default hardware: its alternatives live under <base>/strategies/
    subset = corpus_api.get(f"{V4F}/hw/b200/strategies/multi_node_dep.json")
    assert subset is not None
    head, worker = subset["head_argv"], subset["worker_argv"]
    at = head.index("--data-parallel-address")
    assert head[at - 4 : at + 2] == [
        "--data-parallel-size",
        "16",
        "--data-parallel-size-local",
        "8",
        "--data-parallel-address",
        "$HEAD_IP",
    ]
    assert worker[: at + 2] == head[: at + 2]
    assert worker[at + 2 : at + 4] == ["--data-parallel-start-rank", "8"]
    assert subset["env"] == {
        "GLOO_SOCKET_IFNAME": "$IFACE_NAME",
        "NCCL_SOCKET_IFNAME": "$IFACE_NAME",
    }


def test_t9_colocated_pd_on_nvl4(corpus_api: dict[str, Any]) -> None:
    found = corpus_api[f"{V4F}/hw/gb200/strategies/pd_cluster.json"]
    prefill, decode = found["prefill"], found["decode"]
    meta = {k: prefill[k] for k in ("nodes", "parallelism", "tp", "dpLocal", "dpSize", "poolGpus")}
    assert meta == {
        "nodes": 0,
        "parallelism": "dep",
        "tp": 1,
        "dpLocal": 4,
        "dpSize": 4,
        "poolGpus": 2,
    }
    assert prefill["env"] == {
        "NCCL_CUMEM_ENABLE": "1",
        "NCCL_MNNVL_ENABLE": "1",
        "NCCL_NVLS_ENABLE": "1",
        "UCX_NET_DEVICES": "all",
        "VLLM_NIXL_SIDE_CHANNEL_PORT": "5557",
        "VLLM_NIXL_SIDE_CHANNEL_HOST": "$PREFILL_NODE_1",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "VLLM_USE_NCCL_SYMM_MEM": "1",
    }
    assert decode["env"]["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert found["env"] == {}
    assert found["router"]["command"].endswith("--intra-node-data-parallel-size 4")
    assert found["router_config"] == {"policy": "round_robin"}


def test_t10_nvl4_env_stripped_off_nvl4(corpus_api: dict[str, Any]) -> None:
    # h200 is the default hardware, so its PD alternative is not under hw/; use b200's
    found = corpus_api[f"{V4F}/hw/b200/strategies/pd_cluster.json"]
    for role in ("prefill", "decode"):
        env = found[role]["env"]
        assert not {"NCCL_CUMEM_ENABLE", "UCX_NET_DEVICES", "VLLM_USE_NCCL_SYMM_MEM"} & set(env)
    assert found["prefill"]["env"]["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    assert found["decode"]["env"]["CUDA_VISIBLE_DEVICES"] == "4,5,6,7"


def test_t11_mooncake_composition(corpus_api: dict[str, Any]) -> None:
    found = corpus_api[f"{V4F}/hw/b200/strategies/kv_store_centralized_mooncake.json"]
    assert found["serving_strategy"] == "single_node_tep"
    assert (found["instances"], found["node_count"]) == (2, 1)
    assert found["env"] == {"MOONCAKE_CONFIG_PATH": "$MOONCAKE_CONFIG_PATH", "PYTHONHASHSEED": 0}
    assert found["vllm_argv"][-2:] == [
        "--kv-transfer-config",
        '{"kv_connector":"MooncakeStoreConnector","kv_role":"kv_both"}',
    ]
    assert "-v $MOONCAKE_CONFIG_PATH:$MOONCAKE_CONFIG_PATH:ro" in found["vllm_docker_command"]
    assert "-e PYTHONHASHSEED=0" in found["vllm_docker_command"]
    distributed = corpus_api[f"{V4F}/hw/b200/strategies/kv_store_distributed_mooncake.json"]
    assert (distributed["instances"], distributed["router"], distributed["store"]) == (
        1,
        None,
        None,
    )
    spark = corpus_api[f"{V4F}/hw/dgx_spark_gb10/strategies/kv_store_distributed_mooncake.json"]
    assert (spark["serving_strategy"], spark["node_count"]) == ("multi_node_tp", 2)
    worker = spark["vllm_worker_argv"]
    assert worker[worker.index("--master-addr") : worker.index("--master-addr") + 3] == [
        "--master-addr",
        "$HEAD_IP",  # one instance: the instance's own head, not $VLLM_INSTANCE_1
        "--headless",
    ]


def test_t13_pd_node_shapes_and_env_only_strategy_block(corpus_repo: RecipesRepo) -> None:
    # b300 is Kimi-K3's default hardware, so its PD file is <base>/strategies/pd_cluster.json
    found = render(corpus_repo, RenderRequest("moonshotai/Kimi-K3", "b300", "pd_cluster")).json
    prefill, decode = found["prefill"], found["decode"]
    assert (prefill["nodes"], prefill["parallelism"], prefill["poolGpus"]) == (1, "tep", 8)
    assert (decode["nodes"], decode["parallelism"], decode["tp"]) == (2, "dep", 1)
    assert (decode["dpLocal"], decode["dpSize"]) == (8, 16)
    assert prefill["env"] == {
        "VLLM_NIXL_SIDE_CHANNEL_PORT": "5557",
        "VLLM_NIXL_SIDE_CHANNEL_HOST": "$PREFILL_NODE_1",
        "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
        "VLLM_SSM_CONV_STATE_LAYOUT": "DS",
        "VLLM_KIMI_K3_SHARD_SP_SHARED_EXPERT": "1",
        "UCX_TLS": "rc,cuda_copy",
    }
    assert prefill["argv"] == [
        "vllm",
        "serve",
        "moonshotai/Kimi-K3",
        "--trust-remote-code",
        "--gpu-memory-utilization",
        "0.95",
        "--port",
        "8001",
        "--kv-transfer-config",
        '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_load_failure_policy":"fail"}',
        "--tensor-parallel-size",
        "8",
        "--enable-expert-parallel",
        "--max-num-batched-tokens",
        "16384",
        "--no-disable-hybrid-kv-cache-manager",
        "--no-enable-flashinfer-autotune",
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "kimi_k3",
        "--reasoning-parser",
        "kimi_k3",
    ]
    assert decode["env"]["GLOO_SOCKET_IFNAME"] == "$IFACE_NAME"
    router = found["router"]["command"]
    assert (
        "--decode http://$DECODE_NODE_1:8002 \\\n    --decode http://$DECODE_NODE_2:8002" in router
    )
    assert router.endswith("--intra-node-data-parallel-size 1")


def test_pd_pools_grow_to_the_model_size(corpus_api: dict[str, Any]) -> None:
    # b200: 1440 GB < 2 x 1680 GB, k = ceil(1680 / 1440) = 2 nodes per role (§4.3)
    found = corpus_api["moonshotai/Kimi-K3/hw/b200/strategies/pd_cluster.json"]
    assert (found["prefill"]["nodes"], found["prefill"]["poolGpus"]) == (2, 16)
    assert (found["decode"]["nodes"], found["decode"]["dpSize"]) == (2, 16)
    assert "--nnodes" in found["prefill"]["argv"]


def test_t17_env_order_and_verbatim_image(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["MiniMaxAI/MiniMax-M3-MXFP8/hw/mi300x.json"]
    assert found["docker_image"] == "docker pull vllm/vllm-openai-rocm:nightly"
    assert list(found["env"]) == [
        "VLLM_ENGINE_READY_TIMEOUT_S",
        "VLLM_USE_BREAKABLE_CUDAGRAPH",
        "VLLM_ROCM_USE_AITER",
        "VLLM_ROCM_USE_AITER_MHA",
        "TORCH_BLAS_PREFER_HIPBLASLT",
        "NCCL_MIN_NCHANNELS",
        "GPU_MAX_HW_QUEUES",
        "VLLM_ROCM_USE_AITER_MOE",
        "VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS",
    ]
    assert found["argv"][found["argv"].index("--tensor-parallel-size") + 1] == "8"


def test_t18_npu_uses_nvidia_docker_flags(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["Eco-Tech/Qwen3.8-27B-w8a8/hw/ascend_950pr.json"]
    assert found["docker_argv"][:4] == ["docker", "run", "--gpus", "all"]
    assert found["docker_image"] == "quay.io/ascend/vllm-ascend:qwen3.8-a5"
    assert found["argv"][-4:] == [
        "--speculative-config",
        '{"method":"qwen3_5_mtp","num_speculative_tokens":3,"enforce_eager":true}',
        "--mm-encoder-tp-mode",
        "data",
    ]


def test_t19_non_scalable_substitution(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["meta-models/Muse-Glimmer-30B/hw/rtx_5090.json"]
    assert found["variant"] == "nvfp4"
    assert found["docker_image"] == "vllm/vllm-openai:muse-glimmer"
    assert found["argv"][:7] == [
        "vllm",
        "serve",
        "Inferact/Muse-Glimmer-30B-NVFP4-W4A4",
        "--generation-config",
        "auto",
        "--tensor-parallel-size",
        "1",
    ]


def test_t21_cpu_docker_form(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["RedHatAI/Meta-Llama-3.1-8B-quantized.w8a8/hw/xeon6.json"]
    assert found["docker_command"] == (
        "docker run --shm-size=16g \\\n"
        "  --privileged --ipc=host -p 8000:8000 \\\n"
        "  -v ~/.cache/huggingface:/root/.cache/huggingface \\\n"
        "  vllm/vllm-openai-cpu:latest-x86_64 RedHatAI/Meta-Llama-3.1-8B-quantized.w8a8 \\\n"
        "  --tensor-parallel-size 2"
    )


def test_t24_node_count_two_with_a_single_node_command(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["thinkingmachines/Inkling/hw/h100.json"]
    assert (found["strategy"], found["node_count"], found["deploy_type"]) == (
        "single_node_tp",
        2,
        "single_node",
    )
    assert found["argv"][:9] == [
        "vllm",
        "serve",
        "thinkingmachines/Inkling-NVFP4",
        "--trust-remote-code",
        "--tokenizer-mode",
        "inkling",
        "--kernel-config.enable_flashinfer_autotune=False",
        "--tensor-parallel-size",
        "8",
    ]


# ---------------------------------------------------------------------------- D-cases

FEATURES = ("tool_calling", "reasoning", "spec_decoding")


def _argv(repo: RecipesRepo, request: RenderRequest) -> list[str]:
    return list(render(repo, request).commands[0].argv)


def test_d1_mode_allowed_for_variant_with_hopper_override(corpus_repo: RecipesRepo) -> None:
    rendering = render(corpus_repo, RenderRequest(V4F, "h200", "single_node_tep", "fp8", FEATURES))
    assert list(rendering.commands[0].argv[-2:]) == [
        "--speculative-config",
        '{"method":"mtp","num_speculative_tokens":1}',
    ]
    assert rendering.image == "vllm/vllm-openai:latest"


def test_d2_blackwell_mtp(corpus_repo: RecipesRepo) -> None:
    argv = _argv(corpus_repo, RenderRequest(V4F, "b200", "single_node_tep", "fp8", FEATURES))
    at = argv.index("--tensor-parallel-size")
    assert argv[at : at + 6] == [
        "--tensor-parallel-size",
        "8",
        "--attention_config.use_fp4_indexer_cache",
        "True",
        "--moe-backend",
        "deep_gemm_mega_moe",
    ]
    assert argv[-2:] == ["--speculative-config", '{"method":"mtp","num_speculative_tokens":2}']


def test_d3_no_allowed_mode_emits_nothing(corpus_repo: RecipesRepo) -> None:
    request = RenderRequest(V4F, "rtx_pro_6000_8x", "single_node_tep", "fp8", FEATURES)
    argv = _argv(corpus_repo, request)
    assert "--speculative-config" not in argv
    at = argv.index("--attention_config.use_fp4_indexer_cache")
    assert argv[at : at + 4] == [
        "--attention_config.use_fp4_indexer_cache",
        "False",
        "--moe-backend",
        "auto",
    ]


def test_d4_user_pick_not_allowed_falls_back_to_default_modes(corpus_repo: RecipesRepo) -> None:
    request = RenderRequest(V4F, "h200", variant="default", modes={"spec_decoding": "mtp"})
    argv = _argv(corpus_repo, request)
    assert argv[-2:] == ["--speculative-config", DSPARK7]


def test_d5_flat_feature_generation_override(corpus_repo: RecipesRepo) -> None:
    request = RenderRequest("thinkingmachines/Inkling", "h200", features=("spec_decoding",))
    argv = _argv(corpus_repo, request)
    assert argv[-2:] == ["--speculative-config", '{"method":"mtp","num_speculative_tokens":1}']


def test_t2_strategy_generation_block_replaces_on_multi_node(corpus_api: dict[str, Any]) -> None:
    found = corpus_api[f"{V4F}/hw/dgx_spark_gb10.json"]
    assert (found["strategy"], found["node_count"]) == ("multi_node_tp", 2)
    head = found["head_argv"]
    assert "--attention_config.use_fp4_indexer_cache" not in head  # recipe blackwell replaced
    at = head.index("--tensor-parallel-size")
    assert head[at : at + 14] == [
        "--tensor-parallel-size",
        "2",
        "--nnodes",
        "2",
        "--node-rank",
        "0",
        "--master-addr",
        "$HEAD_IP",
        "--moe-backend",  # re-emitted by the strategy block: moves after parallelism
        "b12x",
        "--linear-backend",
        "b12x",
        "--attention-backend",
        "B12X_MLA_SPARSE",
    ]
    assert found["worker_argv"][at + 4 : at + 9] == [
        "--node-rank",
        "1",
        "--master-addr",
        "$HEAD_IP",
        "--headless",
    ]
    assert list(found["env"])[:2] == ["PYTORCH_CUDA_ALLOC_CONF", "CUTE_DSL_ARCH"]
    assert len(found["env"]) == 24


def test_t14_multi_node_dep_floor_and_worker_ranks(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["moonshotai/Kimi-K3/hw/gb200/strategies/multi_node_dep.json"]
    assert found["node_count"] == 4
    head = found["head_argv"]
    assert head[head.index("--data-parallel-size") + 1] == "16"
    assert head[-7:-5] == ["--moe-backend", "deep_gemm_mega_moe"]
    starts = [a[a.index("--data-parallel-start-rank") + 1] for a in found["worker_argvs"]]
    assert starts == ["4", "8", "12"]


def test_t15_base_nodes_and_floor_grow_the_recommendation(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["moonshotai/Kimi-K3/hw/h100.json"]
    assert (found["strategy"], found["node_count"]) == ("multi_node_tp", 4)
    assert found["head_argv"][3:14] == [
        "--trust-remote-code",
        "--tensor-parallel-size",
        "32",
        "--nnodes",
        "4",
        "--node-rank",
        "0",
        "--master-addr",
        "$HEAD_IP",
        "--gpu-memory-utilization",
        "0.97",
    ]


def test_t16_strategy_granted_only_by_strategy_hardware(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["moonshotai/Kimi-K3/hw/h200/strategies/multi_node_tp_dp.json"]
    assert found["head_argv"][3:13] == [
        "--trust-remote-code",
        "--tensor-parallel-size",
        "8",
        "--data-parallel-size",
        "2",
        "--data-parallel-size-local",
        "1",
        "--data-parallel-address",
        "$HEAD_IP",
        "--gpu-memory-utilization",
    ]
    worker = found["worker_argv"]
    assert worker[12:14] == ["--data-parallel-start-rank", "1"]


def test_t20_xpu_auto_fit_and_image(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["meta-models/Muse-Glimmer-30B/hw/arc_pro_b60.json"]
    assert found["docker_image"] == "vllm/vllm-openai-xpu:latest"
    assert found["argv"][3:9] == [
        "--generation-config",
        "auto",
        "--tensor-parallel-size",
        "4",
        "--enforce-eager",
        "--enable-auto-tool-choice",
    ]
    assert found["docker_argv"][2:8] == [
        "--device",
        "/dev/dri",
        "-v",
        "/dev/dri/by-path:/dev/dri/by-path",
        "--shm-size",
        "16g",
    ]
    mi355x = corpus_api["meta-models/Muse-Glimmer-30B/hw/mi355x.json"]
    assert mi355x["docker_image"] == "vllm/vllm-openai-rocm:nightly"
    assert mi355x["env"] == {"VLLM_ROCM_USE_AITER": "1"}
    at = mi355x["argv"].index("--tensor-parallel-size")
    assert mi355x["argv"][at - 2 : at + 2] == [
        "--attention-backend",
        "ROCM_AITER_FA",
        "--tensor-parallel-size",
        "1",
    ]


def test_t22_feature_re_emits_a_variant_pair_at_the_end(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["amd/Kimi-K2.5-MXFP4/hw/mi355x.json"]
    assert found["argv"][3:8] == [
        "--trust-remote-code",
        "--kv-cache-dtype",
        "fp8",
        "--tensor-parallel-size",
        "8",
    ]
    assert found["argv"][-2:] == ["--mm-encoder-tp-mode", "data"]


def test_t23_hardware_opt_in_feature(corpus_api: dict[str, Any]) -> None:
    gb200 = corpus_api["moonshotai/Kimi-K2.5/hw/gb200.json"]["argv"]
    h200 = corpus_api["moonshotai/Kimi-K2.5/hw/h200.json"]["argv"]
    assert "--mm-encoder-tp-mode" not in gb200
    assert gb200[gb200.index("--tensor-parallel-size") + 1] == "4"
    assert h200[-2:] == ["--mm-encoder-tp-mode", "data"]
    assert h200[h200.index("--tensor-parallel-size") + 1] == "8"


def test_t25_hw_keyed_variant_tp(corpus_api: dict[str, Any]) -> None:
    found = corpus_api["lightseekorg/Inkling-MXFP4/hw/mi355x.json"]
    assert found["argv"][3:15] == [
        "--trust-remote-code",
        "--tokenizer-mode",
        "inkling",
        "--moe-backend",
        "aiter",
        "--block-size",
        "128",
        "--gpu-memory-utilization",
        "0.90",
        "--tensor-parallel-size",
        "4",
        "--enable-auto-tool-choice",
    ]
