"""Drift a benchmark PR did not introduce is offered to tick, never proposed (issue #31:
maintainers answering a benchmark PR sometimes closed its lanes' older differences too)."""

from __future__ import annotations

from pathlib import Path

from bot.align.model import Wait
from bot.align.result import AlignRun
from bot.present import present
from tests.align.reproduction_fixture import WIDGET, run_pr


def _run(tmp_path: Path) -> AlignRun:
    """The PR turns off AITER's MHA kernel on the TP4 lane; its MoE backend already differed
    from the recipe's at the base (``triton`` vs the recipe's ``aiter``), and so did its
    quick-reduce quantization (an accuracy setting, INT4)."""
    return run_pr(
        tmp_path,
        lambda text: text.replace("--moe-backend aiter", "--moe-backend triton"),
        lambda text: text.replace(
            "export VLLM_ROCM_USE_AITER=1\n",
            "export VLLM_ROCM_USE_AITER=1\nexport VLLM_ROCM_USE_AITER_MHA=0\n",
        ),
    )


def test_older_drift_is_offered_not_proposed(tmp_path: Path) -> None:
    (outcome,) = [o for o in _run(tmp_path).outcomes if o.plan.recipe_path == WIDGET]
    plan = outcome.plan
    # the PR's own change is proposed (kernel, AMD: a kind maintainers take)
    assert outcome.status == "patch"
    assert [(e.subject, e.after) for e in plan.edits] == [("VLLM_ROCM_USE_AITER_MHA", "0")]
    # the older differences are offered, whatever their class's estimate or eval
    waits = {e.subject: plan.waits_for(e) for e in plan.offered}
    assert waits == {
        "--moe-backend": Wait("older", "--moe-backend", "MoE kernel selection"),
        "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION": Wait(
            "older", "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION", "INT4/FP8 quantized all-reduce"
        ),
        # the PR's lane's GPU, edited and not verified, with no eval run seen
        "mi355x": Wait("verify", "meta.hardware.mi355x", "no workflow-run evidence was given"),
    }
    # offered, so not also listed as older drift; tuning and harness settings still are
    older = {n.subject for n in plan.preexisting}
    assert "--moe-backend" not in older and "--max-num-seqs" in older


def test_the_pr_body_says_the_offered_difference_is_older(tmp_path: Path) -> None:
    body = present(_run(tmp_path)).prs[WIDGET].body
    assert (
        "**Offered, not proposed** (older drift this PR did not change; verification marks no "
        "eval run backs yet):"
    ) in body
    assert (
        "`--moe-backend triton` at `hardware_overrides.amd.extra_args[1]` — the recipe differed "
        "from the benchmark here before this PR: not part of its change"
    ) in body
