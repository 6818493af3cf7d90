"""What a run tells the benchmark PR: the verification comment, the check run, annotations,
and the machine-readable plan (``plan.json``).

The comment lists, per affected config key, each point's recipe profile and status, and per
recipe file the differences and where they land (the service appends the alignment PR
links). Annotations point at the benchmark script lines of the differing flags
(``LaunchLine.argv_sources``), the export line of a differing env var, or the master config's
``image`` line. Texts hold no timestamps, so an unchanged run re-renders byte-identically.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from bot import markdown as md
from bot.align.nodes import bench_spans
from bot.align.plan import AlignmentPlan, FlagNote, PlannedEdit, Target
from bot.align.result import UNCLOSED_DRIFT, AlignRun, KeyResult, PointResult, RecipeOutcome
from bot.contract import Annotation
from bot.markdown import MAX_BODY, neutralize, truncate
from bot.placeholders import as_variables
from bot.present.carried import settings_lines
from bot.present.consistency import Finding, bug_note, check_texts
from bot.present.guide import guide_section
from bot.present.offered import offered_lines
from bot.present.points import ERROR_STATUSES, STATUS_TEXT, points_section
from bot.present.posted import body_room
from bot.present.pr_text import branch_of, cap, pr_contents, pull_request_text
from bot.present.secrets import Masker, run_credentials
from bot.present.sections.changes import SKIPPED_SHOWN, change_table, edit_for
from bot.present.sections.common import code, plain, prose, ref
from bot.present.sections.values import SummaryContext
from bot.present.texts import AlignTexts, CheckRun
from bot.vllm import FlagDiff
from bot.words import count


def _context(run: AlignRun, found: RecipeOutcome) -> SummaryContext:
    return SummaryContext(run.names, run.inputs.rules, found.plan, found.matrix)


def _older(plan: AlignmentPlan) -> set[tuple[str, str]]:
    return {(note.kind, note.subject) for note in plan.preexisting}


def older_line(plan: AlignmentPlan) -> list[str]:
    """One line for the drift the benchmark PR did not introduce (docs/alignment.md §1b)."""
    if not plan.preexisting:
        return []
    subjects = list(dict.fromkeys(note.subject for note in plan.preexisting))
    named = ", ".join(code(s) for s in subjects[:6])
    more = f" and {len(subjects) - 6} more" if len(subjects) > 6 else ""
    return [
        f"Older drift, not introduced by this PR and not in its alignment PR: {named}{more} "
        "(the drift dashboard and `recipe-sync align --config-key KEY` cover it)."
    ]


def _verification_line(run: AlignRun, plan: AlignmentPlan) -> list[str]:
    """One line per verification outcome and reason, naming its GPUs (#1571's recipe said
    "… is already verified in the recipe." four times over)."""
    gpus: dict[tuple[str, str], list[str]] = {}
    for verification in plan.verifications:
        label = plain(run.names.hw_label(verification.hardware))
        reason = "" if verification.state == "already" else verification.reason
        gpus.setdefault((verification.state, reason), []).append(label)
    lines = []
    for (state, reason), labels in gpus.items():
        named = ", ".join(labels)
        if state == "verified":
            lines.append(f"Verified on {named}: {prose(reason)}.")
        elif state == "already":
            verb = "is" if len(labels) == 1 else "are"
            lines.append(f"{named} {verb} already verified in the recipe.")
        elif state == "asked":
            lines.append(f"Marked verified on {named}: {prose(reason)}.")
        else:
            lines.append(f"Not marked verified on {named}: {prose(reason)}.")
    return lines


def _broken_recipes(run: AlignRun) -> list[str]:
    """Recipe files that do not load: left out of the run, named so a maintainer can fix them."""
    if not run.broken_recipes:
        return []
    lines = [f"- {code(path)}: {md.text(why)}" for path, why in run.broken_recipes]
    return ["**Recipe files that do not load** (left out, not aligned):", "", *lines, ""]


# profiles a recipe's section names one by one; more are counted by GPU (#1970: 16 profiles
# of MiniMax-M3, a paragraph of labels)
PROFILES_NAMED = 4


def _represented(run: AlignRun, plan: AlignmentPlan) -> str:
    """The profiles the points stand for: named when few, else counted by GPU."""
    if len(plan.targets) <= PROFILES_NAMED:
        return ", ".join(plain(t.profile.label) for t in plan.targets)
    by_gpu = Counter(run.names.hw_label(t.profile.hardware) for t in plan.targets)
    gpus = ", ".join(f"{plain(gpu)} ({n})" for gpu, n in by_gpu.items())
    return f"{count(len(plan.targets), 'profile')} on {gpus}"


def comment(run: AlignRun) -> str:
    """The verification comment body (the service adds its marker, metadata and PR links)."""
    inputs = run.inputs
    head = f" at {code(inputs.head_sha[:12])}" if inputs.head_sha else ""
    recipes = ""
    if inputs.recipes_sha:
        recipes = (
            f" with {plain(inputs.recipes_repo or 'the recipes')}@{code(inputs.recipes_sha[:12])}"
        )
    out = [
        "### recipe-sync: benchmark launch lines vs vLLM recipes",
        "",
        f"{ref(inputs.bench_ref)}{head} compared{recipes}.",
        "",
    ]
    out += _broken_recipes(run)
    if not run.keys:
        out.append("No master-config key is affected by this PR, so no recipe is touched.")
        return neutralize("\n".join(out) + "\n")
    unchanged = run.change.unchanged
    if unchanged:
        out += [
            f"{count(len(unchanged), 'vLLM key')} read a file this PR changes, but none of "
            "their launch lines changed (the same argv, env and image at base and head): "
            "nothing to align for them.",
            "",
        ]
    out += points_section(run)
    for found in run.outcomes:
        plan = found.plan
        profiles = _represented(run, plan)
        status = "context only" if found.context_only else STATUS_TEXT[found.status]
        out += ["", f"#### {code(found.recipe_path)} — {status}", ""]
        if profiles:
            out.append(f"Represented by {profiles}.")
        else:
            written = any(g.written for g in found.guide)
            out.append(
                "None of the points is this recipe's profile (another parallelism or synthetic "
                "acceptance): nothing in the recipe is compared with them"
                + ("; the reproduction section this PR writes documents them." if written else ".")
            )
        if found.status == "patch":
            branch = branch_of(run, found.recipe_path)
            where = f" on branch {code(branch)}" if branch else ""
            repo = f" in {plain(inputs.recipes_repo)}" if inputs.recipes_repo else ""
            out.append(
                f"Alignment PR{where}{repo}: {pr_contents(found)}, "
                f"fingerprint {code(found.fingerprint[:12])}."
            )
        elif (
            found.unclosed_drift and len(plan.skipped) <= SKIPPED_SHOWN
        ):  # the reason is the "Not edited" list below: said once
            out.append(f"{UNCLOSED_DRIFT.capitalize()}: each is listed under “Not edited” below.")
        elif found.reason and not found.context_only:  # else the sentence above says it all
            out.append(prose(found.reason[:2000]) + ".")
        table = change_table(_context(run, found), with_unedited=True)
        if table:
            out += ["", *table]
        for target in plan.targets:
            unresolved = [str(u) for c in target.representatives for u in c.launch.unresolved]
            if unresolved:
                out += [
                    "",
                    "<details><summary>Unresolved in the launch line (static extraction)</summary>",
                    "",
                    *[f"- {md.text(u)}" for u in dict.fromkeys(unresolved)],
                    "",
                    "</details>",
                ]
        older = older_line(plan)
        if older:
            out += ["", *older]
        if plan.not_edited:
            shown = plan.not_edited[:SKIPPED_SHOWN]
            out += ["", "Not edited:", "", *[f"- {prose(s)}." for s in shown]]
        offered = offered_lines(plan, command=inputs.rules.policy.comment_command)
        if offered:
            out += ["", *offered]
        carried = settings_lines(plan, 12)
        if carried:
            out += ["", *carried]
        guide = guide_section(found, inputs.rules.policy.guide_sections)
        if guide:
            out += ["", "Guide:", "", *guide[2:]]
        lines = _verification_line(run, plan)
        if lines:
            out += ["", *lines]
    return truncate(neutralize("\n".join(out).rstrip() + "\n"), MAX_BODY)


# ------------------------------------------------------------------------------ check run


def _errors(run: AlignRun) -> list[str]:
    found: list[str] = []
    for key in run.keys:
        if key.error and key.problem is not None:
            found.append(f"{key.key.key}: {key.problem}")
        found += [
            f"{key.key.key} {r.point.label()} {r.arm}: {r.reason}"
            for r in key.points
            if r.status in ERROR_STATUSES
        ]
    return found


def check(run: AlignRun) -> tuple[str, str, str]:
    """(conclusion, title, summary) of the ``recipe-sync / alignment`` check run."""
    errors = _errors(run)
    drifting = [o for o in run.outcomes if o.status not in ("aligned", "offered")]
    offering = [o for o in run.outcomes if o.status == "offered"]
    names = ", ".join(o.recipe_path.rsplit("/", 1)[-1].removesuffix(".yaml") for o in drifting)
    if errors:
        conclusion = "failure"
        title = f"{count(len(errors), 'launch line')} could not be extracted"
    elif drifting and all(o.guide_only for o in drifting):
        conclusion = "action_required"
        title = f"reproduction section to add: {names}"
    elif drifting:
        conclusion = "action_required"
        title = f"recipe drift: {names}"
    elif offering:
        conclusion = "neutral"
        offered = sum(len(o.plan.offered) for o in offering)
        names = ", ".join(o.recipe_path.rsplit("/", 1)[-1].removesuffix(".yaml") for o in offering)
        title = f"{count(offered, 'candidate edit')} offered, none proposed: {names}"
    elif any(o.plan.preexisting for o in run.outcomes):
        conclusion = "neutral"
        older = [o for o in run.outcomes if o.plan.preexisting]
        names = ", ".join(o.recipe_path.rsplit("/", 1)[-1].removesuffix(".yaml") for o in older)
        title = f"nothing of this PR to carry; older drift in {names}"
    elif run.outcomes:
        conclusion = "success"
        title = "recipes aligned with the launch lines"
    else:
        conclusion = "neutral"
        title = "no recipe touched"
    lines = [f"- {md.text(e)}" for e in errors[:20]]
    for found in run.outcomes:
        reason = f": {prose(found.reason[:500])}" if found.reason else ""
        lines.append(f"- {code(found.recipe_path)}: {STATUS_TEXT[found.status]}{reason}")
    for key in run.keys:
        if key.problem is not None:
            lines.append(f"- {code(key.key.key)}: {md.text(key.problem)}")
    summary = "\n".join(lines) if lines else "No master-config key affected."
    return conclusion, title[:255], neutralize(summary)


def _edit_json(plan: AlignmentPlan, edit: PlannedEdit) -> dict[str, Any]:
    estimate = plan.estimate_of(edit)
    companion = plan.companion_of(edit)
    # proposed because it runs with a ticked setting (only then: the other keys stay as they were)
    came_with = {"with_ticked": companion[0], "together": companion[1].name} if companion else {}
    return {
        **edit.operation(),
        **came_with,
        "kind": edit.kind,
        "subject": edit.subject,
        "before": edit.before,
        "after": edit.after,
        "node": edit.node,
        "scope": edit.scope,
        "reason": edit.reason,
        "placement": edit.placement,
        "targets": list(edit.targets),
        "sources": [str(s) for s in edit.sources],
        "estimate": None
        if estimate is None
        else {
            "kind": estimate.kind.key,
            "basis": estimate.basis,
            "proposed": estimate.proposed,
            "adopted": estimate.adopted,
            "probability": round(estimate.probability, 3),
        },
    }


def check_annotations(run: AlignRun) -> tuple[Annotation, ...]:
    found: dict[tuple[str, int, str], Annotation] = {}
    for outcome in run.outcomes:
        plan = outcome.plan
        for target in plan.targets:
            for comparison in target.representatives:
                launch = comparison.launch
                for diff in comparison.drift:
                    edit = edit_for(plan, diff)
                    where = f"{edit.kind} at {edit.node}" if edit else "not edited"
                    reason = as_variables(diff.reason)  # plain text: no code span spells it
                    message = f"{reason} ({outcome.recipe_path}: {where})"
                    title = f"{diff.flag} differs from {target.profile.label}"
                    for path, line in _places(run, target, launch, diff):
                        found.setdefault(
                            (path, line, title),
                            Annotation(path, line, line, "warning", message, title),
                        )
    return tuple(found.values())


def _places(run: AlignRun, target: Target, launch: Any, diff: FlagDiff) -> list[tuple[str, int]]:
    if diff.kind == "flag":
        return [(span.file, span.line) for span in bench_spans(launch, diff)]
    if diff.kind == "env":
        line = run.lines.env.get((launch.script, diff.key))
        return [(launch.script, line)] if line is not None else []
    image = run.lines.images.get(target.key)
    return [image] if image is not None else []


# ------------------------------------------------------------------------------ plan.json


def _note(note: FlagNote) -> dict[str, Any]:
    return {
        "kind": note.kind,
        "subject": note.subject,
        "bench": note.bench,
        "recipe": note.recipe,
        "verdict": note.verdict,
        "reason": note.reason,
        "target": note.target,
        "node": note.node,
    }


def _plan_json(found: RecipeOutcome, texts: AlignTexts) -> dict[str, Any]:
    plan = found.plan
    matrix = found.matrix
    return {
        "recipe": found.recipe_path,
        "status": found.status,
        "reason": found.reason,
        "fingerprint": found.fingerprint or None,
        "title": texts.prs[found.recipe_path].title if found.recipe_path in texts.prs else None,
        "targets": [
            {
                "key": t.key,
                "profile": t.profile.label,
                "hardware": t.profile.hardware,
                "strategy": t.profile.strategy,
                "variant": t.profile.variant,
                "features": list(t.profile.features),
                "modes": dict(sorted(t.profile.modes.items())),
                "points": [f"{c.launch.point.label()} {c.launch.arm}" for c in t.representatives],
                "drift": [d.to_json() for d in t.comparison.drift],
                "evidence": (
                    {
                        "run": t.evidence.run_id,
                        "attempt": t.evidence.attempt,
                        "job": t.evidence.job_name,
                    }
                    if t.evidence is not None
                    else None
                ),
                "evidence_note": t.evidence_note,
            }
            for t in plan.targets
        ],
        "guide": [
            {
                "block": g.section.block_id,
                "heading": g.section.heading,
                "action": g.action,
                "where": g.where,
                "reason": g.reason,
                "keys": list(g.section.keys),
            }
            for g in found.guide
        ],
        "guide_drift": [
            {
                "heading": d.heading,
                "line": d.line,
                "hardware": d.hardware,
                "key": d.key,
                "point": d.point,
                "managed": d.managed,
                "cites_benchmark": d.cites_benchmark,
                "drift": [x.to_json() for x in d.diffs],
                "not_compared": list(d.not_compared),
            }
            for d in found.guide_drift
        ],
        "edits": [_edit_json(plan, e) for e in plan.edits],
        # below the adoption threshold: listed with their estimate, not in the patch
        "offered": [_edit_json(plan, e) for e in plan.offered],
        "defaults": [_note(n) for n in plan.defaults],
        "recipe_only": [_note(n) for n in plan.recipe_only],
        "benchmark_only": [_note(n) for n in plan.benchmark_only],
        "front_end": [_note(n) for n in plan.front_end],
        "unknown": [_note(n) for n in plan.unknown],
        "preexisting": [_note(n) for n in plan.preexisting],
        "skipped": list(plan.skipped),
        "settings": [
            {
                "knob": x.knob,
                "kind": x.kind,
                "subject": x.subject,
                "bench": x.bench,
                "recipe": x.recipe,
                "reason": x.reason,
                "target": x.target,
            }
            for x in plan.settings
        ],
        "rules_to_classify": list(plan.to_classify),
        "notes": list(plan.notes),
        "verifications": [
            {"hardware": v.hardware, "state": v.state, "reason": v.reason}
            for v in plan.verifications
        ],
        "failure": plan.failure,
        "matrix": (
            {
                "groups": [{"renderings": g.label, "result": g.result} for g in matrix.groups],
                "moved": [
                    {
                        "model": r.id.model,
                        "hardware": r.id.hardware,
                        "strategy": r.id.strategy,
                        "features": r.id.features_label(),
                        "expected": r.expected,
                        "changes": list(r.changes),
                    }
                    for r in matrix.moved
                ],
                "renderings": len(matrix.rows),
                "unexpected": list(matrix.unexpected),
                "ineffective": list(matrix.ineffective),
                "builder": {
                    "ran": matrix.builder.ran,
                    "ok": matrix.builder.ok,
                    "summary": matrix.builder.summary,
                    "detail": matrix.builder.detail,
                },
            }
            if matrix is not None
            else None
        ),
    }


def _point_json(result: PointResult) -> dict[str, Any]:
    launch = result.launch
    return {
        "key": result.key,
        "point": result.point.label(),
        "arm": result.arm,
        "status": result.status,
        "reason": result.reason,
        "profile": result.profile.label if result.profile is not None else None,
        "script": launch.script if launch is not None else None,
        "unresolved": [str(u) for u in launch.unresolved] if launch is not None else [],
        "drift": [d.to_json() for d in result.drift],
    }


def _key_json(key: KeyResult) -> dict[str, Any]:
    return {
        "key": key.key.key,
        "file": key.key.file,
        "line": key.key.line,
        "reasons": list(key.key.reasons),
        "framework": key.key.framework,
        "problem": key.problem,
        "points": [_point_json(p) for p in key.points],
    }


def plan_json(run: AlignRun, texts: AlignTexts) -> dict[str, Any]:
    """Everything the run decided, as JSON (deterministic: no times, stable order);
    credentials masked as in the texts."""
    masked: dict[str, Any] = _masked(_plan_json_raw(run, texts), Masker(run_credentials(run)))
    return masked


def _masked(value: Any, mask: Masker) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: _masked(v, mask) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, mask) for v in value]
    return value


def _plan_json_raw(run: AlignRun, texts: AlignTexts) -> dict[str, Any]:
    inputs = run.inputs
    return {
        "version": 1,
        "benchmark": {
            "repo": inputs.bench_repo or None,
            "pr": inputs.pr_number,
            "head": inputs.head_sha or None,
            "base": inputs.base_sha or None,
            "changed_files": list(run.change.changed_files),
            "removed_keys": list(run.change.removed_keys),
        },
        "recipes": {
            "repo": inputs.recipes_repo or None,
            "base": inputs.recipes_sha or None,
            **(
                {"broken": [{"path": p, "reason": why} for p, why in run.broken_recipes]}
                if run.broken_recipes
                else {}
            ),
        },
        "keys": [_key_json(k) for k in run.keys],
        "plans": [_plan_json(o, texts) for o in run.outcomes],
        "check": {
            "conclusion": texts.check.conclusion,
            "title": texts.check.title,
            "summary": texts.check.summary,
            "annotations": [
                {
                    "path": a.path,
                    "line": a.start_line,
                    "level": a.level,
                    "title": a.title,
                    "message": a.message,
                }
                for a in texts.check.annotations
            ],
        },
    }


def present(run: AlignRun, limit: int = MAX_BODY) -> AlignTexts:
    """Every text of a run, rendered from the analysis alone (re-renderable at will).
    Credentials the launch spelled out are masked as ``***`` in all of them."""
    mask = Masker(run_credentials(run))
    prs = {}
    findings: dict[str, tuple[Finding, ...]] = {}
    for found in run.outcomes:
        text = pull_request_text(run, found, limit)
        if text is None:
            continue
        body = mask(text.body)
        # checked before it is written: a contradiction is shown, never posted silently
        problems = check_texts(run, found, body)
        if problems:
            findings[found.recipe_path] = problems
            body = cap(bug_note(problems) + body, body_room(text.meta, text.footer, limit))
        prs[found.recipe_path] = replace(text, title=mask(text.title), body=body)
    conclusion, title, summary = check(run)
    annotations = tuple(
        replace(a, title=mask(a.title), message=mask(a.message)) for a in check_annotations(run)
    )
    return AlignTexts(
        prs=prs,
        comment=mask(comment(run)),
        check=CheckRun(conclusion, mask(title), mask(summary), annotations),
        findings=findings,
    )
