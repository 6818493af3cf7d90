"""diff_launch: verdicts and reasons per flag, env and image (doc §5 "rules for a semantic
diff", and the seed PR's "Scheduler-default correspondence")."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.placeholders import placeholder
from bot.rules import Rules, load_rules
from bot.vllm.diff import device_context, diff_launch
from bot.vllm.diff_report import DiffReport, FlagDiff, LaunchSide, Verdict

RULES = Path(__file__).resolve().parents[2] / "rules"
SHA = "eed1f3d0c6043bd494424a22443ee198dd56f657"
NIGHTLY = f"vllm/vllm-openai-rocm:nightly-{SHA}"
OLD_TAG = "vllm/vllm-openai-rocm:deepseekv41-flash-0909"
MODEL = "deepseek-ai/DeepSeek-V4.1-Flash"
SPEC_THROUGHPUT = (
    '{"method":"dspark","num_speculative_tokens":5,"draft_sample_method":"probabilistic",'
    '"rejection_sample_method":"synthetic","synthetic_acceptance_length":3.8,'
    '"enable_adaptive_verification":false}'
)
SPEC_RECIPE = (
    '{"method":"dspark","num_speculative_tokens":5,"draft_sample_method":"probabilistic",'
    '"rejection_sample_method":"block","enable_adaptive_verification":false}'
)


@pytest.fixture(scope="module")
def rules() -> Rules:
    return load_rules(RULES)


def serve(*args: str) -> tuple[str, ...]:
    return ("vllm", "serve", MODEL, *args)


def run(
    rules: Rules,
    bench: tuple[str, ...],
    recipe: tuple[str, ...],
    *,
    hardware: str | None = "mi355x",
    version: str | None = "0.33.0",
    bench_env: dict[str, str] | None = None,
    recipe_env: dict[str, str] | None = None,
    bench_image: str | None = None,
    recipe_image: str | None = None,
    taxonomy_vram: dict[str, float] | None = None,
) -> DiffReport:
    return diff_launch(
        LaunchSide(bench, bench_env or {}, bench_image),
        LaunchSide(recipe, recipe_env or {}, recipe_image),
        hardware=hardware,
        rules=rules,
        version=version,
        taxonomy_vram=taxonomy_vram,
    )


def only(report: DiffReport, key: str) -> FlagDiff:
    found = [d for d in report.diffs if d.key == key]
    assert len(found) == 1, [d.key for d in report.diffs]
    return found[0]


# --- the seed PR: scheduler-default correspondence ----------------------------------------------


def test_seed_max_num_seqs_128_on_mi355x_differs_from_the_1024_default(rules: Rules) -> None:
    d = only(run(rules, serve("--max-num-seqs", "128"), serve()), "scheduler.max_num_seqs")
    assert d.verdict is Verdict.DIFFERS
    assert (d.bench_value, d.recipe_value) == (128, None)
    assert d.bench_tokens == ("--max-num-seqs", "128") and d.recipe_tokens == ()
    assert "1024" in d.reason and "`vllm serve`" in d.reason and "≥160 GiB" in d.reason
    assert "get_batch_defaults" in d.reason and "0.33" in d.reason


def test_seed_on_a_141_gb_h200_compares_against_the_70_160_tier(rules: Rules) -> None:
    report = run(
        rules,
        serve("--max-num-seqs", "128", "--max-num-batched-tokens", "16384"),
        serve(),
        hardware="h200",
        taxonomy_vram={"h200": 1128 / 8},
    )
    assert report.tier is not None and "70–160 GiB" in report.tier
    seqs = only(report, "scheduler.max_num_seqs")
    assert seqs.verdict is Verdict.DIFFERS and "70–160 GiB" in seqs.reason and "1024" in seqs.reason
    tokens = only(report, "scheduler.max_num_batched_tokens")
    assert tokens.verdict is Verdict.DIFFERS and "8192" in tokens.reason


def test_seed_max_num_seqs_1024_on_mi355x_is_the_default(rules: Rules) -> None:
    d = only(run(rules, serve("--max-num-seqs", "1024"), serve()), "scheduler.max_num_seqs")
    assert d.verdict is Verdict.EQUIVALENT
    assert d.verdict.value == "equivalent (default)"
    assert "1024" in d.reason and "≥160 GiB" in d.reason


def test_seed_max_num_batched_tokens_16384_on_mi355x_033_is_the_default(rules: Rules) -> None:
    d = only(
        run(rules, serve("--max-num-batched-tokens", "16384"), serve()),
        "scheduler.max_num_batched_tokens",
    )
    assert d.verdict is Verdict.EQUIVALENT
    # ... but not under 0.27.1, whose table has no >=160 GiB tier
    old = only(
        run(rules, serve("--max-num-batched-tokens", "16384"), serve(), version="0.27.1"),
        "scheduler.max_num_batched_tokens",
    )
    assert old.verdict is Verdict.DIFFERS and "8192" in old.reason


def test_seed_moe_backend_aiter_vs_the_specific_backend_differs(rules: Rules) -> None:
    d = only(
        run(
            rules,
            serve("--moe-backend", "aiter"),
            serve("--moe-backend", "aiter_triton_mxfp4_bf16"),
        ),
        "kernel.moe_backend",
    )
    assert d.verdict is Verdict.DIFFERS
    assert (d.bench_value, d.recipe_value) == ("aiter", "aiter_triton_mxfp4_bf16")


def test_seed_synthetic_acceptance_keys_are_benchmark_only_and_the_rest_is_compared(
    rules: Rules,
) -> None:
    d = only(
        run(
            rules,
            serve("--speculative-config", SPEC_THROUGHPUT),
            serve("--speculative-config", SPEC_RECIPE),
        ),
        "speculative_config",
    )
    assert d.verdict is Verdict.BENCHMARK_ONLY
    assert d.benchmark_only_keys == ("rejection_sample_method", "synthetic_acceptance_length")
    assert "rejection_sample_method synthetic (benchmark-only) vs block" in d.reason
    assert "num_speculative_tokens" not in d.reason  # equal: not reported as a difference


def test_seed_speculative_rest_still_differs_when_it_does(rules: Rules) -> None:
    recipe = SPEC_RECIPE.replace('"num_speculative_tokens":5', '"num_speculative_tokens":7')
    d = only(
        run(
            rules,
            serve("--speculative-config", SPEC_THROUGHPUT),
            serve("--speculative-config", recipe),
        ),
        "speculative_config",
    )
    assert d.verdict is Verdict.DIFFERS
    assert "num_speculative_tokens 5 vs 7" in d.reason
    assert d.benchmark_only_keys == ("rejection_sample_method", "synthetic_acceptance_length")


def test_seed_eval_arm_with_block_rejection_is_the_same(rules: Rules) -> None:
    eval_arm = SPEC_RECIPE.replace('"method":"dspark",', '"method": "dspark", ')
    d = only(
        run(
            rules,
            serve("--speculative-config", eval_arm),
            serve("--speculative-config", SPEC_RECIPE),
        ),
        "speculative_config",
    )
    assert d.verdict is Verdict.SAME and d.benchmark_only_keys == ()


@pytest.mark.parametrize(
    "flag", [("--host", "0.0.0.0"), ("--port", "8888"), ("--served-model-name", "dsv41")]
)
def test_seed_front_end_flags(rules: Rules, flag: tuple[str, str]) -> None:
    report = run(rules, serve(*flag), serve())
    d = next(x for x in report.diffs if x.flag == flag[0])
    assert d.verdict is Verdict.FRONT_END_ONLY and d.category == "front-end"
    assert report.identical


def test_seed_image_pin_change(rules: Rules) -> None:
    report = run(rules, serve(), serve(), version=None, bench_image=NIGHTLY, recipe_image=OLD_TAG)
    d = only(report, "image")
    assert d.verdict is Verdict.DIFFERS and d.kind == "image"
    assert f"pin change from deepseekv41-flash-0909 to nightly-{SHA}" in d.reason
    assert "nightly build of vLLM commit eed1f3d0c604" in d.reason
    assert report.version.reason.startswith("nightly image: assumed 0.33 rules")


def test_seed_full_launch_lines(rules: Rules) -> None:
    """The #3058 throughput arm vs the recipe before the alignment: exactly the seed PR's
    edits are reported as serving differences."""
    bench = serve(
        "--host", "0.0.0.0", "--port", "8888", "--tensor-parallel-size", "4",
        "--gpu-memory-utilization", "0.9", "--moe-backend", "aiter", "--max-num-seqs", "128",
        "--max-num-batched-tokens", "16384", "--tokenizer-mode", "deepseek_v41",
        "--tool-call-parser", "deepseek_v41", "--enable-auto-tool-choice",
        "--reasoning-parser", "deepseek_v41", "--language-model-only",
        "--speculative-config", SPEC_THROUGHPUT, "--disable-uvicorn-access-log",
    )  # fmt: skip
    recipe = serve(
        "--tokenizer-mode", "deepseek_v41", "--tensor-parallel-size", "4",
        "--gpu-memory-utilization", "0.9", "--moe-backend", "aiter_triton_mxfp4_bf16",
        "--tool-call-parser", "deepseek_v41", "--enable-auto-tool-choice",
        "--reasoning-parser", "deepseek_v41", "--speculative-config", SPEC_RECIPE,
        "--language-model-only",
    )  # fmt: skip
    env = {"VLLM_ROCM_USE_AITER": "1", "VLLM_USE_BREAKABLE_CUDAGRAPH": "1"}
    report = diff_launch(
        LaunchSide(bench, {**env, "AITER_TRITON_LOG_LEVEL": "ERROR", "RESULT_DIR": "/r"}, NIGHTLY),
        LaunchSide(recipe, env, OLD_TAG),
        hardware="mi355x",
        rules=rules,
        recipe_min_version="0.25.0",
    )
    mismatches = {d.flag: d.verdict for d in report.mismatches}
    assert mismatches == {
        "--moe-backend": Verdict.DIFFERS,
        "--max-num-seqs": Verdict.DIFFERS,
        "AITER_TRITON_LOG_LEVEL": Verdict.DIFFERS,
        "image": Verdict.DIFFERS,
    }
    assert only(report, "scheduler.max_num_batched_tokens").verdict is Verdict.EQUIVALENT
    assert {d.key for d in report.benchmark_only} == {"speculative_config", "RESULT_DIR"}
    assert not report.bench_findings and not report.recipe_findings
    keys = [d.kind for d in report.diffs]
    assert keys == sorted(keys, key=["flag", "env", "image"].index)  # flags, env, image


# --- §5.4-5.6 canonical values, folded aliases, static defaults ------------------------------


@pytest.mark.parametrize(
    ("bench", "recipe"),
    [
        (("--max_num_seqs=8",), ("--max-num-seqs", "8")),
        (("-tp", "4"), ("--tensor-parallel-size", "4")),
        (("--max-cudagraph-capture-size", "512"), ("-cc.max_cudagraph_capture_size", "512")),
        (("--attention-backend", "flashinfer"), ("-ac", '{"backend": "FLASHINFER"}')),
        (
            ("--spec-method", "deepseek_mtp", "--spec-tokens", "2"),
            ("-sc", '{"method":"mtp","num_speculative_tokens":2}'),
        ),
        (
            ("-cc", '{"mode": "VLLM_COMPILE", "cudagraph_mode": "piecewise"}'),
            ("--compilation-config", '{"cudagraph_mode":"PIECEWISE","mode":3}'),
        ),
        (("--moe-backend", "FlashInfer-Cutlass"), ("--moe-backend", "flashinfer_cutlass")),
        (
            ("--cudagraph-capture-sizes", "8", "1", "4"),
            ("--cudagraph-capture-sizes", "1", "4", "8", "8"),
        ),
        (("--gpu-memory-utilization", "0.90"), ("--gpu-memory-utilization", ".9")),
        (("--dtype", "half"), ("--dtype", "float16")),
    ],
)
def test_spellings_that_are_the_same(
    rules: Rules, bench: tuple[str, ...], recipe: tuple[str, ...]
) -> None:
    report = run(rules, serve(*bench), serve(*recipe))
    assert all(d.verdict is Verdict.SAME for d in report.diffs), [
        (d.key, d.verdict, d.reason) for d in report.diffs
    ]
    assert report.identical


def test_human_readable_ints_are_not_all_equal(rules: Rules) -> None:
    d = only(
        run(
            rules,
            serve("--max-num-batched-tokens", "16k"),
            serve("--max-num-batched-tokens", "16384"),
        ),
        "scheduler.max_num_batched_tokens",
    )
    assert d.verdict is Verdict.DIFFERS and (d.bench_value, d.recipe_value) == (16000, 16384)
    same = only(
        run(
            rules,
            serve("--max-num-batched-tokens", "16K"),
            serve("--max-num-batched-tokens", "16384"),
        ),
        "scheduler.max_num_batched_tokens",
    )
    assert same.verdict is Verdict.SAME


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (("-tp", "1"), "parallel.tensor_parallel_size"),
        (("--performance-mode", "balanced"), "vllm.performance_mode"),
        (("-O3",), "vllm.optimization_level"),
        (("-O2",), "vllm.optimization_level"),
        (("--no-enable-expert-parallel",), "parallel.enable_expert_parallel"),
        (("--kv-cache-dtype", "auto"), "cache.cache_dtype"),
        (("--moe-backend", "auto"), "kernel.moe_backend"),
        (("--gpu-memory-utilization", "0.92"), "cache.gpu_memory_utilization"),
        (("-cc.cudagraph_mode", "full_and_piecewise"), "compilation.cudagraph_mode"),
        (("-cc.mode", "3"), "compilation.mode"),
        (
            ("--distributed-executor-backend", "mp", "-tp", "8"),
            "parallel.distributed_executor_backend",
        ),
        (("--max-cudagraph-capture-size", "512"), "compilation.max_cudagraph_capture_size"),
        (("--enable-prefix-caching",), "cache.enable_prefix_caching"),
    ],
)
def test_explicit_values_equal_to_the_default_are_equivalent(
    rules: Rules, args: tuple[str, ...], key: str
) -> None:
    recipe = ("-tp", "8") if "-tp" in args and args[-1] == "8" else ()
    d = only(run(rules, serve(*args), serve(*recipe)), key)
    assert d.verdict is Verdict.EQUIVALENT, d.reason
    assert "default" in d.reason


def test_o3_vs_o2_both_explicit_is_equivalent(rules: Rules) -> None:
    d = only(run(rules, serve("-O3"), serve("-O", "2")), "vllm.optimization_level")
    assert d.verdict is Verdict.EQUIVALENT and "identical to O2" in d.reason


def test_gpu_memory_utilization_default_depends_on_the_version(rules: Rules) -> None:
    for version, verdict in (
        ("0.17.0", Verdict.EQUIVALENT),
        ("0.22.0", Verdict.DIFFERS),
        ("0.33.0", Verdict.DIFFERS),
    ):
        d = only(
            run(rules, serve("--gpu-memory-utilization", "0.9"), serve(), version=version),
            "cache.gpu_memory_utilization",
        )
        assert d.verdict is verdict, (version, d.reason)
    between = only(
        run(rules, serve("--gpu-memory-utilization", "0.9"), serve(), version="0.20.0"),
        "cache.gpu_memory_utilization",
    )
    assert "not verified for 0.20.0" in between.reason


@pytest.mark.parametrize(
    ("args", "key", "verdict", "category"),
    [
        (("--block-size", "16"), "cache.block_size", Verdict.DIFFERS, "engine"),  # never removed
        (("--async-scheduling",), "scheduler.async_scheduling", Verdict.DIFFERS, "maybe"),
        (("--moe-backend", "aiter"), "kernel.moe_backend", Verdict.UNKNOWN, "maybe"),
        (("--kv-cache-dtype", "fp8"), "cache.cache_dtype", Verdict.UNKNOWN, "maybe"),
        (("-q", "fp8"), "model.quantization", Verdict.UNKNOWN, "maybe"),
        (("--no-enable-prefix-caching",), "cache.enable_prefix_caching", Verdict.DIFFERS, "engine"),
        (("--enforce-eager",), "model.enforce_eager", Verdict.DIFFERS, "engine"),
        (
            ("--distributed-executor-backend", "mp"),
            "parallel.distributed_executor_backend",
            Verdict.DIFFERS,
            "maybe",
        ),
        (
            ("-cc.cudagraph_mode", "FULL_DECODE_ONLY"),
            "compilation.cudagraph_mode",
            Verdict.DIFFERS,
            "engine",
        ),
        (("--tokenizer-mode", "deepseek_v4"), "model.tokenizer_mode", Verdict.DIFFERS, "engine"),
        (("--tool-call-parser", "x"), "api.tool_call_parser", Verdict.DIFFERS, "api"),
        (("-asc", "4"), "serve.api_server_count", Verdict.DIFFERS, "topology"),
    ],
)
def test_benchmark_only_serving_flags(
    rules: Rules, args: tuple[str, ...], key: str, verdict: Verdict, category: str
) -> None:
    d = only(run(rules, serve(*args), serve()), key)
    assert (d.verdict, d.category) == (verdict, category), d.reason


def test_recipe_only_flag(rules: Rules) -> None:
    d = only(run(rules, serve(), serve("--block-size", "256")), "cache.block_size")
    assert d.verdict is Verdict.RECIPE_ONLY
    assert d.recipe_tokens == ("--block-size", "256") and d.bench_tokens == ()
    assert "user_specified_block_size" in d.reason


def test_max_cudagraph_capture_size_1024_for_dspark_on_mi355x(rules: Rules) -> None:
    """The reviewer's nit: 1024 differs from the default, which is capped at 512 off SM10x."""
    spec = ("--speculative-config", SPEC_RECIPE)
    d = only(
        run(rules, serve("--max-cudagraph-capture-size", "1024", *spec), serve(*spec)),
        "compilation.max_cudagraph_capture_size",
    )
    assert d.verdict is Verdict.DIFFERS and "cap 512" in d.reason
    b200 = only(
        run(
            rules,
            serve("--max-cudagraph-capture-size", "1024", *spec),
            serve(*spec),
            hardware="b200",
        ),
        "compilation.max_cudagraph_capture_size",
    )
    assert b200.verdict is Verdict.EQUIVALENT and "SM10x" in b200.reason


