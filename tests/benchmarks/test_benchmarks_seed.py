"""The seed scenario's eval-only arm extracts to the seed's launch line (issue #4)."""

from __future__ import annotations

from bot.benchmarks import extract, load_bench_repo, points
from bot.fixtures import SeedFixtures
from bot.sources import GitTreeSource

KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"
SCRIPT = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"
SPEC = (
    '{"method":"dspark","num_speculative_tokens":5,"draft_sample_method":"probabilistic",'
    '"rejection_sample_method":"block","enable_adaptive_verification":false}'
)


def test_seed_eval_arm_is_the_seed_launch_line(seed: SeedFixtures) -> None:
    repo = load_bench_repo(GitTreeSource(seed.bench_repo, seed.bench_pr_head))
    (point,) = [p for p, arm in points(repo, KEY) if arm == "eval"]
    launch = extract(repo, KEY, point, "eval", runner_node="mi355x-amds_03")
    assert launch.status == "launched" and launch.unresolved == ()
    assert launch.script == SCRIPT
    assert launch.image == "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"
    assert launch.argv == (
        "vllm", "serve", "deepseek-ai/DeepSeek-V4.1-Flash",
        "--host", "0.0.0.0",
        "--port", "8891",  # 8888 + the node's last digit (mi355x-amds launcher)
        "--tensor-parallel-size", "4",
        "--gpu-memory-utilization", "0.9",
        "--moe-backend", "aiter",
        "--max-num-seqs", "128",
        "--max-num-batched-tokens", "16384",
        "--tokenizer-mode", "deepseek_v41",
        "--tool-call-parser", "deepseek_v41",
        "--enable-auto-tool-choice",
        "--reasoning-parser", "deepseek_v41",
        "--language-model-only",
        "--speculative-config", SPEC,
        "--disable-uvicorn-access-log",
    )  # fmt: skip
    served_env = {k: v for k, v in launch.env.items() if k != "GPU_METRICS_CSV"}
    assert list(served_env.items()) == [
        ("VLLM_ENGINE_READY_TIMEOUT_S", "3600"),
        ("VLLM_ROCM_USE_AITER", "1"),
        ("VLLM_ROCM_USE_AITER_MOE", "1"),
        ("AITER_TRITON_LOG_LEVEL", "ERROR"),
        ("VLLM_USE_BREAKABLE_CUDAGRAPH", "1"),
        ("VLLM_USE_RUST_FRONTEND", "1"),
    ]
    # every argv element points at the script line it was written on
    moe = launch.argv.index("--moe-backend")
    assert launch.argv_sources[moe].file == SCRIPT
    assert launch.argv_sources[moe + 1].line == 22  # MOE_BACKEND=aiter


def test_seed_throughput_arms_use_synthetic_acceptance(seed: SeedFixtures) -> None:
    repo = load_bench_repo(GitTreeSource(seed.bench_repo, seed.bench_pr_head))
    throughput = [p for p, arm in points(repo, KEY) if arm == "throughput"]
    assert [p.conc for p in throughput] == [1, 2, 4, 8, 16, 32]
    launch = extract(repo, KEY, throughput[0], "throughput")
    spec = launch.argv[launch.argv.index("--speculative-config") + 1]
    assert '"rejection_sample_method":"synthetic","synthetic_acceptance_length":3.8' in spec


def test_base_branch_launches_the_old_backend(seed: SeedFixtures) -> None:
    repo = load_bench_repo(GitTreeSource(seed.bench_repo, seed.bench_base))
    (point,) = [p for p, arm in points(repo, KEY) if arm == "eval"]
    launch = extract(repo, KEY, point, "eval")
    assert launch.argv[launch.argv.index("--moe-backend") + 1] == "aiter_triton_mxfp4_bf16"
    assert "--max-num-seqs" not in launch.argv and "AITER_TRITON_LOG_LEVEL" not in launch.env
