"""A recipe's section of the benchmark PR's comment says each thing once and names few things
one by one (bot/present/report.py)."""

from __future__ import annotations

from dataclasses import replace

from bot.align.model import Verification
from bot.align.result import UNCLOSED_DRIFT, AlignRun
from bot.present.points import points_table
from bot.present.report import PROFILES_NAMED, check_annotations, comment


def test_a_blocked_recipe_lists_what_stays_open_once(seed_run: AlignRun) -> None:
    (found,) = seed_run.outcomes
    skipped = ("a h200 lane: the benchmark serves $MODEL_PATH", "b lane: another reason")
    plan = replace(found.plan, skipped=skipped)
    blocked = replace(
        found, plan=plan, status="blocked", reason=f"{UNCLOSED_DRIFT}: x; y", matrix=None
    )  # blocked before a patch was written: no regression matrix
    text = comment(replace(seed_run, outcomes=(blocked,)))
    assert (
        "Drift remains that no safe edit closes: each is listed under “Not edited” below." in text
    )
    assert text.count("the benchmark serves") == 1  # in the list, not again in a paragraph
    assert "Not edited:" in text
    # blocked for another reason (the regression matrix): that reason is said
    moved = replace(
        blocked, reason="an unplanned rendering moved: H100 single_node_tp", matrix=found.matrix
    )
    text = comment(replace(seed_run, outcomes=(moved,)))
    assert "an unplanned rendering moved" in text
    assert "each is listed under" not in text


def test_many_profiles_are_counted_by_gpu(seed_run: AlignRun) -> None:
    (found,) = seed_run.outcomes
    (target,) = found.plan.targets[:1]
    few = comment(seed_run)
    assert f"Represented by {target.profile.label}" in few.replace("\\_", "_")
    many = tuple(target for _ in range(PROFILES_NAMED + 1))
    text = comment(
        replace(seed_run, outcomes=(replace(found, plan=replace(found.plan, targets=many)),))
    )
    assert "Represented by 5 profiles on MI355X (5)." in text


def test_a_check_annotation_names_a_run_time_value_as_the_script_does(seed_run: AlignRun) -> None:
    """The check run's annotations are plain text: a reason holding the evaluator's
    placeholder (#2508's `HSA_NO_SCRATCH_RECLAIM`) says the variable instead."""
    (found,) = seed_run.outcomes
    target = found.plan.targets[0]
    comparison = target.representatives[0]
    diff = comparison.drift[0]
    leaking = replace(diff, reason="the benchmark sets <X_FLAG:opaque:undecidable-branch>")
    diffs = tuple(leaking if d is diff else d for d in comparison.report.diffs)
    comparison = replace(comparison, report=replace(comparison.report, diffs=diffs))
    target = replace(target, representatives=(comparison, *target.representatives[1:]))
    plan = replace(found.plan, targets=(target, *found.plan.targets[1:]))
    run = replace(seed_run, outcomes=(replace(found, plan=plan),))
    messages = [a.message for a in check_annotations(run)]
    assert any(m.startswith("the benchmark sets $X_FLAG (") for m in messages), messages
    assert not any("opaque" in m for m in messages)


def test_verification_outcomes_name_their_gpus_once_each(seed_run: AlignRun) -> None:
    """#1571's recipe said "… is already verified in the recipe." four times over."""
    (found,) = seed_run.outcomes
    why = "no workflow-run evidence was given"
    verifications = (
        Verification("b200", "no-evidence", why),
        Verification("b300", "no-evidence", why),
        Verification("h200", "already", "meta.hardware.h200 is already verified"),
        Verification("mi355x", "already", "meta.hardware.mi355x is already verified"),
    )
    plan = replace(found.plan, verifications=verifications)
    text = comment(replace(seed_run, outcomes=(replace(found, plan=plan),)))
    assert f"Not marked verified on B200, B300: {why}." in text
    assert "H200, MI355X are already verified in the recipe." in text
    assert text.count("verified in the recipe") == 1


def test_a_recipe_no_point_stands_for_is_context_only_unless_its_pr_is_written(
    seed_run: AlignRun,
) -> None:
    """A recipe only context points reach (another parallelism, synthetic arms) is headed
    "context only" and nothing is claimed about a guide section; one whose reproduction
    section a PR writes (a guide-only PR the repository asked for) keeps the PR's heading."""
    (found,) = seed_run.outcomes
    bare = replace(found.plan, targets=(), edits=())
    aligned = replace(found, plan=bare, status="aligned", reason="no point …", guide=())
    text = comment(replace(seed_run, outcomes=(aligned,)))
    assert "— context only" in text and "no point …" not in text
    assert "nothing in the recipe is compared with them." in text
    assert "reproduction section" not in text.split("— context only", 1)[1].split("\n\n")[1]
    patch = replace(aligned, status="patch", guide=found.guide)
    text = comment(replace(seed_run, outcomes=(patch,)))
    assert "— context only" not in text
    assert any(g.written for g in found.guide)  # the seed's PR writes its section
    assert "the reproduction section this PR writes documents them." in text


def test_a_point_standing_in_for_its_profile_says_so_and_carries_the_outcome(
    seed_run: AlignRun,
) -> None:
    """A point at another parallelism that stands for its profile (no point ran the recipe's
    TP; bot/align/targets.py) read "other point: another point of the sweep" beside a PR
    built from it (InferenceX #2118); its row says it stands in and what came of it, while
    an other point no plan stands on keeps the plain words."""
    (found,) = seed_run.outcomes
    standing = {id(c) for t in found.plan.targets for c in t.representatives}
    key = next(k for k in seed_run.keys if any(id(p.comparison) in standing for p in k.points))
    why = "another point of the sweep: --tensor-parallel-size 4 (recipe 8)"
    moved = tuple(replace(p, status="other-point", reason=why) for p in key.points)
    run = replace(seed_run, keys=(replace(key, points=moved),))
    rows = [row for row in points_table(run)[2:] if "other point" in row]
    stands = [row for row in rows if "standing in" in row]
    assert stands and all(
        f"other point, standing in for the profile ({why}); " in row and "alignment PR with" in row
        for row in stands
    )
    assert all(f"other point: {why} |" in row for row in rows if row not in stands)


def test_a_synthetic_arm_standing_in_is_not_called_context_only(seed_run: AlignRun) -> None:
    """A profile only synthetic-acceptance arms ran stands on them for all but the
    acceptance (bot/align/targets.py); InferenceX #2616's row read "standing in … (… context
    only, never the recipe)", two claims that cannot both hold."""
    (found,) = seed_run.outcomes
    standing = {id(c) for t in found.plan.targets for c in t.representatives}
    key = next(k for k in seed_run.keys if any(id(p.comparison) in standing for p in k.points))
    note = "throughput arm with synthetic acceptance: context only, never the recipe"
    moved = tuple(replace(p, status="context", reason=note) for p in key.points)
    rows = points_table(replace(seed_run, keys=(replace(key, points=moved),)))[2:]
    stands = [row for row in rows if "standing in" in row]
    assert stands
    for row in stands:
        assert "throughput arm with synthetic acceptance, standing in for the profile (its " in row
        assert "never the recipe" not in row and "alignment PR with" in row