def test_throughput_mode_changes_the_omitted_defaults(rules: Rules) -> None:
    report = run(rules, serve("--max-num-seqs", "2048"), serve("--performance-mode", "throughput"))
    assert only(report, "scheduler.max_num_seqs").verdict is Verdict.EQUIVALENT
    assert only(report, "vllm.performance_mode").verdict is Verdict.RECIPE_ONLY


def test_speculative_static_defaults_are_removed(rules: Rules) -> None:
    d = only(
        run(
            rules,
            serve(
                "-sc", '{"method":"mtp","num_speculative_tokens":2,"draft_sample_method":"greedy"}'
            ),
            serve("-sc", '{"method":"deepseek_mtp","num_speculative_tokens":2}'),
        ),
        "speculative_config",
    )
    assert d.verdict is Verdict.EQUIVALENT and "greedy" in d.reason


def test_unknown_version_is_said_in_the_verdict_reasons(rules: Rules) -> None:
    report = run(
        rules, serve("--max-num-seqs", "128"), serve(), version=None, bench_image="x/vllm:custom"
    )
    assert report.version.source == "unknown"
    assert "version unknown" in only(report, "scheduler.max_num_seqs").reason
    nightly = run(rules, serve("--max-num-seqs", "128"), serve(), version=None, bench_image=NIGHTLY)
    assert "nightly image, assumed" in only(nightly, "scheduler.max_num_seqs").reason


