"""The alignment PR's title and body (GitHub-flavoured Markdown), from computed values only.

Every sentence is built from the plan, the regression matrix and the evidence; values that
come from the benchmark PR (flag values, env values, keys, reasons quoting them) are escaped
(:mod:`bot.markdown`) or put in code spans, and the body is neutralised (no hidden
markers, mentions or closing keywords) and capped below GitHub's 65,536-character limit.
The verification comment, the check run and the plan JSON are in :mod:`bot.present.report`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot import markdown as md
from bot.align.matrix import RegressionMatrix
from bot.align.nodes import hw_label, in_recipe
from bot.align.plan import AlignmentPlan, FlagNote, PlannedEdit, Target, Verification
from bot.align.profile import SYNTHETIC_KEYS
from bot.align.result import AlignRun, RecipeOutcome
from bot.benchmarks.changelog import entries_for
from bot.github.sanitize import MAX_BODY, meta_comment, neutralize, truncate
from bot.present.evidence import render_evidence_section
from bot.present.guide import guide_section
from bot.present.hunks import hunk_lines
from bot.present.settings import settings_lines
from bot.present.texts import PullRequestText
from bot.recipes import RecipesRepo, Rendering, render
from bot.recipes.jsvalues import as_dict, js_str
from bot.recipes.text import quote_value

PLATFORMS = {"amd": "ROCm", "nvidia": "CUDA", "tpu": "TPU", "intel": "XPU"}
MAX_TABLE_ROWS = 12  # regression groups shown before the rest go into <details>
MAX_LISTED = 40  # items per <details> list


@dataclass(frozen=True)
class TextBudget:
    """How much of the long parts a body shows; a body over the limit is rebuilt compact."""

    table_rows: int = MAX_TABLE_ROWS  # regression groups in the table (the rest: <details>)
    detail_rows: int = 1_000  # regression groups inside <details>
    listed: int = MAX_LISTED  # items per list of what was left alone
    excerpts: bool = True  # job-log excerpts in the evidence section


COMPACT = TextBudget(table_rows=6, detail_rows=0, listed=5, excerpts=False)
ENV_WIDTH = 100  # the env prefix line is wrapped like the seed's


def code(value: object) -> str:
    return md.code(str(value))


_PLAIN = re.compile(r"[A-Za-z0-9_ .,:;()=+/\-—]*")
_LOOSE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def plain(text: str) -> str:
    """Trusted identifiers (recipe, strategy and hardware names) as they are when they hold
    no Markdown (an intraword ``_`` is not emphasis); anything else escaped."""
    if _PLAIN.fullmatch(text) and not _LOOSE_UNDERSCORE.search(text):
        return text
    return md.text(text)


def prose(text: str) -> str:
    """Escaped text without its final period (the caller ends the sentence)."""
    return md.text(text.strip().rstrip("."))


_REF = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+")


def ref(bench_ref: str) -> str:
    """``owner/name#N`` stays a live cross-reference; anything else is escaped."""
    return bench_ref if _REF.fullmatch(bench_ref) else md.text(bench_ref)


def _recipe_name(plan: AlignmentPlan, recipes: RecipesRepo) -> str:
    recipe = recipes.by_path[plan.recipe_path]
    title = as_dict(recipe.data.get("meta")).get("title")
    return str(title) if title else plan.recipe_path.rsplit("/", 1)[-1].removesuffix(".yaml")


def _hardware(plan: AlignmentPlan, recipes: RecipesRepo) -> list[str]:
    ids = {t.profile.hardware for t in plan.targets}
    return [hw for hw in recipes.hardware if hw in ids]


# how a title names a changed flag (others: the flag without its dashes)
FLAG_WORDS = {
    "--moe-backend": "MoE backend",
    "--attention-backend": "attention backend",
    "--linear-backend": "GEMM backend",
    "--speculative-config": "speculative decoding",
    "--compilation-config": "compilation config",
    "--kv-cache-dtype": "KV-cache dtype",
    "--tensor-parallel-size": "TP",
    "--tool-call-parser": "tool-call parser",
    "--reasoning-parser": "reasoning parser",
}
MAX_TITLE_ITEMS = 3


