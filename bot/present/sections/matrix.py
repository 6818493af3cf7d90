"""Validation and the regression matrix: the builder, the invariants, the whitespace check and
every rendering of the recipe before and after, grouped by outcome."""

from __future__ import annotations

import json
from collections.abc import Sequence

from bot import markdown as md
from bot.align.plan import AlignmentPlan
from bot.align.profile import SYNTHETIC_KEYS
from bot.align.quoted import GeneratedCommand
from bot.align.regression import RegressionMatrix
from bot.present.sections.common import (
    TextBudget,
    code,
    plain,
    prose,
    shorten,
)
from bot.words import count


def moved_summary(matrix: RegressionMatrix) -> str:
    """``12 of 110 renderings moved, all expected``: the matrix's counts in one line, "all
    expected" only when no rendering moved unexpectedly and every expected one moved."""
    line = f"{len(matrix.moved)} of {len(matrix.rows)} renderings moved"
    if not matrix.unexpected and not matrix.ineffective:
        return f"{line}, all expected"
    parts = [f"{len(matrix.unexpected)} unexpectedly"] if matrix.unexpected else []
    if matrix.ineffective:
        parts.append(f"{len(matrix.ineffective)} expected to move but unchanged")
    return f"{line}; {', '.join(parts)}"


def matrix_section(
    matrix: RegressionMatrix,
    budget: TextBudget,
    images: Sequence[str],
    *,
    moved_only: bool = False,
) -> list[str]:
    """The regression matrix's groups (renderings with the same outcome), with the edited
    image tags short (they are in full in the summary). ``moved_only``: the table shows the
    groups that moved or did not do as planned, the unchanged ones fold into ``<details>``
    (a PR body over its word budget)."""
    total = len(matrix.rows)
    api = sum(1 for r in matrix.rows if r.id.api_file is not None)
    moved = len(matrix.moved)
    how = f"{api} from the JSON API"
    if total > api:
        how += f", {total - api} with the benchmarked features"
    verdict = (
        "each only where an edited node applies"
        if not matrix.unexpected
        else "UNEXPECTED: " + prose("; ".join(matrix.unexpected))
    )
    head = ["| Renderings | Result |", "|---|---|"]
    groups = list(matrix.groups)
    shown_rows = budget.table_rows
    if moved_only:
        notable = [g for g in groups if g.moved or g.moved != g.expected]
        groups = notable + [g for g in groups if g not in notable]
        shown_rows = min(shown_rows, len(notable))
    rows = [
        f"| {md.cell(plain(shorten(g.label, images)))} | "
        f"{md.cell(md.prose(shorten(g.result, images)))} |"
        for g in groups
    ]
    out = [
        "### Regression checks",
        "",
        f"Every rendering of this recipe ({how}), before and after: {moved} moved, {verdict}; "
        f"{total - moved} unchanged.",
    ]
    if matrix.ineffective:
        out.append(f"Expected to move but unchanged: {prose('; '.join(matrix.ineffective))}.")
    out += ["", *head, *rows[:shown_rows]] if shown_rows else []
    rest = rows[shown_rows:]
    if rest:
        shown = rest[: budget.detail_rows]
        more = count(len(rest), "unchanged group" if moved_only else "more group")
        out += ["", f"<details><summary>{more}</summary>", ""]
        out += [*head, *shown] if shown else []
        if len(shown) < len(rest):
            out.append(f"{count(len(rest) - len(shown), 'group')} not shown (see plan.json)")
        out += ["", "</details>"]
    return out


def _builder_line(matrix: RegressionMatrix) -> str:
    builder = matrix.builder
    if builder.ran:
        state = "✓" if builder.ok else "✗"
        result = prose(builder.summary or builder.detail)
        return f"- `node scripts/build-recipes-api.mjs`: {state} {result}"
    if builder.summary:
        return (
            f"- Recipes builder {prose(builder.detail)}; recipe-sync's own JSON API build of "
            f"{prose(builder.summary)}."
        )
    return f"- Recipes builder {prose(builder.detail)}."


def validation_section(
    matrix: RegressionMatrix | None, patch: str, plan: AlignmentPlan, after: GeneratedCommand
) -> list[str]:
    out = ["### Validation", ""]
    if matrix is not None:
        out.append(_builder_line(matrix))
    out.append(f"- {_invariant_sentence(after, plan)}")
    out.append(f"- {whitespace_check(patch)}")
    return out


def _invariant_sentence(after: GeneratedCommand, plan: AlignmentPlan) -> str:
    argv = after.argv
    flags = [e.subject for e in plan.edits if e.kind in ("flag", "flag-new")]
    for token in argv:
        if token.startswith("--") and token.endswith("-config") and token not in flags:
            flags.append(token)
    present = [f for f in dict.fromkeys(flags) if f in argv]
    sentence = (
        "Exactly one " + ", one ".join(code(f) for f in present) + " and every other flag once"
        if present
        else "Every flag renders once"
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
    return f"{sentence}; no planned difference is left against the launch line."


def whitespace_check(patch: str) -> str:
    """``git diff --check`` rules on the added lines, and the diffstat."""
    lines = patch.splitlines()
    added = [x[1:] for x in lines if x.startswith("+") and not x.startswith("+++")]
    removed = [x for x in lines if x.startswith("-") and not x.startswith("---")]
    files = sum(1 for x in lines if x.startswith("+++ "))
    problems = [x for x in added if x != x.rstrip(" \t") or "\t" in x[: len(x) - len(x.lstrip())]]
    state = (
        "clean" if not problems else f"{count(len(problems), 'added line')} with whitespace errors"
    )
    which = "One file changed" if files == 1 else f"{files} files changed"
    return (
        f"Whitespace check of the patch (`git diff --check` rules): {state}. "
        f"{which}, +{len(added)}/−{len(removed)}."
    )