# --- §5.7 unknown device --------------------------------------------------------------------------


def test_unknown_device_says_equal_on_one_tier_and_differs_on_another(rules: Rules) -> None:
    report = run(rules, serve("--max-num-batched-tokens", "16384"), serve(), hardware=None)
    d = only(report, "scheduler.max_num_batched_tokens")
    assert d.verdict is Verdict.UNKNOWN
    assert "equal on tier ≥160 GiB" in d.reason and "differs on tier 70–160 GiB" in d.reason
    assert report.tier is None


def test_unknown_device_when_every_tier_agrees(rules: Rules) -> None:
    d = only(
        run(rules, serve("--max-num-seqs", "64"), serve(), hardware=None), "scheduler.max_num_seqs"
    )
    assert d.verdict is Verdict.DIFFERS and "256 on other" in d.reason


def test_device_context_prefers_the_taxonomy(rules: Rules) -> None:
    assert device_context("h200", rules).memory_gib == 139.8
    assert device_context("h200", rules, {"h200": 141.0}).memory_gib == 141.0
    assert device_context(None, rules).memory_gib is None


# --- §5.8 classes: benchmark-only flags and env -------------------------------------------------


def test_benchmark_only_flags_are_always_surfaced(rules: Rules) -> None:
    d = only(
        run(rules, serve("--load-format", "dummy"), serve("--load-format", "dummy")),
        "load.load_format",
    )
    assert d.verdict is Verdict.BENCHMARK_ONLY and "must not" in d.reason
    real = only(run(rules, serve("--load-format", "fastsafetensors"), serve()), "load.load_format")
    assert real.verdict is Verdict.DIFFERS


