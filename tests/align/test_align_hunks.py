"""Single hunks of an alignment PR: recipe comments about a changed value, guide prose naming
the replaced image, and hunks a maintainer drops (``align --drop``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.align.recipe_comments import names_value
from bot.contract import SyncRequest
from bot.evidence.source import DirRunSource
from bot.fixtures import BENCH_REPO_NAME, RECIPES_REPO_NAME, SeedFixtures
from bot.recipes.guide import locate_guide, unbalanced_fences
from bot.service.engine import AlignEngine
from bot.sources import GitTreeSource
from tests.seed_cli import SEED_RECIPE, AlignCli, commit_edit, git

SCRIPT = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"
SHARED_MOE = (
    "      # MXFP4 experts with BF16 activations through AITER's Triton kernel.\n"
    + '      - "--moe-backend"\n      - "aiter_triton_mxfp4_bf16"\n'
)
TP_BLOCK = "    tp:\n      amd: 4\n"
# the same value, defined only for the benchmarked profile: changed in place
EXACT_MOE = (
    TP_BLOCK
    + "    hardware_overrides:\n      mi355x:\n        extra_args:\n"
    + "          # MXFP4 experts with BF16 activations through AITER's Triton kernel.\n"
    + '          - "--moe-backend"\n          - "aiter_triton_mxfp4_bf16"\n'
)


def _plan(out: Path) -> Any:
    return json.loads((out / "plan.json").read_text())


def _exact_moe(recipes: Path) -> None:
    commit_edit(recipes, SEED_RECIPE, SHARED_MOE, "")
    commit_edit(recipes, SEED_RECIPE, TP_BLOCK, EXACT_MOE)


def _changed(patch: str) -> list[str]:
    nodes = patch.split("<!-- recipe-sync:reproduction", 1)[0]
    return [
        line
        for line in nodes.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_a_comment_names_the_value_or_the_words_only_the_old_value_has() -> None:
    comment = ["MXFP4 experts with BF16 activations through AITER's Triton kernel."]
    assert names_value(comment, "aiter_triton_mxfp4_bf16", "aiter")
    assert not names_value(comment, "aiter_triton_mxfp4_bf16", "aiter_triton_mxfp4_bf16_v2")
    assert names_value(["Cap at 128 sequences."], "128", "256")
    assert not names_value(["DeepseekV41 is not torch-compiled"], "1", "0")
    assert not names_value(
        ["Day-0 images built for the V4.1 launch"],
        "vllm/vllm-openai-rocm:deepseekv41-flash-0909",
        "vllm/vllm-openai-rocm:nightly-eed1f3d0c604",
    )


def test_a_value_changed_in_place_gets_the_scripts_comment(
    align_cli: AlignCli, recipes_clone: Path
) -> None:
    _exact_moe(recipes_clone)
    status, out = align_cli(recipes=recipes_clone, recipes_ref="HEAD")
    assert status == 1
    changed = _changed((out / "recipe.patch").read_text())
    start = changed.index(
        "-          # MXFP4 experts with BF16 activations through AITER's Triton kernel."
    )
    assert changed[start : start + 5] == [
        "-          # MXFP4 experts with BF16 activations through AITER's Triton kernel.",
        '+          # Plain "aiter" lets vLLM\'s priority list pick the CK a8w4 experts.',
        "+          # As benchmarked in SemiAnalysisAI/InferenceX#3058.",
        '-          - "aiter_triton_mxfp4_bf16"',
        '+          - "aiter"',
    ]
    body = (out / "pr-body.md").read_text()
    assert (
        "- The recipe comment above "
        "`strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args[0]`, "
        "“MXFP4 experts with BF16 activations through AITER's Triton kernel”, "
        "described `aiter_triton_mxfp4_bf16`: replaced by the benchmark script's comment "
        f"(`{SCRIPT}:21`)." in body
    )


def test_without_a_script_comment_the_stale_comment_is_removed(
    align_cli: AlignCli, recipes_clone: Path, bench_clone: Path
) -> None:
    _exact_moe(recipes_clone)
    commit_edit(
        bench_clone,
        SCRIPT,
        '# Plain "aiter" lets vLLM\'s priority list pick the CK a8w4 experts.\n',
        "",
    )
    status, out = align_cli(
        recipes=recipes_clone, recipes_ref="HEAD", bench=bench_clone, bench_ref="pr", evidence=False
    )
    assert status == 1
    changed = _changed((out / "recipe.patch").read_text())
    assert (
        "-          # MXFP4 experts with BF16 activations through AITER's Triton kernel." in changed
    )
    assert not [line for line in changed if line.startswith("+") and "#" in line]
    body = (out / "pr-body.md").read_text()
    assert (
        "described `aiter_triton_mxfp4_bf16`: removed (the benchmark script has no "
        "comment on the new value)." in body
    )


DAY0_ROCM = "vllm/vllm-openai-rocm:deepseekv41-flash-0909"
DAY0_CUDA = "vllm/vllm-openai:deepseekv41-flash-0909"
NIGHTLY = "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"
SPEC_HEADING = "  ## Speculative decoding\n"
INSTALL = (
    "  ## Install on AMD\n\n"
    f"  On any AMD GPU: `docker pull {DAY0_ROCM}`.\n\n"
    "  ### MI355X\n\n"
    "  ```bash\n"
    f"  docker pull {DAY0_CUDA}\n"
    f"  docker run --rm {DAY0_ROCM} vllm --version\n"
    "  ```\n\n"
)


def _patched(recipes: Path, out: Path) -> list[str]:
    git(recipes, "apply", str(out / "recipe.patch"))
    return (recipes / SEED_RECIPE).read_text().splitlines()


def test_seed_guide_line_naming_the_old_tag_is_left_and_listed(
    seed_out_ungated: Path, recipes_clone: Path
) -> None:
    seed_out = seed_out_ungated
    lines = _patched(recipes_clone, seed_out)
    # the Prerequisites line names no hardware: it stays, and the body points at it
    assert lines[154 - 1] == f"  - The day-0 image: `docker pull {DAY0_CUDA}`."
    assert "+  - The day-0 image" not in (seed_out / "recipe.patch").read_text()
    body = (seed_out / "pr-body.md").read_text()
    assert (
        "- Guide lines naming the old image left for a maintainer: line 154 "
        f"(`{DAY0_CUDA}`: it names no hardware)." in body
    )


def test_guide_lines_about_the_repinned_gpu_are_updated_others_listed(
    align_cli: AlignCli, recipes_clone: Path, tmp_path: Path
) -> None:
    commit_edit(recipes_clone, SEED_RECIPE, SPEC_HEADING, INSTALL + SPEC_HEADING)
    before = (recipes_clone / SEED_RECIPE).read_text().splitlines()
    status, out = align_cli(recipes=recipes_clone, recipes_ref="HEAD")
    assert status == 1
    patch = (out / "recipe.patch").read_text()
    changed = [
        line
        for line in patch.split("<!-- recipe-sync:reproduction", 1)[0].splitlines()
        if line[:1] in "+-" and "docker " in line
    ]
    # only the two lines under "### MI355X" change: the NVIDIA image of the old tag and the
    # old ROCm image both become the image MI355X now renders
    assert changed == [
        f"-  docker pull {DAY0_CUDA}",
        f"-  docker run --rm {DAY0_ROCM} vllm --version",
        f"+  docker pull {NIGHTLY}",
        f"+  docker run --rm {NIGHTLY} vllm --version",
    ]
    after = _patched(recipes_clone, out)
    amd = after.index(f"  On any AMD GPU: `docker pull {DAY0_ROCM}`.") + 1
    assert [line for line in before if line not in after] == [
        f"  docker pull {DAY0_CUDA}",
        f"  docker run --rm {DAY0_ROCM} vllm --version",
    ]
    guide = locate_guide("\n".join(after) + "\n")
    assert guide is not None and not unbalanced_fences(guide.markdown)
    body = (out / "pr-body.md").read_text()
    pulled = after.index(f"  docker pull {NIGHTLY}") + 1
    assert (
        f"- Guide lines re-pinned with the image: line {pulled} (`{DAY0_CUDA}` → `{NIGHTLY}`); "
        f"line {pulled + 1} (`{DAY0_ROCM}` → `{NIGHTLY}`)." in body
    )
    assert (
        "- Guide lines naming the old image left for a maintainer: line 154 "
        f"(`{DAY0_CUDA}`: it names no hardware); line {amd} (`{DAY0_ROCM}`: it is also about "
        "MI300X, MI325X, MI350X)." in body
    )


def test_align_drop_leaves_the_hunk_out_and_says_so(align_cli: AlignCli) -> None:
    status, out = align_cli(extra=["--drop=--moe_backend", "--drop", "AITER_TRITON_LOG_LEVEL"])
    assert status == 1
    nodes = (out / "recipe.patch").read_text().split("<!-- recipe-sync:reproduction", 1)[0]
    assert "moe-backend" not in nodes and "AITER_TRITON_LOG_LEVEL" not in nodes
    assert f'docker_image: "{NIGHTLY}"' in nodes  # the other hunk stays
    body = (out / "pr-body.md").read_text()
    assert (
        "- Dropped on request: `--moe-backend` (`--drop`), `AITER_TRITON_LOG_LEVEL` (`--drop`)."
        in body
    )
    skipped = _plan(out)["plans"][0]["skipped"]
    assert "--moe-backend: dropped on request (--drop)" in skipped


def test_when_every_hunk_is_dropped_the_open_pr_is_withdrawn(
    seed: SeedFixtures, recipes_clone: Path
) -> None:
    text = (recipes_clone / SEED_RECIPE).read_text()
    commit_edit(recipes_clone, SEED_RECIPE, text[text.index("\nguide: |") :], "\n")  # no guide
    assert seed.evidence_dir is not None
    request = SyncRequest(
        bench_repo=BENCH_REPO_NAME,
        pr_number=seed.bench_pr_number,
        head_sha=seed.bench_pr_head,
        head_branch=seed.bench_pr_branch,
        base_sha=seed.bench_base,
        is_fork=True,
        bench=GitTreeSource(seed.bench_repo, seed.bench_pr_head),
        bench_base=GitTreeSource(seed.bench_repo, seed.bench_base),
        recipes_repo=RECIPES_REPO_NAME,
        recipes_base_sha=git(recipes_clone, "rev-parse", "HEAD"),
        recipes=GitTreeSource(recipes_clone, "HEAD"),
        runs=DirRunSource(seed.evidence_dir),
        dry_run=False,
        dropped={SEED_RECIPE: dict.fromkeys(("--moe-backend", "AITER_TRITON_LOG_LEVEL"), "m")},
    )
    outcome = AlignEngine().sync(request)
    assert [c.recipe_path for c in outcome.changes] == [SEED_RECIPE] and not outcome.withdrawn
    request = replace(request, dropped={"*": {"image": "m"}, **request.dropped})
    outcome = AlignEngine().sync(request)
    assert outcome.changes == () and outcome.aligned == ()
    assert outcome.withdrawn == {
        SEED_RECIPE: "every change left was dropped on request "
        "(--moe-backend, AITER_TRITON_LOG_LEVEL, image)"
    }