def _changes(plan: AlignmentPlan, recipes: RecipesRepo) -> list[str]:
    """What the edits change, in words, most visible first (image, flags, features, env)."""
    brands = {recipes.hardware[h].docker_brand for h in _hardware(plan, recipes)}
    words: list[str] = []
    for edit in plan.edits:
        if edit.kind == "image":
            words.append(f"{'/'.join(sorted(b.upper() for b in brands))} image".strip())
    proposed = {e.subject for e in plan.edits if e.node == "opt_in_features"}
    for edit in plan.edits:
        if edit.node.split(".")[:2] in (["features", f] for f in proposed):
            continue  # named by the feature it goes behind
        if edit.kind in ("flag", "flag-new", "flag-remove") and edit.subject.startswith("--"):
            base = edit.subject.split(".", 1)[0]
            words.append(FLAG_WORDS.get(base, base.lstrip("-")))
        elif edit.kind == "flag-new" and edit.node == "opt_in_features":
            words.append(f"opt-in {edit.subject} feature")
    if not words and any(e.kind in ("env", "env-new") for e in plan.edits):
        words.append("env")
    words = list(dict.fromkeys(words))
    if not words and any(e.kind == "verified" for e in plan.edits):
        words.append("verified hardware")
    if len(words) > MAX_TITLE_ITEMS:
        words = [*words[: MAX_TITLE_ITEMS - 1], "more settings"]
    return words


def title(
    plan: AlignmentPlan,
    recipes: RecipesRepo,
    bench_repo: str,
    pr: int | None,
    outcome: RecipeOutcome | None = None,
) -> str:
    """What changes, stable across runs: ``[DeepSeek-V4.1-Flash][MI355X] Align AMD image and
    MoE backend with InferenceX #3058`` (no SHAs, run ids or counts); a patch that only writes
    reproduction sections: ``[Widget][MI355X] Add benchmark reproduction to the guide from
    InferenceX #4000``."""
    if not plan.edits and outcome is not None and outcome.guide:
        ids = {p.section.hardware for p in outcome.guide}
        hws = [hw for hw in recipes.hardware if hw in ids]
        labels = "/".join(hw_label(recipes, h) for h in hws)
        tags = f"[{_recipe_name(plan, recipes)}]" + (f"[{labels}]" if labels else "")
        bench = bench_repo.rsplit("/", 1)[-1] if bench_repo else "benchmark"
        keys = outcome.guide[0].section.keys
        source = f"{bench} #{pr}" if pr is not None else f"{bench} {keys[0] if keys else ''}"
        text = f"{tags} Add benchmark reproduction to the guide from {source}"
        return " ".join(text.split())[:250]
    hws = _hardware(plan, recipes)
    labels = "/".join(hw_label(recipes, h) for h in hws)
    tags = f"[{_recipe_name(plan, recipes)}]" + (f"[{labels}]" if labels else "")
    bench = bench_repo.rsplit("/", 1)[-1] if bench_repo else "benchmark"
    source = f"{bench} #{pr}" if pr is not None else f"{bench} {plan.targets[0].key}"
    words = _changes(plan, recipes)
    what = (
        ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)
    ) or "recipe"
    text = f"{tags} Align {what} with {source}"
    return " ".join(text.split())[:250]


# ------------------------------------------------------------------------------ summary


def _verb(edit: PlannedEdit) -> str:
    value = edit.after or ""
    if edit.kind == "image":
        parts = edit.node.split(".")
        key = parts[-2] if parts[-1] == "docker_image" else parts[-1]
        what = (
            f"the {key.upper() if key in PLATFORMS or parts[-1] == 'docker_image' else key} image"
        )
        return f"Pin {what} to {code(value)}"
    if edit.kind == "flag":
        return f"Set {code(edit.subject + ' ' + value)}"
    if edit.kind == "flag-new":
        return f"Add {code(value)}"
    if edit.kind == "env":
        return f"Set {code(edit.subject + '=' + value)}"
    if edit.kind == "env-new":
        return f"Add {code(edit.subject + '=' + value)}"
    if edit.kind == "verified":
        return f"Record {code(edit.subject + ': verified')}"
    return f"Remove {code(edit.before or edit.subject)}"