def test_env_classification(rules: Rules) -> None:
    report = run(
        rules,
        serve(),
        serve(),
        bench_env={
            "VLLM_ROCM_USE_AITER": "1",
            "AIPERF_X": "1",
            "VLLM_LOGGING_LEVEL": "DEBUG",
            "WEIRD": "1",
            "NCCL_X": "1",
        },
        recipe_env={"VLLM_ROCM_USE_AITER": "0", "NCCL_X": "1", "HSA_Y": "2"},
    )
    verdicts = {d.key: d.verdict for d in report.diffs if d.kind == "env"}
    assert verdicts == {
        "VLLM_ROCM_USE_AITER": Verdict.DIFFERS,
        "AIPERF_X": Verdict.BENCHMARK_ONLY,
        "VLLM_LOGGING_LEVEL": Verdict.FRONT_END_ONLY,
        "WEIRD": Verdict.UNKNOWN,
        "NCCL_X": Verdict.SAME,
        "HSA_Y": Verdict.RECIPE_ONLY,
    }


def test_removed_env_mapping_has_no_effect_on_newer_releases(rules: Rules) -> None:
    report = run(rules, serve(), serve(), bench_env={"VLLM_ATTENTION_BACKEND": "FLASHINFER"})
    d = only(report, "VLLM_ATTENTION_BACKEND")
    assert d.verdict is Verdict.EQUIVALENT and "no effect" in d.reason
    old = only(
        run(
            rules,
            serve(),
            serve(),
            version="0.12.0",
            bench_env={"VLLM_ATTENTION_BACKEND": "FLASHINFER"},
        ),
        "VLLM_ATTENTION_BACKEND",
    )
    assert old.verdict is Verdict.DIFFERS


