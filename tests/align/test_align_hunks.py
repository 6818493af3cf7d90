"""Single hunks of an alignment PR: recipe comments about a changed value, guide prose naming
the replaced image, and hunks a maintainer drops (``align --drop``)."""

from __future__ import annotations

from pathlib import Path

from bot.align.comments import names_value
from tests.align.conftest import SEED_RECIPE, AlignCli, commit_edit

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
        "- Recipe comment “MXFP4 experts with BF16 activations through AITER's Triton kernel” "
        "(above `strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args[0]`) "
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
        "described `aiter_triton_mxfp4_bf16`: removed, since the benchmark script has no "
        "comment on the new value." in body
    )
