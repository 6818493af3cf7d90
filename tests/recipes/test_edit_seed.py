# ruff: noqa: W293, E501  (the golden patch has diff context blank lines and long recipe lines)
"""Golden test: the seed alignment's recipe edits on the fixture recipe (before state).

The expected patch below is the review artefact: read it. Everything outside its hunks must
be byte-identical, including the AMD DSpark `enable_adaptive_verification:false` override.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bot.recipes.edit import (
    EditResult,
    EnsurePath,
    InsertKey,
    SetComment,
    SetScalar,
    apply_edits,
    edit_recipe,
)
from bot.sources import DirectorySource

ROOT = Path(__file__).resolve().parents[2]
RECIPE = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"
BEFORE = ROOT / "fixtures/recipes-repo/pr-963" / RECIPE
NIGHTLY = "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"

SEED_EDITS = [
    SetScalar("model.docker_image.amd", NIGHTLY),
    SetScalar("hardware_overrides.amd.extra_args[3]", "aiter"),
    InsertKey(
        "hardware_overrides.amd.extra_env",
        "AITER_TRITON_LOG_LEVEL",
        "ERROR",
        after="VLLM_ROCM_USE_AITER_MOE",
    ),
    InsertKey("meta.hardware", "mi355x", "verified"),
    EnsurePath(
        "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args",
        ["--max-num-seqs", "128"],
    ),
]

EXPECTED_PATCH = """\
--- a/models/deepseek-ai/DeepSeek-V4.1-Flash.yaml
+++ b/models/deepseek-ai/DeepSeek-V4.1-Flash.yaml
@@ -17,6 +17,7 @@
     b200: verified
     gb200: verified
     mi350x: verified
+    mi355x: verified
 
 model:
   model_id: "deepseek-ai/DeepSeek-V4.1-Flash"
@@ -24,7 +25,7 @@
   # Day-0 images built for the V4.1 launch; vLLM releases after 0.32 carry the model.
   docker_image:
     nvidia: "vllm/vllm-openai:deepseekv41-flash-0909"
-    amd: "vllm/vllm-openai-rocm:deepseekv41-flash-0909"
+    amd: "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"
   architecture: moe
   parameter_count: "290B"
   active_parameters: "14B"
@@ -106,10 +107,11 @@
       - "0.9"
       # MXFP4 experts with BF16 activations through AITER's Triton kernel.
       - "--moe-backend"
-      - "aiter_triton_mxfp4_bf16"
+      - "aiter"
     extra_env:
       VLLM_ROCM_USE_AITER: "1"
       VLLM_ROCM_USE_AITER_MOE: "1"
+      AITER_TRITON_LOG_LEVEL: "ERROR"
       # DeepseekV41ForCausalLM is not torch-compiled upstream: use breakable CUDA graphs.
       VLLM_USE_BREAKABLE_CUDAGRAPH: "1"
       VLLM_USE_RUST_FRONTEND: "1"
@@ -119,6 +121,11 @@
     # Four MI3x5X GPUs hold the checkpoint with room for KV cache.
     tp:
       amd: 4
+    hardware_overrides:
+      mi355x:
+        extra_args:
+          - "--max-num-seqs"
+          - "128"
   pd_cluster:
     prefill:
       extra_args:
"""

AMD_DSPARK_OVERRIDE = """\
        hardware_overrides:
          amd:
            # The ROCm sparse SWA attention backend reports UNIFORM_BATCH, so adaptive
            # verification (per-request verify lengths) is off on AMD.
            args:
              - "--speculative-config"
              - '{"method":"dspark","num_speculative_tokens":5,"draft_sample_method":"probabilistic","rejection_sample_method":"block","enable_adaptive_verification":false}'