def test_env_prefix_in_argv_joins_the_env(rules: Rules) -> None:
    report = run(
        rules, ("VLLM_ROCM_USE_AITER=1", *serve()), serve(), recipe_env={"VLLM_ROCM_USE_AITER": "1"}
    )
    assert only(report, "VLLM_ROCM_USE_AITER").verdict is Verdict.SAME


# --- model, image -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bench_model", "verdict"),
    [
        (MODEL, Verdict.SAME),
        ("/models/DeepSeek-V4.1-Flash", Verdict.SAME),
        ("/models/some-local-dir", Verdict.UNKNOWN),
        ("deepseek-ai/DeepSeek-V4-Flash", Verdict.DIFFERS),
    ],
)
def test_model_ids_and_local_paths(rules: Rules, bench_model: str, verdict: Verdict) -> None:
    report = run(rules, ("vllm", "serve", bench_model), serve())
    assert only(report, "model").verdict is verdict


@pytest.mark.parametrize("recipe_env", [{}, {"HSA_NO_SCRATCH_RECLAIM": "1"}])
def test_a_variable_a_script_decides_when_it_runs_is_unknown(
    rules: Rules, recipe_env: dict[str, str]
) -> None:
    """`export HSA_NO_SCRATCH_RECLAIM=1` under a firmware check is set on some hosts only:
    whether the recipe differs is not known, and the text never shows the evaluator's
    internal spelling of the value."""
    decided = placeholder("HSA_NO_SCRATCH_RECLAIM", "undecidable-branch")
    report = run(
        rules,
        serve(),
        serve(),
        bench_env={"HSA_NO_SCRATCH_RECLAIM": decided},
        recipe_env=recipe_env,
    )
    d = only(report, "HSA_NO_SCRATCH_RECLAIM")
    assert d.verdict is Verdict.UNKNOWN
    assert "known only when its script runs" in d.reason
    assert ":opaque:" not in d.reason


