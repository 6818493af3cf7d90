"""What an alignment run saw benchmarked, in the compact form the agreement score links with
(:class:`~bot.backtest.model.LaunchDigest`), the edits and guide sections it writes (with
their size) and the settings it did not carry."""

from __future__ import annotations

from dataclasses import replace

from bot.align.model import AlignmentPlan, PlannedEdit
from bot.align.reproduction.model import KIND
from bot.align.result import AlignRun, PointResult
from bot.backtest.model import EditRow, GuideSection, HeldSetting, LaunchDigest
from bot.recipes.guide import GuideError, locate_guide, managed_blocks
from bot.vllm import Verdict
from bot.vllm.pairs import canonical_value, launch_pairs

RECORDED = ("represents", "context", "other-point", "unmapped")


def launch_digests(run: AlignRun) -> tuple[LaunchDigest, ...]:
    """One digest per distinct (profile, launch) of the run's points, in run order. An
    unmapped lane (no recipe serves its checkpoint yet) is kept with its model and GPU: a
    maintainer commit adding that variant follows it."""
    found: dict[LaunchDigest, None] = {}
    pairs_of: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = {}
    for key in run.keys:
        for point in key.points:
            if point.status not in RECORDED or point.launch is None:
                continue
            launch = point.launch
            if not launch.argv:
                continue
            profile = point.profile
            hardware = (
                profile.hardware
                if profile is not None
                else run.inputs.rules.hardware.hardware_for_runner(launch.runner) or ""
            )
            args = pairs_of.get(launch.argv)
            if args is None:
                args = tuple(launch_pairs(launch.argv))
                pairs_of[launch.argv] = args
            delta = run.deltas.get(key.key.key)
            subjects = delta.subjects(point.point, point.arm) if delta is not None else None
            digest = LaunchDigest(
                key=key.key.key,
                recipe=profile.recipe_path if profile is not None else "",
                variant=profile.variant if profile is not None else "",
                hardware=hardware,
                strategy=profile.strategy if profile is not None else "",
                status=point.status,
                tp=point.point.tp,
                scenario=point.point.scenario,
                image=launch.image,
                args=args,
                env=tuple((name, canonical_value(value)) for name, value in launch.env.items()),
                changed=tuple(sorted(name for _, name in subjects or ())),
                new=subjects is None,
                model=launch.model,
                agrees=_agrees(point),
                recipe_image=_recipe_image(point),
            )
            found[digest] = None
    return tuple(found)


def _recipe_image(point: PointResult) -> str:
    if point.comparison is None:
        return ""
    return point.comparison.rendering.image or ""


def _agrees(point: PointResult) -> tuple[str, ...]:
    """Subjects the recipe renders as the benchmark launched them (same, or its default)."""
    if point.comparison is None:
        return ()
    return tuple(
        sorted(
            "image" if d.kind == "image" else d.flag
            for d in point.comparison.report.diffs
            if d.verdict in (Verdict.SAME, Verdict.EQUIVALENT)
        )
    )


def edit_row(plan: AlignmentPlan, edit: PlannedEdit) -> EditRow:
    """One planned edit as a row, with the lanes (GPU, variant, strategy) that demand it."""
    profiles = [t.profile for t in plan.targets if t.profile.label in edit.targets]
    return EditRow(
        plan.recipe_path,
        edit.kind,
        edit.subject,
        edit.node,
        edit.before,
        edit.after,
        hardware=tuple(sorted({p.hardware for p in profiles})),
        variants=tuple(sorted({p.variant for p in profiles})),
        strategies=tuple(sorted({p.strategy for p in profiles})),
    )


def added_lines(patch: str) -> int:
    """Lines a unified diff adds (its ``+`` lines, not the ``+++`` file headers)."""
    return sum(1 for line in patch.splitlines() if line[:1] == "+" and line[:3] != "+++")


def guide_sections(run: AlignRun) -> tuple[GuideSection, ...]:
    """Every reproduction section of the run, and for a section the patch writes, the length
    of its block in the new recipe text."""
    found: list[GuideSection] = []
    for outcome in run.outcomes:
        blocks = _block_lengths(outcome.new_text, outcome.recipe_path)
        for placement in outcome.guide:
            block = placement.section.block_id
            section = GuideSection(outcome.recipe_path, block, placement.action)
            if section.written and outcome.status == "patch":
                section = replace(section, lines=blocks.get(block, 0))
            found.append(section)
    return tuple(found)


def _block_lengths(text: bytes | None, path: str) -> dict[str, int]:
    """Reproduction block id → its lines, markers included, in a recipe text."""
    if text is None:
        return {}
    try:
        guide = locate_guide(text.decode("utf-8", "replace"), path)
    except GuideError:
        return {}
    if guide is None:
        return {}
    return {
        block.id: block.end - block.start
        for block in managed_blocks(guide.lines)
        if block.kind == KIND
    }


def held_settings(run: AlignRun) -> tuple[HeldSetting, ...]:
    """The benchmark settings each recipe's plan did not carry, once per (subject, value)."""
    found: dict[HeldSetting, None] = {}
    for outcome in run.outcomes:
        for setting in outcome.plan.settings:
            held = HeldSetting(
                outcome.recipe_path,
                setting.knob,
                setting.kind,
                setting.subject,
                setting.bench,
                setting.reason,
            )
            found[held] = None
    return tuple(found)
