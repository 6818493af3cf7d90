"""The alignment PR's title and body (GitHub-flavoured Markdown), from computed values only.

Every sentence is built from the plan, the regression matrix and the evidence; values that
come from the benchmark PR (flag values, env values, keys, reasons quoting them) are escaped
(:mod:`bot.markdown`) or put in code spans, and the body is neutralised (no hidden
markers, mentions or closing keywords) and capped below GitHub's 65,536-character limit.
The verification comment, the check run and the plan JSON are in :mod:`bot.present.report`.
"""

from __future__ import annotations

from bot import markdown as md
from bot.align.result import AlignRun, RecipeOutcome
from bot.markdown import MAX_BODY, neutralize, truncate, visible_words
from bot.present.carried import settings_lines
from bot.present.guide import guide_section
from bot.present.posted import (
    PullMeta,
    alignment_branch,
    body_room,
    pull_request_footer,
)
from bot.present.sections.command import command_block, features_label
from bot.present.sections.common import (
    COMPACT,
    FULL,
    MAX_LISTED,
    TextBudget,
    code,
    plain,
    prose,
    ref,
    shorten,
)
from bot.present.sections.lists import defaults_section, lists_section, older_drift
from bot.present.sections.matrix import (
    matrix_section,
    validation_section,
    whitespace_check,
)
from bot.present.sections.runtime import evidence_section
from bot.present.sections.summary import (
    intro,
    summary_section,
)
from bot.present.sections.title import title
from bot.present.texts import PullRequestText
from bot.words import count

# visible words of a PR body (issue #35): past it the least useful detail folds
WORD_BUDGET = 800


def body(run: AlignRun, outcome: RecipeOutcome, budget: TextBudget = FULL) -> str:
    """The PR body without the metadata line (the service adds its own), neutralised: the
    summary and what a reviewer checks first; long lists collapsed at the end. Each part is
    one list of lines, so a section is added by appending one."""
    plan = outcome.plan
    inputs = run.inputs
    names = run.names
    if not plan.edits:
        return _guide_only_body(run, outcome)
    target = plan.targets[0]
    after = outcome.after
    assert after is not None  # align() renders it for every patch with node edits
    images = [e.after for e in plan.edits if e.kind == "image" and e.after]
    carried = 2  # the index of the settings not carried, folded first past the word budget
    parts: list[list[str]] = [
        intro(run, plan),
        summary_section(run, outcome, after),
        settings_lines(plan, budget.listed),
        older_drift(plan),
        guide_section(outcome, inputs.rules.policy.guide_sections),
        validation_section(outcome.matrix, outcome.patch, plan, after),
        [
            f"### Generated {plain(names.hw_label(target.profile.hardware))} / "
            f"{plain(target.profile.strategy)} / {plain(features_label(target, names))} "
            f"on {code(shorten(after.image or '', images))}",
            "",
            command_block(after),
        ],
    ]
    matrix = len(parts)
    if outcome.matrix is not None:
        parts.append(matrix_section(outcome.matrix, budget, images))
    # targets of one key on one hardware (single_node_tp and _tep of a sweep) share their
    # evidence: each distinct section once
    evidence = [evidence_section(run, plan, item, budget) for item in plan.targets]
    parts += [section for index, section in enumerate(evidence) if section not in evidence[:index]]
    parts.append(defaults_section(plan))
    parts.append(lists_section(plan, budget))
    # past the word budget the least useful detail folds, first the settings not carried
    # (the verification comment lists them too), then the regression rows where nothing
    # moved; nothing is dropped
    if visible_words(_joined(parts)) > WORD_BUDGET:
        parts[carried] = settings_lines(plan, budget.listed, folded=True)
    if visible_words(_joined(parts)) > WORD_BUDGET and outcome.matrix is not None:
        parts[matrix] = matrix_section(outcome.matrix, budget, images, moved_only=True)
    return neutralize(_joined(parts))


def _joined(parts: list[list[str]]) -> str:
    return "\n\n".join("\n".join(p) for p in parts if p).rstrip() + "\n"


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
                "None of its points is this recipe's profile, "
                if not outcome.plan.targets
                # points of another parallelism are targets whose differences stay out
                else "No difference of its points is carried into the recipe (why below), "
                if reasons
                else "The recipe's own profile already matches the benchmark, "
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


def branch_of(run: AlignRun, recipe_path: str) -> str | None:
    """The alignment branch the App pushes the patch of ``recipe_path`` to (None: no PR)."""
    inputs = run.inputs
    if inputs.pr_number is None:
        return None
    return alignment_branch(
        inputs.rules.policy.branch_prefix,
        inputs.bench_repo or "benchmark",
        inputs.pr_number,
        recipe_path,
    )


def pull_request_text(
    run: AlignRun, outcome: RecipeOutcome, limit: int = MAX_BODY
) -> PullRequestText | None:
    """Title, body, metadata and footer of an outcome with a patch (None without one); the
    whole posted body stays under ``limit``."""
    if outcome.status != "patch":
        return None
    inputs = run.inputs
    meta = PullMeta(
        source=f"{inputs.bench_ref}@{inputs.head_sha}" if inputs.head_sha else inputs.bench_ref,
        target=outcome.recipe_path,
        fingerprint=outcome.fingerprint,
        branch=branch_of(run, outcome.recipe_path),
    )
    footer = pull_request_footer(
        inputs.bench_ref, inputs.head_sha, inputs.rules.policy.comment_command
    )
    return PullRequestText(
        title=title(outcome.plan, run.names, inputs.bench_repo, inputs.pr_number, outcome),
        body=capped_body(run, outcome, body_room(meta, footer, limit)),
        meta=meta,
        footer=footer,
    )


def pr_contents(found: RecipeOutcome) -> str:
    """What an alignment PR holds, in the same words in the CLI's summary and the comment:
    ``3 edits and 1 guide section``; a PR that only adds a guide section says so (its
    differences are documented, not edited)."""
    sections = sum(1 for p in found.guide if p.written)
    guide = count(sections, "guide section")
    if not found.plan.edits:
        return f"no YAML edit, {guide}" if sections else "no YAML edit"
    edits = count(len(found.plan.edits), "edit")
    return f"{edits} and {guide}" if sections else edits