def test_a_model_known_only_at_run_time_is_unknown_not_drift(rules: Rules) -> None:
    """A checkpoint a script resolves when it runs (a Python helper's output) may well be the
    recipe's: the diff says it cannot tell, and names the value as the script spelled it."""
    served = placeholder("MODEL_PATH", "command-output")
    d = only(run(rules, ("vllm", "serve", served), serve()), "model")
    assert d.verdict is Verdict.UNKNOWN
    assert "$MODEL_PATH" in d.reason and "known only when its script runs" in d.reason


@pytest.mark.parametrize(
    ("bench", "recipe", "verdict", "text"),
    [
        ("vllm/vllm-openai:v0.25.0", "vllm/vllm-openai:v0.25.0", Verdict.SAME, "both sides use"),
        (
            "vllm/vllm-openai:v0.27.1",
            "vllm/vllm-openai:v0.25.0",
            Verdict.DIFFERS,
            "pin change from v0.25.0 to v0.27.1",
        ),
        (
            "vllm/vllm-openai:v0.25.0",
            "vllm/vllm-openai-rocm:v0.25.0",
            Verdict.DIFFERS,
            "different image repositories",
        ),
        (None, "vllm/vllm-openai:latest", Verdict.RECIPE_ONLY, "only the recipe"),
    ],
)
def test_images(
    rules: Rules, bench: str | None, recipe: str | None, verdict: Verdict, text: str
) -> None:
    d = only(run(rules, serve(), serve(), bench_image=bench, recipe_image=recipe), "image")
    assert d.verdict is verdict and text in d.reason


