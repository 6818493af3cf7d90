"""A GPU the PR's alignment edits, with no eval run seen, gets its verification mark offered to
tick, never written unasked (issue #31: maintainers who aligned a recipe with a benchmark
lane marked that GPU verified in the same commit; the bot cannot know an eval passed)."""

from __future__ import annotations

from pathlib import Path

from bot.align.model import AlignmentPlan, Wait
from bot.align.result import AlignRun
from bot.present import present
from tests.align.reproduction_fixture import WIDGET, run_pr


def _run(tmp_path: Path, included: frozenset[str] = frozenset()) -> AlignRun:
    """The PR turns off AITER's MHA kernel on the TP4 lane (MI355X): a kernel setting the
    recipe takes; nothing else of the recipe's moves."""
    return run_pr(
        tmp_path,
        lambda text: text,
        lambda text: text.replace(
            "export VLLM_ROCM_USE_AITER=1\n",
            "export VLLM_ROCM_USE_AITER=1\nexport VLLM_ROCM_USE_AITER_MHA=0\n",
        ),
        included,
    )


def _plan(run: AlignRun) -> AlignmentPlan:
    (outcome,) = [o for o in run.outcomes if o.plan.recipe_path == WIDGET]
    return outcome.plan


def test_the_mark_is_offered_beside_the_edit_not_written(tmp_path: Path) -> None:
    plan = _plan(_run(tmp_path))
    assert [e.subject for e in plan.edits] == ["VLLM_ROCM_USE_AITER_MHA"]
    (mark,) = [e for e in plan.offered if e.kind == "verified"]
    assert (mark.node, mark.after) == ("meta.hardware.mi355x", "verified")
    assert plan.waits_for(mark) == Wait(
        "verify", "meta.hardware.mi355x", "no workflow-run evidence was given"
    )
    assert plan.result is not None and "mi355x: verified" not in plan.result.text
    body = present(_run(tmp_path / "again")).prs[WIDGET].body
    line = next(x for x in body.splitlines() if x.startswith("- `mi355x: verified`"))
    assert line.startswith(
        "- `mi355x: verified` at `meta.hardware.mi355x` — `/recipe-sync add meta.hardware.mi355x` "
        "writes it "
        "once an eval has passed at the recipe's settings on this GPU; recipe-sync saw no eval "
        "run (no workflow-run evidence was given)"
    )
    # the body still says, as before, that nothing was marked
    assert "Not marked verified on MI355X: no workflow-run evidence was given." in body


def test_asking_for_the_mark_writes_it_and_says_no_eval_backs_it(tmp_path: Path) -> None:
    plan = _plan(_run(tmp_path, frozenset({"meta.hardware.mi355x"})))
    (mark,) = [e for e in plan.edits if e.kind == "verified"]
    assert mark.reason.startswith("a maintainer asked for it (add meta.hardware.mi355x)")
    assert "no workflow-run evidence was given" in mark.reason
    assert not [e for e in plan.offered if e.kind == "verified"]
    assert plan.result is not None and "mi355x: verified" in plan.result.text


def test_no_mark_for_tuning_alone(tmp_path: Path) -> None:
    """A PR that only tunes the lane (the benchmark's choice, offered, no edit) gets no
    checkbox for the mark: the recipe has nothing to align."""
    run = run_pr(
        tmp_path,
        lambda text: text,
        lambda text: text.replace(
            "export VLLM_ROCM_USE_AITER=1\n",
            "export VLLM_ROCM_USE_AITER=1\nexport OMP_NUM_THREADS=1\n",
        ),
    )
    plan = _plan(run)
    assert not plan.edits
    # the tuning, and older drift the PR did not change; no mark
    assert {(e.subject, w.reason) for e in plan.offered if (w := plan.waits_for(e))} == {
        ("OMP_NUM_THREADS", "tuning"),
        ("VLLM_ROCM_QUICK_REDUCE_QUANTIZATION", "older"),
    }
    assert len(plan.offered) == 2


def test_a_declined_mark_is_neither_offered_nor_written(tmp_path: Path) -> None:
    """``/recipe-sync drop meta.hardware.mi355x`` on the alignment PR."""
    run = run_pr(
        tmp_path,
        lambda text: text,
        lambda text: text.replace(
            "export VLLM_ROCM_USE_AITER=1\n",
            "export VLLM_ROCM_USE_AITER=1\nexport VLLM_ROCM_USE_AITER_MHA=0\n",
        ),
        frozenset({"meta.hardware.mi355x"}),
        dropped={"meta.hardware.mi355x": "a maintainer"},
    )
    plan = _plan(run)
    assert [e.subject for e in plan.edits] == ["VLLM_ROCM_USE_AITER_MHA"]
    assert not [e for e in plan.offered if e.kind == "verified"]
