"""The runtime evidence section of one benchmarked target (the rendering is
:mod:`bot.present.evidence`'s; this says what it means for ``meta.hardware``)."""

from __future__ import annotations

from bot.align.plan import AlignmentPlan, Target
from bot.align.result import AlignRun
from bot.present.evidence import render_evidence_section
from bot.present.sections.common import (
    TextBudget,
    code,
    plain,
    prose,
)


def evidence_section(
    run: AlignRun, plan: AlignmentPlan, target: Target, budget: TextBudget
) -> list[str]:
    label = run.names.hw_label(target.profile.hardware)
    verification = next(
        (v for v in plan.verifications if v.hardware == target.profile.hardware), None
    )
    meta_key = code("meta.hardware." + target.profile.hardware)
    if target.report is None:
        state = verification.state if verification is not None else None
        consequence = {
            "already": f"{meta_key} is already verified in the recipe",
            "asked": f"{meta_key} is marked verified because a maintainer asked for it",
        }.get(state or "", f"so {meta_key} is not marked verified")
        return [
            f"### {plain(label)} runtime evidence",
            "",
            f"No workflow-run evidence was given (no runs or job logs to read), {consequence}.",
        ]
    inputs = run.inputs
    changelog = run.changelog.get(target.key, ())
    section = render_evidence_section(
        target.report,
        hardware_label=label,
        serving_match=verification.serving_match if verification else None,
        changelog=changelog,
        changelog_key=target.key,
        pr_ref=inputs.bench_ref if inputs.pr_number is not None else None,
        heading_level=3,
        excerpts=budget.excerpts,
    )
    out = section.rstrip("\n").split("\n")
    if verification is not None and not verification.marked:
        out += ["", f"{meta_key} is not marked verified: {prose(verification.reason)}."]
    return out
