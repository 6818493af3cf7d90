"""Placement by the setting's domain: the benchmark's lanes of a recipe on one hardware family
(bot/align/family.py) decide whether a setting belongs at the family's layer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from bot.align.family import FamilyLanes, Setting
from bot.benchmarks import load_bench_repo
from bot.fixtures import SeedFixtures
from bot.recipes import load_recipes
from bot.rules import default_rules
from bot.sources import GitTreeSource
from tests.seed_cli import SEED_RECIPE, AlignCli, commit_edit

GPT_OSS = "models/openai/gpt-oss-120b.yaml"


def _family(seed: SeedFixtures) -> FamilyLanes:
    rules = default_rules()
    head = load_bench_repo(GitTreeSource(seed.bench_repo, seed.bench_pr_head), rules)
    return FamilyLanes(head, load_recipes(GitTreeSource(seed.recipes_repo, "main")), rules)


def test_a_family_is_the_recipes_lanes_on_one_generation(seed: SeedFixtures) -> None:
    family = _family(seed)
    assert family.keys(GPT_OSS, "hopper") == (
        ("gptoss-fp4-h100-vllm", "h100", "default"),
        ("gptoss-fp4-h200-vllm", "h200", "default"),
    )
    assert [hw for _, hw, _ in family.keys(GPT_OSS, "blackwell")] == ["b200"]
    # another recipe's lanes and another framework's (sglang) are not the family's
    assert family.keys(GPT_OSS, "amd") == ()
    (lane,) = family.lines("gptoss-fp4-h200-vllm", "h200", "default")
    assert lane.settings[("flag", "--tool-call-parser")] == "openai"


def test_a_setting_every_lane_runs_alike_agrees_and_one_they_differ_on_does_not(
    seed: SeedFixtures,
) -> None:
    family = _family(seed)
    parser = Setting("--tool-call-parser", "flag", {("flag", "--tool-call-parser"): "openai"})
    shared = family.agreement(GPT_OSS, "hopper", parser)
    assert shared.agreed
    assert shared.note("hopper", "hardware_overrides.hopper") == (
        "every Hopper lane of the recipe in the benchmark runs --tool-call-parser openai "
        "(2 lanes on h100, h200)"
    )
    hermes = Setting("--tool-call-parser", "flag", {("flag", "--tool-call-parser"): "hermes"})
    assert not family.agreement(GPT_OSS, "hopper", hermes).agreed
    # only the h200 lane sets it: the h100 lane runs vLLM's default
    logging = Setting("--enable-log-requests", "flag", {("flag", "--enable-log-requests"): "false"})
    one_gpu = family.agreement(GPT_OSS, "hopper", logging)
    assert not one_gpu.agreed
    assert one_gpu.note("hopper", "hardware_overrides.hopper") == (
        "the Hopper lanes differ: gptoss-fp4-h100-vllm on h100 runs no --enable-log-requests"
    )
    # no lane on the family: nothing says the setting belongs there
    none = family.agreement(GPT_OSS, "amd", parser)
    assert not none.agreed and none.lanes == ()
    assert none.note("amd", "hardware_overrides.amd") == ""
    # a block that also serves a checkpoint no lane of the family runs
    other = family.agreement(GPT_OSS, "hopper", parser, frozenset({"default", "fp8"}))
    assert not other.agreed and other.uncovered == ("fp8",)
    assert other.note("hopper", "hardware_overrides.hopper") == (
        "hardware_overrides.hopper also serves variant fp8, which no Hopper lane runs"
    )
    # an env variable is its own name only
    metrics = Setting.env("GPU_METRICS_CSV", "/workspace/results/gpu_metrics.csv")
    assert family.agreement(GPT_OSS, "hopper", metrics).agreed


def _env_edit(out: Path) -> dict[str, Any]:
    (plan,) = json.loads((out / "plan.json").read_text())["plans"]
    (edit,) = [e for e in plan["edits"] if e["subject"] == "AITER_TRITON_LOG_LEVEL"]
    return cast(dict[str, Any], edit)


def test_the_family_block_takes_a_setting_only_when_every_variant_it_serves_ran_it(
    align_cli: AlignCli, recipes_clone: Path
) -> None:
    # the seed's only AMD lane runs AITER_TRITON_LOG_LEVEL=ERROR: the amd block takes it
    status, out = align_cli(recipes=recipes_clone, recipes_ref="HEAD")
    assert status == 1
    edit = _env_edit(out)
    assert edit["node"] == "hardware_overrides.amd.extra_env.AITER_TRITON_LOG_LEVEL"
    assert (
        "every AMD lane of the recipe in the benchmark runs AITER_TRITON_LOG_LEVEL ERROR"
        in (edit["placement"])
    )
    assert "kept to the benchmarked GPU" not in _bullet(out)
    # a second checkpoint the amd block also serves, which no AMD lane runs: the family is
    # a domain of GPUs, not of checkpoints, so the setting stays with the benchmarked GPU
    commit_edit(recipes_clone, SEED_RECIPE, "\ncompatible_strategies:\n", BF16_VARIANT)
    status, out = align_cli(recipes=recipes_clone, recipes_ref="HEAD")
    assert status == 1
    edit = _env_edit(out)
    assert edit["node"] == (
        "variants.default.hardware_overrides.mi355x.extra_env.AITER_TRITON_LOG_LEVEL"
    )
    assert "also serves variant bf16, which no AMD lane runs" in edit["placement"]
    # the reviewer reads why not the amd block beside the edit, not only in plan.json
    assert _bullet(out).endswith(
        "; kept to the benchmarked GPU because `hardware_overrides.amd` also serves variant "
        "bf16, which no AMD lane runs."
    )


def _bullet(out: Path) -> str:
    lines = (out / "pr-body.md").read_text().splitlines()
    return next(line for line in lines if line.startswith("- Add `AITER_TRITON_LOG_LEVEL"))


BF16_VARIANT = """  bf16:
    model_id: "deepseek-ai/DeepSeek-V4.1-Flash-BF16"
    precision: bf16
    vram_minimum_gb: 600

compatible_strategies:
"""


def test_the_pr_body_says_which_gpus_a_family_edit_reaches_that_no_point_ran(
    seed_out_ungated: Path,
) -> None:
    bullets = [
        line
        for line in (seed_out_ungated / "pr-body.md").read_text().splitlines()
        if line.startswith(("- Add `AITER_TRITON_LOG_LEVEL", "- Set `--moe-backend"))
    ]
    log_level, backend = sorted(bullets)
    assert log_level.endswith(
        "; it also reaches MI300X, MI325X, MI350X, on which this PR aligns no lane."
    )
    # an override at the benchmarked GPU reaches nothing else
    assert "aligns no lane" not in backend
