"""The comment's table of compared points: each key's points grouped by arm, profile and
status, with what happened to the recipe they stand for."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

from bot import markdown as md
from bot.align.result import AlignRun, KeyResult, PointResult, RecipeOutcome
from bot.present.pr_text import pr_contents
from bot.present.sections.changes import edit_for
from bot.present.sections.common import code, details, plain
from bot.words import count

STATUS_TEXT = {
    "patch": "alignment PR proposed",
    "aligned": "already aligned",
    "blocked": "blocked",
    "failed": "no edit proposed",
    "offered": "candidates offered, none proposed",
}
ERROR_STATUSES = ("error",)


def _point_label(results: Sequence[PointResult]) -> str:
    """The points' labels with their concurrencies joined: ``tp=4,…,conc=1/2/5``; points
    that differ in anything else (TP, sequence lengths) keep their own labels, ``; ``-joined."""
    concs: dict[str, list[str]] = {}
    for result in results:
        label = result.point.label()
        concs.setdefault(_CONC.sub("conc=*", label, count=1), []).append(str(result.point.conc))
    return "; ".join(
        shape.replace("conc=*", "conc=" + "/".join(dict.fromkeys(found)), 1)
        for shape, found in concs.items()
    )


_CONC = re.compile(r"conc=\d+")


def _outcome_for(run: AlignRun, result: PointResult) -> RecipeOutcome | None:
    if result.profile is None:
        return None
    return next((o for o in run.outcomes if o.recipe_path == result.profile.recipe_path), None)


def _status(run: AlignRun, result: PointResult) -> str:
    if result.status == "represents":
        return _outcome_status(run, result)
    names = {"context": "context", "other-point": "other point", "unmapped": "not mapped"}
    if _stands_in(run, result):
        # no point at the recipe's parallelism (or with real acceptance) ran the profile:
        # this one stands for it (bot/align/targets.py), so its row carries the outcome
        if result.status == "context":  # a synthetic-acceptance arm: all but its acceptance
            why = (
                "throughput arm with synthetic acceptance, standing in for the profile "
                "(its acceptance settings are not compared)"
            )
        else:
            why = f"other point, standing in for the profile ({result.reason})"
        return f"{why}; {_outcome_status(run, result)}"
    return f"{names.get(result.status, result.status)}: {result.reason}"


def _stands_in(run: AlignRun, result: PointResult) -> bool:
    """Is ``result``, which does not represent its profile, one a plan's target stands on?"""
    found = _outcome_for(run, result)
    if found is None or result.comparison is None:
        return False
    return any(
        any(c is result.comparison for c in target.representatives) for target in found.plan.targets
    )


def _outcome_status(run: AlignRun, result: PointResult) -> str:
    """What happened to the recipe a point stands for, with its differences."""
    found = _outcome_for(run, result)
    if found is None:
        return "compared"
    drift = len(result.drift)
    differences = f"{count(drift, 'difference')}: " if drift else ""
    if found.status == "patch":
        # what the PR holds in pr_contents' words (the CLI's and the comment's), and how
        # many of this point's differences it edits: the table's rows say which
        edited = sum(1 for diff in result.drift if edit_for(found.plan, diff) is not None)
        differences = f"{count(drift, 'difference')}, {edited} edited: " if drift else ""
        return f"{differences}alignment PR with {pr_contents(found)}"
    # why: once, in the recipe's own section below (a block reason named in every row
    # made #1970's comment 60 KB, past what GitHub takes)
    extra = " (why below)" if found.status in ("blocked", "failed") and found.reason else ""
    return f"{differences}{STATUS_TEXT[found.status]}{extra}"


# other frameworks' keys a comment names in its table; more go in one folded list (a
# harness-wide PR such as InferenceX #2323 touched 77 SGLang, TensorRT-LLM and ATOM keys)
OTHER_FRAMEWORKS_IN_TABLE = 3
# rows a comment shows open; more are folded, the recipes' sections below carry the outcome
# (#2323: 118 rows for a PR that needed nothing; #1571: 149 keys)
ROWS_OPEN = 12
# rows a comment shows at all; the recipes' sections below carry every outcome
ROWS_SHOWN = 100


def _other_framework(key: KeyResult) -> bool:
    return key.key.out_of_scope is not None and key.problem == key.key.out_of_scope


def points_section(run: AlignRun) -> list[str]:
    """The table of compared points; a long list of other frameworks' keys and a long table
    folded: the benchmark author reads the outcome first, in each recipe's section below
    (:data:`OTHER_FRAMEWORKS_IN_TABLE`, :data:`ROWS_OPEN`)."""
    others = [k for k in run.keys if _other_framework(k)]
    folded = others if len(others) > OTHER_FRAMEWORKS_IN_TABLE else []
    # the comment's opening counts them; a row each said the same of 37 keys in #1970
    same = set(run.change.unchanged)
    unchanged = [k for k in run.keys if k.key in same]
    table = points_table(run, skip={id(k) for k in (*folded, *unchanged)})
    out: list[str] = []
    rows = len(table) - 2
    if rows > ROWS_SHOWN:  # #2263: 216 rows, 49 KB of a comment GitHub cuts at 64 KB
        hidden = rows - ROWS_SHOWN
        table = table[: 2 + ROWS_SHOWN]
        table.append(
            f"| … | | | | {count(hidden, 'more row')} not shown: `recipe-sync align` of this PR "
            "lists every point in plan.json |"
        )
    if rows > ROWS_OPEN:
        keys = len(run.keys) - len(folded) - len(unchanged)
        out += details(f"Launch lines compared: {count(keys, 'key')}, {rows} rows", table)
    elif rows:
        out += table
    if unchanged:
        names = ", ".join(code(k.key.key) for k in unchanged)
        out += [
            "",
            *details(f"{count(len(unchanged), 'key')} whose launch lines did not change", [names]),
        ]
    if folded:
        by = Counter(k.key.framework or "?" for k in folded)
        names = ", ".join(f"{name} {n}" for name, n in by.most_common())
        # one line per reason (the framework's), its keys named: #2263 listed 142 keys with
        # the same few reasons each, and its comment was cut at GitHub's size limit
        by_reason: dict[str, list[str]] = {}
        for k in folded:
            by_reason.setdefault(k.problem or "", []).append(code(k.key.key))
        items = [f"- {md.text(why)}: {', '.join(keys)}" for why, keys in by_reason.items()]
        summary = (
            f"{count(len(folded), 'key')} of other frameworks ({names}): not rendered by vLLM "
            "recipes"
        )
        out += ["", *details(summary, items)]
    return out


def points_table(run: AlignRun, skip: Collection[int] = ()) -> list[str]:
    rows = ["| Config key | Arm | Points | Recipe profile | Status |", "|---|---|---|---|---|"]
    for key in run.keys:
        if id(key) in skip:
            continue
        if key.problem is not None:
            rows.append(f"| {code(key.key.key)} | | | | {md.text(key.problem)} |")
            continue
        groups: dict[tuple[str, str, str], list[PointResult]] = {}
        for result in key.points:
            label = result.profile.label if result.profile is not None else ""
            groups.setdefault((result.arm, label, _status(run, result)), []).append(result)
        for (arm, label, status), results in groups.items():
            rows.append(
                f"| {code(key.key.key)} | {arm} | {md.text(_point_label(results))} | "
                f"{plain(label) or '—'} | {md.text(status)} |"
            )
    return rows
