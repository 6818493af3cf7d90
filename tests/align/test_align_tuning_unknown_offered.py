"""Tuning a benchmark PR introduces, and settings whose vLLM default recipe-sync cannot
resolve for the recipe, are offered to tick, never proposed (issue #31: maintainers carried
some of each into recipes; the bot cannot tell which, a maintainer can)."""

from __future__ import annotations

from pathlib import Path

from bot.align.model import Wait
from bot.align.result import AlignRun
from bot.present import present
from tests.align.reproduction_fixture import WIDGET, run_pr


def _run(tmp_path: Path, included: frozenset[str] = frozenset()) -> AlignRun:
    """The PR turns off AITER's MHA kernel on the TP4 lane, pins OpenMP to one thread (tuning)
    and starts running an fp8 KV cache, which the recipe leaves to vLLM (``auto``: whatever
    the checkpoint says, which recipe-sync cannot know)."""
    return run_pr(
        tmp_path,
        lambda text: text.replace("  --kv-cache-dtype fp8 \\\n", ""),
        lambda text: text.replace(
            "export VLLM_ROCM_USE_AITER=1\n",
            "export VLLM_ROCM_USE_AITER=1\nexport OMP_NUM_THREADS=1\n"
            "export VLLM_ROCM_USE_AITER_MHA=0\n",
        ).replace(
            "  --moe-backend aiter \\\n", "  --moe-backend aiter \\\n  --kv-cache-dtype fp8 \\\n"
        ),
        included,
    )


def test_tuning_and_unresolved_defaults_are_offered_not_proposed(tmp_path: Path) -> None:
    (outcome,) = [o for o in _run(tmp_path).outcomes if o.plan.recipe_path == WIDGET]
    plan = outcome.plan
    assert outcome.status == "patch"
    assert [(e.subject, e.after) for e in plan.edits] == [("VLLM_ROCM_USE_AITER_MHA", "0")]
    waits = {e.subject: plan.waits_for(e) for e in plan.offered}
    assert waits["OMP_NUM_THREADS"] == Wait(
        "tuning",
        "OMP_NUM_THREADS",
        "throughput tuning for the benchmark's concurrency sweep: documented for reproduction",
    )
    assert waits["--kv-cache-dtype"] == Wait(
        "unknown",
        "--kv-cache-dtype",
        "a quantized KV cache (e.g. fp8) trades accuracy for capacity",
    )
    offered = {e.subject: (e.after, e.node) for e in plan.offered}
    assert offered["--kv-cache-dtype"] == (
        "--kv-cache-dtype fp8",
        "variants.default.hardware_overrides.mi355x.extra_args",
    )
    # offered, so no longer listed as unknown or as a setting not carried
    assert "--kv-cache-dtype" not in {n.subject for n in plan.unknown}
    assert "OMP_NUM_THREADS" not in {s.subject for s in plan.settings}


def test_ticking_them_proposes_them(tmp_path: Path) -> None:
    ticked = frozenset({"--kv-cache-dtype", "OMP_NUM_THREADS"})
    (outcome,) = [o for o in _run(tmp_path, ticked).outcomes if o.plan.recipe_path == WIDGET]
    proposed = {e.subject: e.after for e in outcome.plan.edits}
    assert proposed == {
        "VLLM_ROCM_USE_AITER_MHA": "0",
        "OMP_NUM_THREADS": "1",
        "--kv-cache-dtype": "--kv-cache-dtype fp8",
    }
    # the GPU's verification mark stays offered: no eval run was seen
    assert {e.subject for e in outcome.plan.offered} == {
        "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION",
        "mi355x",
    }


def test_the_pr_body_says_why_each_is_offered(tmp_path: Path) -> None:
    body = present(_run(tmp_path)).prs[WIDGET].body
    assert (
        "**Offered, not proposed** (older drift this PR did not change; tuned for the "
        "benchmark's sweep; vLLM's default for the recipe not resolved; verification marks "
        "no eval run backs yet):"
    ) in body
    assert (
        "`--kv-cache-dtype fp8` at `variants.default.hardware_overrides.mi355x.extra_args` — a "
        "quantized KV cache (e.g. fp8) trades accuracy for capacity: the recipe leaves it to "
        "vLLM, whose default here recipe-sync cannot resolve, so whether the recipe already "
        "runs it is not known"
    ) in body
    assert (
        "`OMP_NUM_THREADS=1` at `hardware_overrides.amd.extra_env.OMP_NUM_THREADS` — tuning ("
        in body
    )