# --- findings and the report-----------------------------------------------------------------------


def test_findings_per_side(rules: Rules) -> None:
    report = run(
        rules, serve("--max-num-seqs", "8", "--max-num-seqs", "16"), serve("--no-such-flag")
    )
    assert {f.code for f in report.bench_findings} == {"duplicate-flag"}
    assert {f.code for f in report.recipe_findings} == {"unknown-flag"}


def test_synthetic_rejection_is_validated(rules: Rules) -> None:
    bad = SPEC_THROUGHPUT.replace(
        '"synthetic_acceptance_length":3.8', '"synthetic_acceptance_length":9'
    )
    report = run(rules, serve("-sc", bad), serve())
    assert any("outside [1, 6]" in f.message for f in report.bench_findings)
    block_early = run(rules, serve("-sc", SPEC_RECIPE), serve(), version="0.22.0")
    assert any("block" in f.message for f in block_early.bench_findings)


def test_report_json_is_serialisable(rules: Rules) -> None:
    import json

    report = run(
        rules,
        serve("--speculative-config", SPEC_THROUGHPUT),
        serve("--speculative-config", SPEC_RECIPE),
    )
    data = json.loads(json.dumps(report.to_json()))
    assert data["version"]["version"] == "0.33.0"
    assert data["diffs"][-1]["benchmark_only_keys"] == [
        "rejection_sample_method",
        "synthetic_acceptance_length",
    ]
    assert data["identical"] is True


