"""Profile mapping and comparison on the seed fixtures (docs/alignment.md §3-§4)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.align.compare import compare
from bot.align.profile import Profile, Unmapped, map_profile, synthetic_acceptance
from bot.benchmarks import BenchRepo, LaunchLine, extract, load_bench_repo, points
from bot.fixtures import SeedFixtures
from bot.recipes import RecipesRepo, load_recipes
from bot.rules import Rules, default_rules
from bot.sources import GitTreeSource

SEED_KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"


@pytest.fixture(scope="module")
def rules() -> Rules:
    return default_rules()


@pytest.fixture(scope="module")
def bench(seed: SeedFixtures) -> BenchRepo:
    return load_bench_repo(GitTreeSource(seed.bench_repo, seed.bench_pr_head))


@pytest.fixture(scope="module")
def recipes(seed: SeedFixtures) -> RecipesRepo:
    return load_recipes(GitTreeSource(seed.recipes_repo, seed.recipes_base))


def _launch(bench: BenchRepo, key: str, arm: str, conc: int) -> LaunchLine:
    for point, point_arm in points(bench, key):
        if point_arm == arm and point.conc == conc:
            return extract(bench, key, point, arm)
    raise AssertionError(f"no {arm} point at conc {conc} for {key}")


def test_seed_eval_arm_maps_to_the_public_profile(
    bench: BenchRepo, recipes: RecipesRepo, rules: Rules
) -> None:
    profile = map_profile(recipes, rules, _launch(bench, SEED_KEY, "eval", 32))
    assert profile == Profile(
        recipe_path="models/deepseek-ai/DeepSeek-V4.1-Flash.yaml",
        model="deepseek-ai/DeepSeek-V4.1-Flash",
        variant="default",
        hardware="mi355x",
        strategy="single_node_tp",
        features=("tool_calling", "reasoning", "spec_decoding", "text_only"),
        modes={"spec_decoding": "dspark"},
    )


def test_synthetic_throughput_arm_never_represents_the_recipe(
    bench: BenchRepo, recipes: RecipesRepo, rules: Rules
) -> None:
    launch = _launch(bench, SEED_KEY, "throughput", 4)
    assert synthetic_acceptance(launch.argv)
    profile = map_profile(recipes, rules, launch)
    assert isinstance(profile, Profile)
    assert not profile.represents_recipe and "synthetic acceptance" in profile.note
    assert profile.modes == {"spec_decoding": "dspark"}


def test_seed_drift_is_exactly_the_seed_changes(
    bench: BenchRepo, recipes: RecipesRepo, rules: Rules
) -> None:
    launch = _launch(bench, SEED_KEY, "eval", 32)
    profile = map_profile(recipes, rules, launch)
    assert isinstance(profile, Profile)
    result = compare(recipes, rules, launch, profile)
    assert [(d.flag, d.verdict.value) for d in result.drift] == [
        ("--moe-backend", "differs"),
        ("AITER_TRITON_LOG_LEVEL", "differs"),
        ("image", "differs"),
    ]
    # the scheduler cap is a benchmark setting (tuning), a difference but not drift
    assert [(d.flag, result.knob(d)) for d in result.settings] == [("--max-num-seqs", "tuning")]
    equivalent = {d.flag: d for d in result.report.diffs if d.verdict.value.startswith("equiv")}
    assert "16384" in equivalent["--max-num-batched-tokens"].reason
    assert not result.parallelism_differs and not result.aligned


def test_aligned_config_and_floating_image(
    bench: BenchRepo, recipes: RecipesRepo, rules: Rules
) -> None:
    launch = _launch(bench, "gptoss-fp4-h200-vllm", "throughput", 4)
    profile = map_profile(recipes, rules, launch)
    assert isinstance(profile, Profile) and profile.features == ("tool_calling",)
    result = compare(recipes, rules, launch, profile)
    assert result.aligned and result.notes == ()
    pinned = compare(recipes, rules, replace(launch, image="vllm/vllm-openai:v0.33.0"), profile)
    assert pinned.aligned  # the recipe floats on the default tag: reported, not drift
    assert "floats on vllm/vllm-openai:latest" in pinned.notes[0]


@pytest.mark.parametrize(
    ("change", "kind", "reason"),
    [
        ({"framework": "sglang"}, "framework", "framework sglang is not rendered by vLLM recipes"),
        ({"model": "zai-org/GLM-5-FP8"}, "model", "no recipe for model zai-org/GLM-5-FP8"),
        ({"runner": "cluster:tpu-v9"}, "hardware", "no rule in rules/hardware.yaml maps runner"),
    ],
)
def test_unmapped_reasons(
    bench: BenchRepo,
    recipes: RecipesRepo,
    rules: Rules,
    change: dict[str, str],
    kind: str,
    reason: str,
) -> None:
    launch = replace(_launch(bench, SEED_KEY, "eval", 32), **change)  # type: ignore[arg-type]
    result = map_profile(recipes, rules, launch)
    assert isinstance(result, Unmapped) and result.kind == kind and reason in result.reason


def test_strategy_not_offered_is_unmapped(
    bench: BenchRepo, recipes: RecipesRepo, rules: Rules
) -> None:
    launch = _launch(bench, SEED_KEY, "eval", 32)
    dep = replace(launch, point=replace(launch.point, dp_attn=True))
    result = map_profile(recipes, rules, dep)
    assert result == Unmapped(
        "strategy",
        "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml does not offer single_node_dep on mi355x",
    )
