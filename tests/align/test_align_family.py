"""Placement by the setting's domain: the benchmark's lanes of a recipe on one hardware family
(bot/align/family.py) decide whether a setting belongs at the family's layer."""

from __future__ import annotations

from bot.align.family import FamilyLanes
from bot.benchmarks import load_bench_repo
from bot.fixtures import SeedFixtures
from bot.recipes import load_recipes
from bot.rules import default_rules
from bot.sources import GitTreeSource

GPT_OSS = "models/openai/gpt-oss-120b.yaml"


def _family(seed: SeedFixtures) -> FamilyLanes:
    rules = default_rules()
    head = load_bench_repo(GitTreeSource(seed.bench_repo, seed.bench_pr_head), rules)
    return FamilyLanes(head, load_recipes(GitTreeSource(seed.recipes_repo, "main")), rules)


def test_a_family_is_the_recipes_lanes_on_one_generation(seed: SeedFixtures) -> None:
    family = _family(seed)
    hopper = family.lanes(GPT_OSS, "hopper")
    assert {(lane.key, lane.hardware) for lane in hopper} == {
        ("gptoss-fp4-h100-vllm", "h100"),
        ("gptoss-fp4-h200-vllm", "h200"),
    }
    assert [lane.hardware for lane in family.lanes(GPT_OSS, "blackwell")] == ["b200"]
    # another recipe's lanes and another framework's (sglang) are not the family's
    assert family.lanes(GPT_OSS, "amd") == ()


def test_a_setting_every_lane_runs_alike_agrees_and_one_they_differ_on_does_not(
    seed: SeedFixtures,
) -> None:
    family = _family(seed)
    shared = family.agreement(GPT_OSS, "hopper", ("flag", "--tool-call-parser"), "openai")
    assert shared.agreed
    assert shared.note("hopper", ("flag", "--tool-call-parser"), "openai") == (
        "every hopper lane of the recipe in the benchmark runs --tool-call-parser openai "
        "(2 lanes on h100, h200)"
    )
    other_value = family.agreement(GPT_OSS, "hopper", ("flag", "--tool-call-parser"), "hermes")
    assert not other_value.agreed
    # only the h200 lane sets it: the h100 lane runs vLLM's default
    one_gpu = family.agreement(GPT_OSS, "hopper", ("flag", "--enable-log-requests"), "false")
    assert not one_gpu.agreed
    assert one_gpu.note("hopper", ("flag", "--enable-log-requests"), "false") == (
        "the hopper lanes differ: gptoss-fp4-h100-vllm on h100 runs no --enable-log-requests"
    )
    # no lane on the family: nothing says the setting belongs there
    assert not family.agreement(GPT_OSS, "amd", ("flag", "--tool-call-parser"), "openai").agreed