def summary_bullet(edit: PlannedEdit) -> str:
    was = f"was {code(edit.before)}; " if edit.before is not None else ""
    where = f"at {code(edit.node)} ({was}{plain(edit.scope)})"
    placement = f" Placement: {prose(edit.placement)}." if edit.placement else ""
    return f"- {_verb(edit)} {where}: {prose(edit.reason)}.{placement}"


def verified_bullet(edit: PlannedEdit, verification: Verification | None, pr: str) -> str:
    """``Record mi355x: verified``, citing the run, its eval figures and the blob check."""
    item = verification.evidence if verification is not None else None
    if item is None:
        return summary_bullet(edit)
    order = {"strict-match": 0, "flexible-extract": 1}  # what the verdict hinges on first
    shown = sorted(item.figures, key=lambda f: (order.get(f.filter or "", 2), f.filter or ""))
    figures = ", ".join(
        f"{md.text(f.filter or f.metric)} {f.value:.4f}"
        + (f" ± {f.stderr:.4f}" if f.stderr is not None else "")
        for f in shown[:4]
    )
    tasks = ", ".join(dict.fromkeys(md.text(f.task) for f in item.figures))
    attempt = f" (attempt {item.attempt})" if item.attempt > 1 else ""
    return (
        f"- {_verb(edit)} at {code(edit.node)}: run {item.run_id}{attempt}, job "
        f"{code(item.job_name)}, passed {tasks} ({figures}); its launch line is the extracted "
        f"argv and matches the edited rendering, and the script blob is the one {pr} ships "
        "(runtime evidence below). Placement: rules/policy.yaml mark_verified."
    )


KIND_ORDER = ("image", "flag", "env", "env-new", "flag-new", "flag-remove", "verified")


def summary_lines(plan: AlignmentPlan, bench_ref: str) -> list[str]:
    """One bullet per edit, image first and the verification last (the seed's order)."""
    lines = []
    for edit in sorted(plan.edits, key=lambda e: KIND_ORDER.index(e.kind)):
        if edit.kind == "verified":
            verification = next((v for v in plan.verifications if v.hardware == edit.subject), None)
            lines.append(verified_bullet(edit, verification, ref(bench_ref)))
        else:
            lines.append(summary_bullet(edit))
    return lines


def _untouched_overrides(after: Rendering, plan: AlignmentPlan) -> list[str]:
    """Hardware-specific override nodes the target draws from that the plan leaves alone."""
    edited = {e.node for e in plan.edits}
    found: dict[str, None] = {}
    for unit in after.commands[0].args:
        if ".hardware_overrides." not in unit.path or not in_recipe(unit.path):
            continue
        if unit.path in edited or unit.path.rsplit("[", 1)[0] in edited:
            continue
        if unit.path.startswith("hardware_overrides.") or unit.path.startswith(
            "strategy_overrides."
        ):
            continue  # generation/profile blocks: covered by the edits' own scope
        found[unit.path.rsplit("[", 1)[0]] = None
    return list(found)


# ------------------------------------------------------------------------------ sections


def _command_block(rendering: Rendering) -> str:
    env = [
        f"{name}={quote_value(js_str(value))}" for name, value in rendering.commands[0].env.items()
    ]
    lines: list[str] = []
    current = ""
    for item in env:
        if current and len(current) + 1 + len(item) > ENV_WIDTH:
            lines.append(current)
            current = item
        else:
            current = f"{current} {item}".strip()
    if current:
        lines.append(current)
    command = str(rendering.json.get("command") or " ".join(rendering.commands[0].argv))
    body = "\n".join(lines) + ("\n\n" if lines else "") + command
    return md.fenced(body, "bash")


