"""``recipe-sync align`` beyond the golden seed: no evidence, determinism, already aligned,
out-of-scope, unmapped and unresolved inputs, and the service engine."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from bot.commands.main import main
from bot.contract import SyncOutcome, SyncRequest, check_outcome
from bot.evidence.source import DirRunSource
from bot.fixtures import BENCH_REPO_NAME, RECIPES_REPO_NAME, SeedFixtures
from bot.present.posted import PullMeta
from bot.service.engine import AlignEngine
from bot.sources import GitTreeSource
from tests.seed_cli import SEED_RECIPE, AlignCli, align_args, commit_edit, git

KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"
SCRIPT = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"
OUTPUTS = ("recipe.patch", "pr-title.txt", "pr-body.md", "comment.md", "plan.json")


def _plan(out: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((out / "plan.json").read_text())
    return data


def test_without_evidence_nothing_is_marked_verified(align_cli: AlignCli) -> None:
    status, out = align_cli(evidence=False)
    assert status == 1  # a PR to open (docs/cli.md "Exit codes")
    patch = (out / "recipe.patch").read_text()
    assert "verified" not in patch and '+          - "aiter"' in patch
    body = (out / "pr-body.md").read_text()
    assert (
        "No workflow-run evidence was given (no runs or job logs to read), so "
        "`meta.hardware.mi355x` is not marked verified." in body
    )
    assert "- Not marked verified on MI355X: no workflow-run evidence was given." in body
    plan = _plan(out)["plans"][0]  # type: ignore[index]
    assert plan["verifications"] == [
        {
            "hardware": "mi355x",
            "state": "no-evidence",
            "reason": "no workflow-run evidence was given",
        }
    ]


def test_running_twice_gives_identical_files(align_cli: AlignCli, seed_out: Path) -> None:
    _, again = align_cli(gated=True)
    for name in OUTPUTS:
        assert (again / name).read_bytes() == (seed_out / name).read_bytes(), name


def test_an_aligned_recipe_gets_no_patch(
    align_cli: AlignCli, seed_out_ungated: Path, recipes_clone: Path
) -> None:
    git(recipes_clone, "apply", str(seed_out_ungated / "recipe.patch"))
    git(recipes_clone, "commit", "-qam", "apply the alignment")
    status, out = align_cli(recipes=recipes_clone, recipes_ref="HEAD")
    assert status == 0  # aligned: nothing to do (docs/cli.md "Exit codes")
    assert not (out / "recipe.patch").exists() and not (out / "pr-body.md").exists()
    data = _plan(out)
    assert [(p["recipe"], p["status"], p["reason"]) for p in data["plans"]] == [  # type: ignore[index, union-attr]
        (SEED_RECIPE, "aligned", "already aligned; 1 tuning setting offered to tick")
    ]
    assert data["check"]["conclusion"] == "success"  # type: ignore[index]
    comment = (out / "comment.md").read_text()
    assert f"#### `{SEED_RECIPE}` — already aligned" in comment
    # the benchmark's tuning is no drift, but still there to tick
    assert "`--max-num-seqs 128` at `strategy_overrides.single_node_tp" in comment
    assert "MI355X is already verified in the recipe." in comment


def test_a_working_tree_with_the_patch_is_aligned_too(
    align_cli: AlignCli, seed_out_ungated: Path, recipes_clone: Path
) -> None:
    patch = str(seed_out_ungated / "recipe.patch")
    git(recipes_clone, "apply", patch)  # uncommitted: read the directory
    status, out = align_cli(recipes=recipes_clone, recipes_ref="WORKTREE")
    assert status == 0 and not (out / "recipe.patch").exists()
    assert "Branched from" not in (out / "comment.md").read_text()


def test_stale_outputs_of_an_earlier_run_are_removed(
    align_cli: AlignCli, seed_out_ungated: Path, recipes_clone: Path
) -> None:
    git(recipes_clone, "apply", str(seed_out_ungated / "recipe.patch"))
    git(recipes_clone, "commit", "-qam", "apply the alignment")
    status, out = align_cli(recipes=recipes_clone, recipes_ref="HEAD", stale_from=seed_out_ungated)
    assert status == 0
    assert sorted(p.name for p in out.iterdir()) == ["comment.md", "plan.json"]


def test_out_of_scope_and_unchanged_keys(align_cli: AlignCli) -> None:
    status, out = align_cli(
        evidence=False,
        extra=["--config-key", "dsr1-fp8-mi355x-sglang", "--config-key", "gptoss-fp4-h200-vllm"],
    )
    assert status == 0 and not (out / "recipe.patch").exists()
    data = _plan(out)
    keys = {k["key"]: k for k in data["keys"]}  # type: ignore[union-attr, index]
    sglang = keys["dsr1-fp8-mi355x-sglang"]
    assert sglang["problem"] == "framework sglang is not rendered by vLLM recipes"
    assert sglang["reasons"] == ["requested with --config-key (the PR does not change it)"]
    gptoss = {p["status"] for p in keys["gptoss-fp4-h200-vllm"]["points"]}
    assert "represents" in gptoss
    statuses = {p["recipe"]: p["status"] for p in data["plans"]}  # type: ignore[union-attr, index]
    assert statuses == {"models/openai/gpt-oss-120b.yaml": "aligned"}
    comment = (out / "comment.md").read_text()
    assert "framework sglang is not rendered by vLLM recipes" in comment
    assert data["check"]["conclusion"] == "success"  # type: ignore[index]


def test_a_value_known_only_at_run_time_is_not_copied(
    align_cli: AlignCli, bench_clone: Path
) -> None:
    commit_edit(bench_clone, SCRIPT, "MAX_NUM_SEQS=128", "MAX_NUM_SEQS=$(nproc)")
    status, out = align_cli(evidence=False, bench=bench_clone, bench_ref="pr")
    assert status == 1  # a PR to open (docs/cli.md "Exit codes")
    patch = (out / "recipe.patch").read_text()
    nodes, guide = patch.split("<!-- recipe-sync:reproduction", 1)
    assert "--max-num-seqs" not in nodes and '+          - "aiter"' in nodes
    # the reproduction section names the variable instead of copying a value
    assert "the script computes it when it runs; set `MAX_NUM_SEQS`" in " ".join(
        line.lstrip("+ ") for line in guide.splitlines()
    )
    assert "nproc" not in guide and "opaque" not in guide
    plan = _plan(out)["plans"][0]  # type: ignore[index]
    assert plan["skipped"] == [
        "DeepSeek-V4.1-Flash mi355x single_node_tp (tool_calling, reasoning, "
        "spec_decoding=dspark, text_only): the benchmark's --max-num-seqs: invalid int value: "
        "'<MAX_NUM_SEQS:opaque:command-output>': its value is only known at run time, so it "
        "is not compared"
    ]
    point = _plan(out)["keys"][0]["points"][-1]  # type: ignore[index]
    assert any("output of `nproc`" in item for item in point["unresolved"])
    comment = (out / "comment.md").read_text()
    assert "Unresolved in the launch line" in comment and "its value is only known" in comment


def test_a_carried_flag_known_only_at_run_time_is_noted_not_copied(
    align_cli: AlignCli, bench_clone: Path
) -> None:
    # --moe-backend is a kernel flag (carried into the recipe), unlike the tuning
    # --max-num-seqs above: its run-time value must be said, not silently dropped
    commit_edit(bench_clone, SCRIPT, "MOE_BACKEND=aiter", 'MOE_BACKEND="$(nproc)"')
    _, out = align_cli(evidence=False, bench=bench_clone, bench_ref="pr")
    plan = _plan(out)["plans"][0]  # type: ignore[index]
    notes = [s for s in plan["skipped"] if "--moe-backend" in s]
    assert notes and all(
        "--moe-backend is not statically known in the launch line (--moe-backend "
        "<MOE_BACKEND:opaque:command-output>); not copied" in s
        for s in notes
    ), plan["skipped"]
    assert "--moe-backend" not in (out / "recipe.patch").read_text().split("recipe-sync:")[0]


def test_an_unknown_model_is_unmapped_with_the_reason(
    align_cli: AlignCli, bench_clone: Path
) -> None:
    commit_edit(
        bench_clone,
        "configs/amd-master.yaml",
        "model: deepseek-ai/DeepSeek-V4.1-Flash",
        "model: deepseek-ai/DeepSeek-V9-Flash",
    )
    status, out = align_cli(evidence=False, bench=bench_clone, bench_ref="pr")
    assert status == 0 and not (out / "recipe.patch").exists()
    data = _plan(out)
    statuses = {p["status"] for p in data["keys"][0]["points"]}  # type: ignore[index]
    assert statuses == {"unmapped"}
    assert data["plans"] == [] and data["check"]["conclusion"] == "neutral"  # type: ignore[index]
    assert "no recipe for model deepseek-ai/DeepSeek-V9-Flash" in (out / "comment.md").read_text()


def test_a_point_the_script_rejects_is_reported_invalid(
    align_cli: AlignCli, bench_clone: Path
) -> None:
    commit_edit(
        bench_clone, "configs/amd-master.yaml", "kv-offloading: none", "kv-offloading: dram"
    )
    commit_edit(
        bench_clone,
        "configs/amd-master.yaml",
        "kv-offloading: dram,",
        "kv-offloading: dram, kv-offload-backend: {name: lmcache},",
    )
    status, out = align_cli(evidence=False, bench=bench_clone, bench_ref="pr")
    assert status == 0 and not (out / "recipe.patch").exists()
    points = _plan(out)["keys"][0]["points"]  # type: ignore[index]
    assert {p["status"] for p in points} == {"invalid"}
    assert all("not valid for this script" in p["reason"] for p in points)


def test_no_base_and_no_key_is_a_clear_error(
    seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = align_args(seed, tmp_path / "out", evidence=False, bench_ref="main")
    assert main(args) == 2
    assert "pass --bench-base REF or --config-key KEY" in capsys.readouterr().err


# ------------------------------------------------------------------------------ engine


def _request(seed: SeedFixtures, dry_run: bool = False) -> SyncRequest:
    assert seed.evidence_dir is not None
    return SyncRequest(
        bench_repo=BENCH_REPO_NAME,
        pr_number=seed.bench_pr_number,
        head_sha=seed.bench_pr_head,
        head_branch=seed.bench_pr_branch,
        base_sha=seed.bench_base,
        is_fork=True,
        bench=GitTreeSource(seed.bench_repo, seed.bench_pr_head),
        bench_base=GitTreeSource(seed.bench_repo, seed.bench_base),
        recipes_repo=RECIPES_REPO_NAME,
        recipes_base_sha=seed.recipes_base,
        recipes=GitTreeSource(seed.recipes_repo, seed.recipes_base),
        runs=DirRunSource(seed.evidence_dir),
        dry_run=dry_run,
    )


def test_engine_returns_the_cli_change(
    seed: SeedFixtures, seed_out: Path, recipes_clone: Path
) -> None:
    outcome = AlignEngine().sync(_request(seed))
    check_outcome(outcome)
    (change,) = outcome.changes
    assert change.recipe_path == SEED_RECIPE and set(change.files) == {SEED_RECIPE}
    git(recipes_clone, "checkout", "-q", "main")
    git(recipes_clone, "apply", str(seed_out / "recipe.patch"))
    assert change.files[SEED_RECIPE] == (recipes_clone / SEED_RECIPE).read_bytes()
    assert change.title == (seed_out / "pr-title.txt").read_text().strip()
    # the engine hands the service the body as posted: the CLI wrote the same bytes
    assert change.body == (seed_out / "pr-body.md").read_text()
    assert PullMeta.fingerprint_of(change.body) == change.fingerprint
    assert change.body.count("<!--") == 1  # the metadata line; the text has no marker
    assert outcome.aligned == () and outcome.check_conclusion == "action_required"
    assert outcome.comment == (seed_out / "comment.md").read_text()
    assert {a.path for a in outcome.annotations} == {SCRIPT, "configs/amd-master.yaml"}
    assert change.fingerprint in change.commit_message


def test_engine_is_deterministic_across_threads(seed: SeedFixtures) -> None:
    engine = AlignEngine()
    results: list[SyncOutcome] = []

    def work() -> None:
        results.append(engine.sync(_request(seed, dry_run=True)))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3
    assert all(r == results[0] for r in results)


def test_two_recipes_get_two_alignment_prs(
    align_cli: AlignCli, bench_clone: Path, recipes_clone: Path
) -> None:
    gptoss = "benchmarks/single_node/fixed_seq_len/gptoss_fp4_h200.sh"
    commit_edit(
        bench_clone,
        gptoss,
        "  --tool-call-parser openai \\\n",
        "  --tool-call-parser openai \\\n  --enforce-eager \\\n",
    )
    status, out = align_cli(evidence=False, bench=bench_clone, bench_ref="pr")
    assert status == 1  # a PR to open (docs/cli.md "Exit codes")
    titles = (out / "pr-title.txt").read_text().splitlines()
    assert titles == [
        "[DeepSeek-V4.1-Flash][MI355X] Align image and MoE backend with InferenceX #3058",
        "[GPT-OSS][H200] Align enforce-eager with InferenceX #3058",
    ]
    prs = sorted(p.name for p in (out / "prs").iterdir())
    assert prs == ["deepseek-ai-deepseek-v4.1-flash", "openai-gpt-oss-120b"]
    gpt_patch = (out / "prs" / "openai-gpt-oss-120b" / "recipe.patch").read_text()
    assert "+    hardware_overrides:\n+      h200:\n+        extra_args:" in gpt_patch
    assert '+          - "--enforce-eager"' in gpt_patch
    git(recipes_clone, "apply", "--check", str(out / "recipe.patch"))  # both files at once
    body = (out / "prs" / "openai-gpt-oss-120b" / "pr-body.md").read_text()
    assert "`gptoss-fp4-h200-vllm` is affected: script" in body


def test_an_invalid_config_entry_fails_the_check_with_its_location(
    align_cli: AlignCli, bench_clone: Path
) -> None:
    commit_edit(
        bench_clone,
        "configs/amd-master.yaml",
        "{ tp: 4, spec-decoding",
        "{ tp: four, spec-decoding",
    )
    status, out = align_cli(evidence=False, bench=bench_clone, bench_ref="pr")
    assert status == 2 and not (out / "recipe.patch").exists()
    data = _plan(out)
    (key,) = data["keys"]  # type: ignore[misc]
    assert key["problem"].startswith("configs/amd-master.yaml:")  # type: ignore[index]
    assert "tp" in key["problem"]  # type: ignore[index]
    assert data["check"]["conclusion"] == "failure"  # type: ignore[index]
