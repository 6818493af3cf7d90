"""A recipe's section of the benchmark PR's comment says each thing once and names few things
one by one (bot/present/report.py)."""

from __future__ import annotations

from dataclasses import replace

from bot.align.result import UNCLOSED_DRIFT, AlignRun
from bot.present.report import PROFILES_NAMED, comment


def test_a_blocked_recipe_lists_what_stays_open_once(seed_run: AlignRun) -> None:
    (found,) = seed_run.outcomes
    skipped = ("a h200 lane: the benchmark serves $MODEL_PATH", "b lane: another reason")
    plan = replace(found.plan, skipped=skipped)
    blocked = replace(found, plan=plan, status="blocked", reason=f"{UNCLOSED_DRIFT}: x; y")
    text = comment(replace(seed_run, outcomes=(blocked,)))
    assert (
        "Drift remains that no safe edit closes: each is listed under “Not edited” below." in text
    )
    assert text.count("the benchmark serves") == 1  # in the list, not again in a paragraph
    assert "Not edited:" in text


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