def _features_label(target: Target, recipes: RecipesRepo) -> str:
    recipe = recipes.by_path[target.profile.recipe_path]
    opt_in = recipe.data.get("opt_in_features") or []
    features = as_dict(recipe.data.get("features"))
    names: list[str] = []
    for name in target.profile.features:
        if name not in opt_in:
            continue
        label = name.replace("_", " ")
        mode = target.profile.modes.get(name)
        if mode:
            mode_label = as_dict(as_dict(as_dict(features.get(name)).get("modes")).get(mode))
            label += f" ({mode_label.get('label') or mode})"
        names.append(label)
    return " + ".join(names) or "default features"


def _invariant_sentence(after: Rendering, plan: AlignmentPlan) -> str:
    argv = after.commands[0].argv
    flags = [e.subject for e in plan.edits if e.kind in ("flag", "flag-new")]
    for token in argv:
        if token.startswith("--") and token.endswith("-config") and token not in flags:
            flags.append(token)
    present = [f for f in dict.fromkeys(flags) if f in argv]
    parts = [f"exactly one {code(f)}" for f in present]
    sentence = (
        (", ".join(parts).capitalize() + ", and every other flag once")
        if parts
        else ("Every flag renders once")
    )
    spec = next((argv[i + 1] for i, t in enumerate(argv[:-1]) if t == "--speculative-config"), None)
    if spec is not None:
        try:
            data = json.loads(spec)
        except ValueError:
            data = {}
        synthetic = isinstance(data, dict) and (
            data.get("rejection_sample_method") == "synthetic"
            or any(key in data for key in SYNTHETIC_KEYS)
        )
        if not synthetic:
            sentence += "; no synthetic-acceptance fields"
    return (
        f"{sentence}. Re-comparing the represented launch line with the edited recipe leaves "
        "none of the planned differences."
    )


def whitespace_check(patch: str) -> str:
    """``git diff --check`` rules on the added lines, and the diffstat."""
    lines = patch.splitlines()
    added = [x[1:] for x in lines if x.startswith("+") and not x.startswith("+++")]
    removed = [x for x in lines if x.startswith("-") and not x.startswith("---")]
    files = sum(1 for x in lines if x.startswith("+++ "))
    problems = [x for x in added if x != x.rstrip(" \t") or "\t" in x[: len(x) - len(x.lstrip())]]
    state = "clean" if not problems else f"{len(problems)} added line(s) with whitespace errors"
    which = "One file changed" if files == 1 else f"{files} files changed"
    return (
        f"Whitespace check of the patch (`git diff --check` rules): {state}. "
        f"{which}, +{len(added)}/−{len(removed)}."
    )


def _matrix_section(matrix: RegressionMatrix, budget: TextBudget) -> list[str]:
    head = ["| Renderings | Result |", "|---|---|"]
    rows = [f"| {plain(g.label)} | {md.text(g.result)} |" for g in matrix.groups]
    out = [
        "### Regression checks",
        "",
        "Every rendering of this recipe (the JSON API's, and the same profiles with the "
        "generated command's features), before and after the edit:",
        "",
        *head,
        *rows[: budget.table_rows],
    ]
    rest = rows[budget.table_rows :]
    if rest:
        shown = rest[: budget.detail_rows]
        out += ["", f"<details><summary>{len(rest)} more groups</summary>", ""]
        out += [*head, *shown] if shown else []
        if len(shown) < len(rest):
            out.append(f"{len(rest) - len(shown)} groups not shown (see plan.json)")
        out += ["", "</details>"]
    return out


