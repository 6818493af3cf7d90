"""The audit on the bundled seed fixtures: exactly the seed drift before the alignment, none
after it, and reasons a maintainer can act on for every row that is not compared."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.audit import AuditReport, render_markdown, run_audit
from bot.audit.run import AuditRun
from bot.fixtures import SEED_CONFIG_KEY, SEED_RECIPE, SeedFixtures
from bot.recipes.edit import EnsurePath, InsertKey, SetScalar, edit_recipe
from bot.rules import Rules, default_rules
from bot.sources import GitTreeSource

# --max-num-seqs 128 is a benchmark setting (tuning): listed on the row, not counted
SEED_DRIFT = ["--moe-backend", "AITER_TRITON_LOG_LEVEL", "image"]
NIGHTLY = "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"
H100_SCRIPT = "benchmarks/single_node/fixed_seq_len/gptoss_fp4_h100.sh"


@pytest.fixture(scope="module")
def rules() -> Rules:
    return default_rules()


@pytest.fixture(scope="module")
def before(seed: SeedFixtures, rules: Rules) -> AuditRun:
    return run_audit(
        GitTreeSource(seed.bench_repo, seed.bench_pr_head),
        GitTreeSource(seed.recipes_repo, seed.recipes_base),
        rules,
    )


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def aligned_recipes(seed: SeedFixtures, tmp_path_factory: pytest.TempPathFactory) -> GitTreeSource:
    """A copy of the recipes repo with the seed alignment committed (written as edits)."""
    copy = tmp_path_factory.mktemp("aligned") / "recipes"
    subprocess.run(["git", "clone", "-q", str(seed.recipes_repo), str(copy)], check=True)
    edits = [
        SetScalar("model.docker_image.amd", NIGHTLY),
        SetScalar("hardware_overrides.amd.extra_args[3]", "aiter"),
        InsertKey(
            "hardware_overrides.amd.extra_env",
            "AITER_TRITON_LOG_LEVEL",
            "ERROR",
            after="VLLM_ROCM_USE_AITER_MOE",
        ),
        EnsurePath(
            "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args",
            ["--max-num-seqs", "128"],
        ),
    ]
    result = edit_recipe(GitTreeSource(copy, "HEAD"), SEED_RECIPE, edits)
    (copy / SEED_RECIPE).write_text(result.text)
    git(copy, "commit", "-qam", "Align V4.1-Flash MI355X with InferenceX#3058")
    return GitTreeSource(copy, git(copy, "rev-parse", "HEAD"))


def drift_of(report: AuditReport, key: str) -> list[list[str]]:
    return [[f.flag for f in row.flags if f.drift] for row in report.rows if row.config_key == key]


def test_before_the_alignment_exactly_the_seed_drift(before: AuditRun) -> None:
    report = before.report
    seed_rows = [row for row in report.rows if row.config_key == SEED_CONFIG_KEY]
    # six agentic throughput arms (conc 1..32) and the eval arm at the highest concurrency
    assert [(row.point.conc if row.point else 0, row.arm) for row in seed_rows] == [
        (1, "throughput"),
        (2, "throughput"),
        (4, "throughput"),
        (8, "throughput"),
        (16, "throughput"),
        (32, "throughput"),
        (32, "eval"),
    ]
    assert drift_of(report, SEED_CONFIG_KEY) == [SEED_DRIFT] * 7
    assert {row.status_text for row in seed_rows} == {"drifted (3)"}
    eval_row = seed_rows[-1]
    assert eval_row.profile == (
        "DeepSeek-V4.1-Flash mi355x single_node_tp "
        "(tool_calling, reasoning, spec_decoding=dspark, text_only)"
    )
    by_flag = {f.flag: f for f in eval_row.flags}
    assert (by_flag["--moe-backend"].bench, by_flag["--moe-backend"].recipe) == (
        "aiter",
        "aiter_triton_mxfp4_bf16",
    )
    max_seqs = by_flag["--max-num-seqs"]
    assert (max_seqs.bench, max_seqs.recipe, max_seqs.knob, max_seqs.drift) == (
        "128",
        "",
        "tuning",
        False,
    )
    assert by_flag["image"].bench == NIGHTLY
    assert {f.verdict for f in eval_row.flags} == {"differs"}
    assert {f.knob for f in eval_row.flags if f.drift} == {"kernel", "serving", "image"}
    assert report.drift_by_recipe()[0]["recipe"] == "DeepSeek-V4.1-Flash"
    # the synthetic-acceptance throughput arms are compared, but only as context
    assert [row.context for row in seed_rows] == [True] * 6 + [False]
    assert "synthetic acceptance" in seed_rows[0].notes[0]
    # every other vLLM row: aligned, or not compared with a reason
    others = [row for row in report.rows if row.config_key != SEED_CONFIG_KEY]
    assert others and all(row.status != "drifted" for row in others)
    assert all(row.reason for row in others if row.status in ("unmapped", "unresolved"))
    assert report.by_status() == {"aligned": 29, "drifted": 7, "unmapped": 2, "unresolved": 2}
    assert report.internal_errors == 0 and report.warnings == ()


def test_after_the_alignment_no_drift(
    seed: SeedFixtures, rules: Rules, aligned_recipes: GitTreeSource, before: AuditRun
) -> None:
    after = run_audit(GitTreeSource(seed.bench_repo, seed.bench_pr_head), aligned_recipes, rules)
    report = after.report
    assert not [row for row in report.rows if row.status == "drifted"]
    seed_rows = [row for row in report.rows if row.config_key == SEED_CONFIG_KEY]
    assert {row.status for row in seed_rows} == {"aligned"}
    # nothing else moved: the same rows keep the same verdicts
    unchanged = [
        (r.config_key, r.point_label, r.arm, r.status_text)
        for r in report.rows
        if r.config_key != SEED_CONFIG_KEY
    ]
    assert unchanged == [
        (r.config_key, r.point_label, r.arm, r.status_text)
        for r in before.report.rows
        if r.config_key != SEED_CONFIG_KEY
    ]


def test_rows_that_are_not_compared_say_why(before: AuditRun) -> None:
    report = before.report
    glm = {row.status_text for row in report.rows if row.config_key == "glm5-fp8-b200-vllm"}
    assert glm == {"unmapped (no recipe for model zai-org/GLM-5-FP8)"}
    h100 = [row for row in report.rows if row.config_key == "gptoss-fp4-h100-vllm"]
    assert h100 and {row.status for row in h100} == {"unresolved"}
    assert all("`nvidia-smi -L`" in row.reason and f"{H100_SCRIPT}:8" in row.reason for row in h100)
    (sglang,) = report.out_of_scope
    assert (sglang.config_key, sglang.framework, sglang.reason) == (
        "dsr1-fp8-mi355x-sglang",
        "sglang",
        "framework sglang is not rendered by vLLM recipes",
    )
    assert not [row for row in report.rows if row.config_key == "dsr1-fp8-mi355x-sglang"]
    assert report.out_of_scope_by_framework() == {"sglang": 1}
    # a port that depends on the runner node is not serving configuration: noted, compared
    dsr1 = [row for row in report.rows if row.config_key == "dsr1-fp8-mi355x-vllm"]
    assert {row.status for row in dsr1} == {"aligned"}
    assert any("$PORT" in note and "--port" in note for note in dsr1[0].notes)
    # the recipe floats on the default image: the pin difference is a note, not drift
    assert any("floats on vllm/vllm-openai-rocm:latest" in note for note in dsr1[0].notes)


def test_markdown_and_json_put_the_summary_first(before: AuditRun) -> None:
    text = render_markdown(before.report)
    order = [
        text.index("### By status"),
        text.index("### By hardware"),
        text.index("### By model"),
        text.index("### Out of scope"),
        text.index("## Drifted (7)"),
        text.index("## Unresolved (2)"),
        text.index("## Unmapped (2)"),
        text.index("## Aligned (29)"),
    ]
    assert order == sorted(order)
    assert (
        "| sglang | 1 | framework sglang is not rendered by vLLM recipes "
        "| `dsr1-fp8-mi355x-sglang` |" in text
    )
    assert "| mi355x | 15 | 7 | 0 | 0 | 22 |" in text
    assert (
        "`--moe-backend`: `aiter` (benchmark) vs `aiter_triton_mxfp4_bf16` (recipe), differs"
        in text
    )
    assert text.count(f"`{SEED_CONFIG_KEY}`") == 7
    data = json.loads(json.dumps(before.report.to_json()))
    assert list(data) == ["bench", "recipes", "summary", "warnings", "out_of_scope", "rows"]
    assert data["summary"]["by_status"] == before.report.by_status()
    assert data["summary"]["out_of_scope"] == {
        "sglang": {"config_keys": 1, "reason": "framework sglang is not rendered by vLLM recipes"}
    }
    assert len(data["rows"]) == 40


def test_caches_parse_render_and_compare_once(before: AuditRun) -> None:
    stats = before.stats
    scripts = {row.script for row in before.report.rows if row.script}
    assert stats["points"] == 40 and stats["script_parses"] <= len(scripts) + 1  # + the library
    assert stats["comparisons"] < stats["points"] and stats["comparison_hits"] > 0
    assert stats["renderings"] <= stats["comparisons"]


def test_cold_and_pooled_runs_report_the_same(
    seed: SeedFixtures, rules: Rules, before: AuditRun
) -> None:
    bench = GitTreeSource(seed.bench_repo, seed.bench_pr_head)
    recipes = GitTreeSource(seed.recipes_repo, seed.recipes_base)
    cold = run_audit(bench, recipes, rules, cache=False)
    assert cold.stats.get("comparison_hits", 0) == 0
    assert cold.stats["script_parses"] > before.stats["script_parses"]
    pooled = run_audit(GitTreeSource(seed.bench_repo, seed.bench_pr_head), recipes, rules, jobs=2)
    assert pooled.workers == 2
    expected = before.report.to_json()
    assert cold.report.to_json() == expected
    assert pooled.report.to_json() == expected
