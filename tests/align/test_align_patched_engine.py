"""A lane that patches the installed engine before it launches (``git apply`` in the container)
ran no image as published: its settings are offered, never proposed, its image is not pinned,
it brings no verification mark and no reproduction section (issue #31: InferenceX #2508 ran
``apply_k3_container_patches.sh`` and the variables the patch adds)."""

from __future__ import annotations

from pathlib import Path

from bot.align.model import AlignmentPlan
from bot.align.result import AlignRun
from bot.present import present
from bot.shell.effects import classify
from tests.align.reproduction_fixture import WIDGET, run_pr

_MHA_OFF = "export VLLM_ROCM_USE_AITER=1\nexport VLLM_ROCM_USE_AITER_MHA=0\n"
_PATCH = "git apply -p1 /opt/patches/mha.diff\n"


def _run(tmp_path: Path, *, patched: bool, included: frozenset[str] = frozenset()) -> AlignRun:
    """The PR turns off AITER's MHA kernel on the TP4 lane (MI355X), with or without a patch
    applied to the installed engine first."""
    head = (_PATCH if patched else "") + _MHA_OFF
    return run_pr(
        tmp_path,
        lambda text: text,
        lambda text: text.replace("export VLLM_ROCM_USE_AITER=1\n", head),
        included,
    )


def _plan(run: AlignRun) -> AlignmentPlan:
    (outcome,) = [o for o in run.outcomes if o.plan.recipe_path == WIDGET]
    return outcome.plan


def test_unpatched_lane_proposes_the_setting(tmp_path: Path) -> None:
    run = _run(tmp_path, patched=False)
    (outcome,) = [o for o in run.outcomes if o.plan.recipe_path == WIDGET]
    assert [e.subject for e in outcome.plan.edits] == ["VLLM_ROCM_USE_AITER_MHA"]
    assert b"recipe-sync:reproduction" in outcome.new_text  # the lane's block beside the edit


def test_patched_lane_offers_it_with_the_patch_named(tmp_path: Path) -> None:
    run = _run(tmp_path, patched=True)
    (outcome,) = [o for o in run.outcomes if o.plan.recipe_path == WIDGET]
    plan = outcome.plan
    assert plan.edits == ()
    assert outcome.status == "offered" and not outcome.patch
    assert "1 from a lane that patched vLLM" in outcome.reason
    (offer,) = [e for e in plan.offered if e.subject == "VLLM_ROCM_USE_AITER_MHA"]
    wait = plan.waits_for(offer)
    assert wait is not None and wait.reason == "patched"
    assert wait.what.startswith("the lane patched vLLM before it launched (git apply -p1 ")
    assert "widget_fp4_mi355x_vllm.sh:" in wait.what
    # an eval of a patched engine verifies no recipe: no mark offered beside it
    assert not [e for e in plan.offered if e.kind == "verified"]
    assert any("a recipe runs its image as published" in note for note in plan.notes)
    comment = present(_run(tmp_path / "again", patched=True)).comment
    assert "the lane patched vLLM before it launched" in comment


def test_ticking_it_writes_it_without_a_reproduction_block(tmp_path: Path) -> None:
    run = _run(tmp_path, patched=True, included=frozenset({"VLLM_ROCM_USE_AITER_MHA"}))
    (outcome,) = [o for o in run.outcomes if o.plan.recipe_path == WIDGET]
    edits = [(e.subject, e.after) for e in outcome.plan.edits]
    assert edits == [("VLLM_ROCM_USE_AITER_MHA", "0")]
    # the recipe's command and a block of deltas would not run the patched engine
    assert outcome.new_text and b"recipe-sync:reproduction" not in outcome.new_text
    assert outcome.guide == ()


def test_patch_tools_are_told_from_other_source_edits() -> None:
    def category(line: str) -> str | None:
        effect = classify(line.split())
        return effect.category if effect else None

    assert category("git apply -p1 x.diff") == "engine-patch"
    assert category("git am 0001.patch") == "engine-patch"
    assert category("patch -p1 -i x.diff") == "engine-patch"
    # a clone or a build changes no installed engine by itself
    assert category("git clone https://example.com/r.git") == "source-edit"
    assert category("make -j8") == "source-edit"