def _matrix_lines(matrix: RegressionMatrix) -> list[str]:
    total = len(matrix.rows)
    api = sum(1 for r in matrix.rows if r.id.api_file is not None)
    moved = len(matrix.moved)
    how = f"{api} JSON API renderings"
    if total > api:
        how += f" and {total - api} with the generated command's features"
    verdict = (
        "each only in what an edited node applies to"
        if not matrix.unexpected
        else "UNEXPECTED: " + md.text("; ".join(matrix.unexpected))
    )
    out = [
        f"- Regression matrix: {total} renderings of this recipe ({how}) compared before and "
        f"after; {moved} moved ({verdict}), {total - moved} unchanged."
    ]
    if matrix.ineffective:
        out.append(f"- Expected to move but unchanged: {md.text('; '.join(matrix.ineffective))}.")
    builder = matrix.builder
    if builder.ran:
        state = "✓" if builder.ok else "✗"
        result = md.text(builder.summary or builder.detail)
        out.append(f"- `node scripts/build-recipes-api.mjs`: {state} {result}")
    elif builder.summary:
        out.append(
            f"- Recipes builder {prose(builder.detail)}. recipe-sync's own JSON API build of the "
            f"edited tree: {prose(builder.summary)}."
        )
    else:
        out.append(f"- Recipes builder {prose(builder.detail)}.")
    return out


def _validation(
    matrix: RegressionMatrix | None, patch: str, plan: AlignmentPlan, after: Rendering
) -> list[str]:
    out = ["### Validation", ""]
    if matrix is not None:
        out += _matrix_lines(matrix)
    out.append(f"- {_invariant_sentence(after, plan)}")
    out.append(f"- {whitespace_check(patch)}")
    return out


def _defaults_section(plan: AlignmentPlan, bench_ref: str) -> list[str]:
    if not plan.defaults:
        return []
    pinned = {e.subject: e for e in plan.edits if e.kind == "flag-new"}
    out = [
        "### Defaults correspondence",
        "",
        "Flags one side omits, resolved with vLLM's defaults for the profile:",
        "",
        "| Flag | Benchmark | Recipe | Verdict | Why |",
        "|---|---|---|---|---|",
    ]
    for note in plan.defaults:
        if note.subject in pinned:
            verdict = f"not equivalent: pinned at {code(pinned[note.subject].node)}"
        elif note.verdict.startswith("equivalent"):
            verdict = "equivalent: no edit"
        else:
            verdict = md.text(note.verdict)
        bench = code(note.bench) if note.bench else "omitted"
        recipe = code(note.recipe) if note.recipe else "omitted"
        out.append(
            f"| {code(note.subject)} | {bench} | {recipe} | {verdict} | {prose(note.reason)} |"
        )
    return out


def _notes_list(name: str, notes: Sequence[FlagNote], why: str, listed: int) -> list[str]:
    if not notes:
        return []
    out = [f"**{name}** ({why})", ""]
    for note in notes[:listed]:
        where = f" at {code(note.node)}" if note.node else ""
        value = note.bench or note.recipe or note.subject
        out.append(f"- {code(value)}{where}: {prose(note.reason)}.")
    if len(notes) > listed:
        out.append(f"- … and {len(notes) - listed} more (see plan.json)")
    return [*out, ""]


def _texts_list(name: str, items: Sequence[str], listed: int) -> list[str]:
    if not items:
        return []
    out = [f"**{name}**", "", *[f"- {prose(item)}." for item in items[:listed]]]
    if len(items) > listed:
        out.append(f"- … and {len(items) - listed} more (see plan.json)")
    return [*out, ""]


def _lists_section(plan: AlignmentPlan, budget: TextBudget) -> list[str]:
    policy = (
        "reported, not removed"
        if not any(e.kind == "flag-remove" for e in plan.edits)
        else "removed by policy"
    )
    why = f"rules/policy.yaml recipe_only_flags: {policy}"
    listed = budget.listed
    body = [
        *_notes_list("Recipe-only", plan.recipe_only, why, listed),
        *_notes_list("Benchmark-only", plan.benchmark_only, "never copied into a recipe", listed),
        *_notes_list("Front-end only", plan.front_end, "not serving configuration", listed),
        *_notes_list("Unknown", plan.unknown, "not classified; not copied", listed),
        *_texts_list("Not edited", plan.skipped, listed),
        *_texts_list("Notes", plan.notes, listed),
    ]
    if not body:
        return []
    counts = [
        f"{len(items)} {name}"
        for name, items in (
            ("recipe-only", plan.recipe_only),
            ("benchmark-only", plan.benchmark_only),
            ("front-end", plan.front_end),
            ("unknown", plan.unknown),
            ("not edited", plan.skipped),
            ("notes", plan.notes),
        )
        if items
    ]
    return [
        f"<details><summary>Left alone: {', '.join(counts)}</summary>",
        "",
        *body,
        "</details>",
    ]