"""


def _seed_result() -> tuple[str, str, EditResult]:
    before = BEFORE.read_text(encoding="utf-8")
    return before, RECIPE, apply_edits(before, SEED_EDITS, file=RECIPE)


def test_seed_patch_is_the_reviewed_golden() -> None:
    _, _, result = _seed_result()
    assert result.diff == EXPECTED_PATCH


def test_seed_edits_touch_only_their_lines() -> None:
    before, _, result = _seed_result()
    old, new = before.splitlines(keepends=True), result.text.splitlines(keepends=True)
    ranges = result.changed
    # Five edits, five hunks; only the image and the backend value replace an old line.
    assert [(r.old_start, r.old_end, r.new_start, r.new_end) for r in ranges] == [
        (20, 20, 20, 21),
        (27, 28, 28, 29),
        (109, 110, 110, 111),
        (113, 113, 114, 115),
        (122, 122, 124, 129),
    ]
    kept_old = [line for n, line in enumerate(old, 1) if not any(n in r.old_lines for r in ranges)]
    kept_new = [line for n, line in enumerate(new, 1) if not any(n in r.new_lines for r in ranges)]
    assert kept_old == kept_new
    assert len(kept_old) == len(old) - 2


def test_seed_keeps_the_amd_dspark_override_byte_for_byte() -> None:
    before, _, result = _seed_result()
    assert before.count(AMD_DSPARK_OVERRIDE) == 1
    assert result.text.count(AMD_DSPARK_OVERRIDE) == 1
    assert 'enable_adaptive_verification":true' in result.text
    # Both GB200/H200 image tags are untouched; only AMD's moved.
    assert 'nvidia: "vllm/vllm-openai:deepseekv41-flash-0909"' in result.text


def test_seed_patch_applies_with_git(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    before, file, result = _seed_result()
    target = tmp_path / file
    target.parent.mkdir(parents=True)
    target.write_text(before, encoding="utf-8")
    patch = tmp_path / "recipe.patch"
    patch.write_text(result.diff, encoding="utf-8")
    subprocess.run(["git", "apply", "--check", str(patch)], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", str(patch)], cwd=tmp_path, check=True)
    assert target.read_text(encoding="utf-8") == result.text


def test_seed_edits_are_deterministic_and_idempotent_for_ensure_path() -> None:
    before, file, first = _seed_result()
    assert apply_edits(before, SEED_EDITS, file=file) == first
    # Re-running the value-setting edits on the result changes nothing.
    again = apply_edits(
        first.text,
        [SEED_EDITS[0], SEED_EDITS[1], SEED_EDITS[4]],
        file=file,
    )
    assert again.text == first.text and again.diff == "" and again.changed == ()


def test_seed_comment_above_the_backend_can_be_rewritten() -> None:
    before = BEFORE.read_text(encoding="utf-8")
    result = apply_edits(
        before,
        [
            SetScalar("hardware_overrides.amd.extra_args[3]", "aiter"),
            SetComment(
                "hardware_overrides.amd.extra_args[2]",
                [
                    'Plain "aiter" opens vLLM\'s full MoE priority list, whose head is the',
                    "Composable Kernel backend, giving the a8w4 experts.",
                ],
            ),
        ],
        file=RECIPE,
    )
    assert result.diff.split("@@", 2)[2] == (
        """
     extra_args:
       - "--gpu-memory-utilization"
       - "0.9"
-      # MXFP4 experts with BF16 activations through AITER's Triton kernel.
+      # Plain "aiter" opens vLLM's full MoE priority list, whose head is the
+      # Composable Kernel backend, giving the a8w4 experts.
       - "--moe-backend"
-      - "aiter_triton_mxfp4_bf16"
+      - "aiter"
     extra_env:
       VLLM_ROCM_USE_AITER: "1"
       VLLM_ROCM_USE_AITER_MOE: "1"
"""
    )


def test_edit_recipe_reads_through_a_file_source() -> None:
    source = DirectorySource(ROOT / "fixtures/recipes-repo/pr-963")
    assert edit_recipe(source, RECIPE, SEED_EDITS).diff == EXPECTED_PATCH
