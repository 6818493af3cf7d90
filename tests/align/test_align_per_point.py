"""A setting the lane launched with several values at the recipe's parallelism (the script
chose it per concurrency) has no single benchmarked value: it is offered with the values and
where each ran, never proposed (InferenceX #2187 set VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT by
concurrency; maintainers wrote it as guide notes, not YAML)."""

from __future__ import annotations

from pathlib import Path

from bot.align.result import AlignRun, PointResult
from bot.align.targets import launched_value, where_values_ran
from bot.benchmarks import Point
from bot.present import present
from bot.vllm import FlagDiff, Verdict
from tests.align.reproduction_fixture import WIDGET, run_pr

_ALWAYS = "export VLLM_ROCM_USE_AITER_MHA=0\n"
# the fixture's lane runs conc 16, 32 and 64 (fixtures/reproduction/bench)
_BY_CONC = 'if [ "$CONC" -ge 64 ]; then\n  export VLLM_ROCM_USE_AITER_MHA=0\nfi\n'


def _run(tmp_path: Path, added: str, included: frozenset[str] = frozenset()) -> AlignRun:
    return run_pr(
        tmp_path,
        lambda text: text,
        lambda text: text.replace(
            "export VLLM_ROCM_USE_AITER=1\n", f"export VLLM_ROCM_USE_AITER=1\n{added}"
        ),
        included,
    )


def test_a_value_every_point_ran_is_proposed(tmp_path: Path) -> None:
    (outcome,) = [o for o in _run(tmp_path, _ALWAYS).outcomes if o.plan.recipe_path == WIDGET]
    assert [e.subject for e in outcome.plan.edits] == ["VLLM_ROCM_USE_AITER_MHA"]


def test_a_value_chosen_by_concurrency_is_offered_with_where_each_ran(tmp_path: Path) -> None:
    run = _run(tmp_path, _BY_CONC)
    (outcome,) = [o for o in run.outcomes if o.plan.recipe_path == WIDGET]
    plan = outcome.plan
    assert plan.edits == () and outcome.status == "offered" and not outcome.patch
    assert "1 launched with several values" in outcome.reason
    (offer,) = [e for e in plan.offered if e.subject == "VLLM_ROCM_USE_AITER_MHA"]
    wait = plan.waits_for(offer)
    assert wait is not None and wait.reason == "per-point"
    assert wait.what == "it unset (as the recipe) at conc 16, 32; 0 at conc 64"
    comment = present(_run(tmp_path / "again", _BY_CONC)).comment
    assert "the lane launched it unset (as the recipe) at conc 16, 32; 0 at conc 64" in comment
    assert "a recipe holds one value" in comment


def test_ticking_it_writes_it(tmp_path: Path) -> None:
    run = _run(tmp_path, _BY_CONC, frozenset({"VLLM_ROCM_USE_AITER_MHA"}))
    (outcome,) = [o for o in run.outcomes if o.plan.recipe_path == WIDGET]
    assert [(e.subject, e.after) for e in outcome.plan.edits] == [("VLLM_ROCM_USE_AITER_MHA", "0")]


def test_keys_only_a_benchmark_sets_do_not_make_a_json_flag_vary() -> None:
    def spec(value: dict[str, object]) -> FlagDiff:
        return FlagDiff(
            kind="flag",
            key="speculative_config",
            flag="--speculative-config",
            verdict=Verdict.BENCHMARK_ONLY,
            bench_value=value,
            recipe_value=None,
            bench_tokens=("--speculative-config", "{}"),
            recipe_tokens=(),
            reason="",
            category="engine",
            benchmark_only_keys=("rejection_sample_method", "synthetic_acceptance_length"),
        )

    mtp = {"method": "mtp", "num_speculative_tokens": 3}
    synthetic = {**mtp, "rejection_sample_method": "synthetic", "synthetic_acceptance_length": 2.5}
    assert launched_value(spec(synthetic)) == launched_value(spec(mtp))
    assert launched_value(spec({**mtp, "num_speculative_tokens": 1})) != launched_value(spec(mtp))


def test_a_field_of_a_json_flag_is_compared_as_that_field() -> None:
    # the diff of one field holds the field's value, or the flag's JSON text, and the whole
    # flag's tokens: capture sizes chosen per concurrency do not make cudagraph_mode vary
    def field(value: str, sizes: str) -> FlagDiff:
        whole = f'{{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":{sizes}}}'
        return FlagDiff(
            kind="flag",
            key="compilation.cudagraph_mode",
            flag="--compilation-config.cudagraph_mode",
            verdict=Verdict.DIFFERS,
            bench_value=whole if value == "json" else value,
            recipe_value=None,
            bench_tokens=("--compilation-config", whole),
            recipe_tokens=(),
            reason="",
            category="engine",
        )

    assert launched_value(field("FULL_DECODE_ONLY", "[4]")) == "FULL_DECODE_ONLY"
    assert launched_value(field("FULL_DECODE_ONLY", "[4,8]")) == "FULL_DECODE_ONLY"
    assert launched_value(field("json", "[4,8,12]")) == "FULL_DECODE_ONLY"


def test_a_value_only_the_eval_arm_ran_names_the_arms(tmp_path: Path) -> None:
    eval_only = 'if [ "${EVAL_ONLY:-false}" = "true" ]; then\n'
    eval_only += "  export VLLM_ROCM_USE_AITER_MHA=0\nfi\n"
    run = _run(tmp_path, eval_only)
    (outcome,) = [o for o in run.outcomes if o.plan.recipe_path == WIDGET]
    (offer,) = [e for e in outcome.plan.offered if e.subject == "VLLM_ROCM_USE_AITER_MHA"]
    wait = outcome.plan.waits_for(offer)
    assert wait is not None and wait.reason == "per-point"
    # the fixture's eval arm runs conc 32 and 64, beside the throughput arm's 16 to 64
    assert wait.what == (
        "it unset (as the recipe) at conc 16, 32, 64 (throughput); 0 at conc 32, 64 (eval)"
    )


def test_values_chosen_by_sequence_length_name_the_lengths() -> None:
    def ran(conc: int, isl: int, arm: str = "throughput") -> PointResult:
        point = Point(4, 1, False, conc, "none", "fixed-seq-len", isl, 1024, None, None)
        return PointResult("key", point, arm, "context", "")

    name = ("flag", "attention.backend")
    short, long = {name: "FLASHINFER"}, {name: "FLASH_ATTN"}
    seen = [(ran(1, 1024), short), (ran(64, 1024), short), (ran(1, 8192), long)]
    seen.append((ran(64, 8192, "eval"), long))
    assert where_values_ran(name, seen, "unset") == (
        "FLASHINFER at conc 1, 64 (throughput, ISL 1024 / OSL 1024); "
        "FLASH_ATTN at conc 1 (throughput, ISL 8192 / OSL 1024), "
        "conc 64 (eval, ISL 8192 / OSL 1024)"
    )
    # concurrency alone tells these apart: no label
    assert where_values_ran(
        name, [(ran(1, 1024), short), (ran(64, 1024), {})], "8 (as the recipe)"
    ) == ("FLASHINFER at conc 1; 8 (as the recipe) at conc 64")