def _evidence_section(
    run: AlignRun, plan: AlignmentPlan, target: Target, budget: TextBudget
) -> list[str]:
    label = hw_label(run.recipes, target.profile.hardware)
    verification = next(
        (v for v in plan.verifications if v.hardware == target.profile.hardware), None
    )
    meta_key = code("meta.hardware." + target.profile.hardware)
    if target.report is None:
        already = verification is not None and verification.state == "already"
        consequence = (
            f"{meta_key} is already verified in the recipe"
            if already
            else f"so {meta_key} is not marked verified"
        )
        return [
            f"### {plain(label)} runtime evidence",
            "",
            f"No workflow-run evidence was given (no runs or job logs to read), {consequence}.",
        ]
    inputs = run.inputs
    changelog = entries_for(run.bench.changelog(), target.key, inputs.pr_number)
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
    if verification is not None and verification.state not in ("verified", "already"):
        out += ["", f"{meta_key} is not marked verified: {prose(verification.reason)}."]
    return out


# ------------------------------------------------------------------------------ the body


def body(run: AlignRun, outcome: RecipeOutcome, budget: TextBudget = TextBudget()) -> str:
    """The PR body without the metadata line (the service adds its own), neutralised."""
    plan = outcome.plan
    inputs = run.inputs
    recipes = run.recipes
    if not plan.edits:
        return _guide_only_body(run, outcome)
    target = plan.targets[0]
    assert plan.after is not None
    after = render(plan.after, target.profile.request())
    bench_ref = inputs.bench_ref
    points = ", ".join(
        f"{code(t.key)} ({plain(hw_label(recipes, t.profile.hardware))}, "
        f"{plain(t.profile.strategy)}, {plain(t.comparison.launch.arm)} arm)"
        for t in plan.targets
    )
    parts: list[list[str]] = [
        [
            f"Aligns {code(plan.recipe_path)} with the launch line {ref(bench_ref)} ran for "
            f"{points}. Every change below is computed from that launch line, the recipe's "
            "provenance and the rules."
        ]
    ]
    summary = ["### Summary", "", *summary_lines(plan, bench_ref)]
    untouched = _untouched_overrides(after, plan)
    if untouched:
        summary.append(
            "- Everything else is byte-identical, including the hardware-specific "
            + ", ".join(code(u) for u in untouched)
            + f" that {plain(target.profile.label)} draws from."
        )
    summary += hunk_lines(plan)
    for verification in plan.verifications:
        if verification.state not in ("verified", "already"):
            summary.append(
                f"- Not marked verified on {plain(hw_label(recipes, verification.hardware))}: "
                f"{prose(verification.reason)}."
            )
    parts.append(summary)
    parts.append(guide_section(outcome, inputs.rules.policy.guide_sections))
    change = next(k for k in run.keys if k.key.key == target.key).key
    head = f" (head {code(inputs.head_sha)})" if inputs.head_sha else ""
    parts.append(
        [
            f"Corresponding benchmark change: {ref(bench_ref)}{head}. {code(target.key)} "
            f"is affected: {prose('; '.join(change.reasons))}."
        ]
    )
    if inputs.recipes_sha:
        where = f"{md.text(inputs.recipes_repo)} " if inputs.recipes_repo else ""
        parts.append([f"Branched from {where}at {code(inputs.recipes_sha)}."])
    parts.append(_defaults_section(plan, bench_ref))
    parts.append(settings_lines(plan, budget.listed))
    parts.append(_validation(outcome.matrix, outcome.patch, plan, after))
    parts.append(
        [
            f"### Generated {plain(hw_label(recipes, target.profile.hardware))} / "
            f"{plain(target.profile.strategy)} / {plain(_features_label(target, recipes))} "
            f"on {code(after.image or '')}",
            "",
            _command_block(after),
        ]
    )
    if outcome.matrix is not None:
        parts.append(_matrix_section(outcome.matrix, budget))
    for item in plan.targets:
        parts.append(_evidence_section(run, plan, item, budget))
    parts.append(_lists_section(plan, budget))
    return neutralize("\n\n".join("\n".join(p) for p in parts if p).rstrip() + "\n")