@pytest.mark.parametrize(
    ("name", "value", "same"),
    [
        ("AITER_MOE_SORT_BACKEND", "auto", True),  # aiter/fused_moe.py reads "auto" when unset
        ("AITER_MOE_SORT_BACKEND", "opus", False),
        ("AITER_BYPASS_TUNE_CONFIG", "0", True),
        ("AITER_BYPASS_TUNE_CONFIG", "1", False),
        ("AITER_USE_CK_MOE_SORTING", "0", True),
        ("AITER_USE_CK_MOE_SORTING", "1", False),
    ],
)
def test_exporting_a_library_default_is_no_difference(
    rules: Rules, name: str, value: str, same: bool
) -> None:
    report = run(rules, serve(), serve(), bench_env={name: value})
    [diff] = [d for d in report.diffs if d.key == name]
    assert (diff.verdict is Verdict.EQUIVALENT) is same, diff.reason
    if same:
        assert "read when it is unset [aiter/fused_moe.py" in diff.reason


# --- deprecated config fields read as vLLM reads them (§5.5) -------------------------------------

RAGGED_OLD = "--attention-config.use_trtllm_ragged_deepseek_prefill=True"
QUERY_QUANT = '"use_prefill_query_quantization":true'


def test_a_deprecated_field_is_the_setting_vllm_reads_it_as(rules: Rules) -> None:
    """vLLM migrates use_trtllm_ragged_deepseek_prefill=True into mla_prefill_backend
    TRTLLM_RAGGED: a recipe spelling the old field launches the backend the benchmark names."""
    bench = serve(
        "--attention-config", '{"mla_prefill_backend":"TRTLLM_RAGGED",' + QUERY_QUANT + "}"
    )
    report = run(rules, bench, serve(RAGGED_OLD), hardware="b300")
    backend = only(report, "attention.mla_prefill_backend")
    assert backend.verdict is Verdict.SAME
    assert "deprecated spelling" in backend.reason and "_migrate_deprecated" in backend.reason
    assert not [d for d in report.diffs if d.key == "attention.use_trtllm_ragged_deepseek_prefill"]
    # the field it does not cover is still a difference
    assert only(report, "attention.use_prefill_query_quantization").verdict is Verdict.DIFFERS


def test_another_backend_than_the_deprecated_field_means_differs_and_says_why(
    rules: Rules,
) -> None:
    bench = serve("--attention-config", '{"mla_prefill_backend":"FLASHINFER"}')
    backend = only(
        run(rules, bench, serve(RAGGED_OLD), hardware="b300"), "attention.mla_prefill_backend"
    )
    assert backend.verdict is Verdict.DIFFERS
    assert (backend.bench_value, backend.recipe_value) == ("FLASHINFER", "TRTLLM_RAGGED")
    assert "deprecated spelling" in backend.reason


def test_deprecated_fields_are_left_alone_when_no_side_names_the_new_one(rules: Rules) -> None:
    """An older vLLM reads the deprecated field on its own: nothing is rewritten then, and a
    deprecated field at a value that selects nothing is not read as a backend."""
    report = run(rules, serve(), serve(RAGGED_OLD), hardware="b300")
    assert (
        only(report, "attention.use_trtllm_ragged_deepseek_prefill").verdict is Verdict.RECIPE_ONLY
    )
    off = "--attention-config.use_trtllm_ragged_deepseek_prefill=False"
    bench = serve("--attention-config", '{"mla_prefill_backend":"FLASHINFER"}')
    report = run(rules, bench, serve(off), hardware="b300")
    assert only(report, "attention.mla_prefill_backend").recipe_value is None