def _guide_only_body(run: AlignRun, outcome: RecipeOutcome) -> str:
    """A patch that only writes reproduction sections: none of the sweep's points is the
    recipe's profile (another parallelism, synthetic acceptance), so no node moves."""
    inputs = run.inputs
    keys = list(dict.fromkeys(k for p in outcome.guide for k in p.section.keys))
    reasons = sorted(
        {
            f"{code(r.key)} {md.text(r.point.label())} ({md.text(r.arm)}): {prose(r.reason)}"
            for k in run.keys
            for r in k.points
            if r.profile is not None
            and r.profile.recipe_path == outcome.recipe_path
            and r.status in ("context", "other-point")
        }
    )
    parts: list[list[str]] = [
        [
            f"Documents how to reproduce {', '.join(code(k) for k in keys)} of "
            f"{ref(inputs.bench_ref)} in the guide of {code(outcome.recipe_path)}. "
            + (
                "The recipe's own profile already matches the benchmark, "
                if outcome.plan.targets
                else "None of its points is this recipe's profile, "
            )
            + "so no recipe node changes; every line of the section is computed from the "
            "launch lines, the recipe's rendering and the runs."
        ],
        guide_section(outcome, inputs.rules.policy.guide_sections),
    ]
    if reasons:
        shown = reasons[:MAX_LISTED]
        parts.append(
            [
                "<details><summary>Why the points are not the recipe's profile</summary>",
                "",
                *[f"- {r}" for r in shown],
                "",
                "</details>",
            ]
        )
    if inputs.head_sha:
        parts.append([f"Benchmark head {code(inputs.head_sha)}."])
    if inputs.recipes_sha:
        where = f"{md.text(inputs.recipes_repo)} " if inputs.recipes_repo else ""
        parts.append([f"Branched from {where}at {code(inputs.recipes_sha)}."])
    if outcome.matrix is not None:
        matrix = outcome.matrix
        parts.append(
            [
                "### Validation",
                "",
                f"- Regression matrix: {len(matrix.rows)} renderings of this recipe compared "
                f"before and after; {len(matrix.moved)} moved (the patch touches only "
                "`guide`).",
                f"- {whitespace_check(outcome.patch)}",
            ]
        )
    return neutralize("\n\n".join("\n".join(p) for p in parts if p).rstrip() + "\n")


def cap(text: str, limit: int = MAX_BODY) -> str:
    """At most ``limit`` characters, cut with a visible truncation note."""
    return text if len(text) <= limit else truncate(text, limit)


def capped_body(run: AlignRun, outcome: RecipeOutcome, limit: int) -> str:
    """The body under ``limit``: long tables, lists and excerpts collapse first
    (:data:`COMPACT`), and only then is the text cut with a note."""
    text = body(run, outcome)
    if len(text) > limit:
        text = body(run, outcome, COMPACT)
    return cap(text, limit)


def pull_request_text(
    run: AlignRun, outcome: RecipeOutcome, limit: int = MAX_BODY
) -> PullRequestText | None:
    """Title, body and metadata line of an outcome with a patch (None without one)."""
    if outcome.status != "patch":
        return None
    inputs = run.inputs
    meta = meta_comment(
        {
            "v": 1,
            "source": f"{inputs.bench_ref}@{inputs.head_sha}"
            if inputs.head_sha
            else inputs.bench_ref,
            "target": outcome.recipe_path,
            "fingerprint": outcome.fingerprint,
        }
    )
    return PullRequestText(
        title=title(outcome.plan, run.recipes, inputs.bench_repo, inputs.pr_number, outcome),
        body=capped_body(run, outcome, limit - len(meta) - 1),
        meta=meta,
    )
