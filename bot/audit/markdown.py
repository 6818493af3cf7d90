"""The audit as Markdown, grouped the way the HTML dashboard is (:mod:`bot.audit.groups`):
the counts, one table line per recipe file with the flags that drift most, then per recipe
one line per distinct difference set (the points it covers listed on the line), folded in
``<details>``. Reasons and links are in the HTML report.

``limit`` keeps the text under a length (the dashboard issue: GitHub refuses bodies over
65,536 characters): recipes stop at a recipe boundary and a note says how many were left out.
``safe`` neutralises text from the benchmark repository (mentions, closing keywords, HTML
comment markers) for posting on GitHub.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.audit.actions import fix_for, pr_label, pr_url, start_here
from bot.audit.groups import Entry, KeyGroup, RecipeGroup, group_report
from bot.audit.model import STATUSES, AuditReport, Introduced
from bot.markdown import inline, neutralize, no_markers

TITLE = "recipe-sync drift audit"
MAX_VALUE = 100  # characters of a flag value shown in a cell
KEYS_SHOWN = 8  # out-of-scope keys named per framework (the JSON lists them all)
STATUS_ORDER = ("drifted", "unresolved", "unmapped", "aligned")


def _n(count: int, one: str, many: str = "") -> str:
    return f"{count} {one if count == 1 else many or one + 's'}"


def _short(text: str, limit: int = MAX_VALUE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Cells:
    """Escapes cell text; neutralises untrusted text when posting on GitHub."""

    def __init__(self, safe: bool) -> None:
        self.safe = safe

    def text(self, value: str, *, table: bool = True) -> str:
        value = value.replace("\r", " ").replace("\n", " ")
        if self.safe:
            value = neutralize(value)
        return value.replace("|", "\\|") if table else value

    def code(self, value: str, *, table: bool = True) -> str:
        """A code span; in a table cell a ``|`` is escaped (GitHub splits cells first)."""
        value = _short(value)
        if self.safe:
            value = no_markers(value)
        if not value:
            return "—"
        span = inline(value)
        return span.replace("|", "\\|") if table else span

    def command(self, value: str) -> str:
        """A whole command as one code span (never shortened: it is copied and run)."""
        return inline(no_markers(value) if self.safe else value)


ENTRY_FLAGS = 6  # differences named per entry line (the HTML report has them all)
Extra = Callable[[RecipeGroup], list[str]]


def _pr(report: AuditReport, intro: Introduced) -> str:
    url = pr_url(report, intro)
    return f"[{pr_label(intro)}]({url})" if url else pr_label(intro)


def _entry_lines(cells: _Cells, key: KeyGroup, entry: Entry, report: AuditReport) -> list[str]:
    """One list line (not a table: a ``|`` in a value needs no escape here); a drifted entry
    adds what to do: the PRs that introduced it and the command that fixes it."""
    row = entry.first
    lines = len(entry.rows)

    def code(value: str) -> str:
        return cells.code(value, table=False) if value else "(omitted)"

    head = (
        f"- {code(key.config_key)} {cells.text(key.hardware, table=False)} · "
        f"{_n(lines, 'launch line')} ({cells.text(entry.points_text(), table=False)}): "
    )
    if row.status != "drifted":
        reason = cells.text(_short(row.reason, 240), table=False) if row.reason else ""
        return [head + f"**{row.status}**" + (f": {reason}" if reason else "")]
    shown = [
        f"{code(f.flag)} {code(f.bench)} → {code(f.recipe)}"
        + (f" ({_pr(report, f.introduced)})" if f.introduced is not None else "")
        for f in row.flags
        if f.drift
    ]
    more = len(shown) - ENTRY_FLAGS
    text = "; ".join(shown[:ENTRY_FLAGS]) + (f"; … {more} more" if more > 0 else "")
    out = [head + f"**drifted ({row.drift_count})**: benchmark → recipe: {text}"]
    fix = fix_for(report, key.config_key, row.flags)
    if fix.introduced:
        out.append(
            "  - introduced by "
            + ", ".join(dict.fromkeys(_pr(report, intro) for intro in fix.introduced))
        )
    if fix.command:
        out.append(f"  - fix: {cells.command(fix.command)}")
    if fix.recipe_only:
        out.append(
            "  - only the recipe sets "
            + ", ".join(code(flag) for flag in fix.recipe_only)
            + " (no benchmark PR introduced it): drop it from the recipe, or ignore it above"
        )
    return out


def _recipe_cell(cells: _Cells, group: RecipeGroup) -> str:
    return cells.code(group.recipe) if group.has_recipe else cells.text(group.recipe)


def _start_here(report: AuditReport, groups: Sequence[RecipeGroup], cells: _Cells) -> list[str]:
    """The drifted entry with the most impact and its fix command, on top of the report."""
    found = start_here(report, groups)
    if found is None:
        return []
    lines = len(found.entry.rows)
    flags = ", ".join(cells.code(f, table=False) for f in found.flags)
    text = (
        f"**Start here**: {cells.code(found.key.config_key, table=False)} "
        f"({cells.text(found.key.hardware, table=False)}): "
        f"{_n(len(found.flags), 'flag')} drift on {_n(lines, 'launch line')} ({flags})"
    )
    if found.fix.command:
        text += f"; fix: {cells.command(found.fix.command)}"
    return ["", text + "."]


def _drift_lines(report: AuditReport, cells: _Cells) -> list[str]:
    """Recipes with drift, serving drift first; then what is not drift and what to classify."""
    lines = ["## Recipes with drift", ""]
    recipes = report.drift_by_recipe()
    if not recipes:
        lines.append("No recipe drifts from a compared launch line.")
    for entry in recipes:
        classes = "; ".join(
            f"{knob}: {', '.join(cells.code(f) for f in flags)}"
            for knob, flags in sorted(entry["classes"].items())
        )
        lines.append(f"- {cells.code(entry['recipe'])}: {entry['rows']} launch lines · {classes}")
    lines.append("")
    lines += _not_counted(report, cells)
    if report.to_classify():
        lines += [
            "Rules to classify (counted as drift until rules/knobs.yaml says what they are): "
            + ", ".join(cells.code(f) for f in report.to_classify()),
            "",
        ]
    return lines


def _not_counted(report: AuditReport, cells: _Cells) -> list[str]:
    """What differs but is not drift, folded: it is never read as something to fix."""
    settings = report.benchmark_settings()
    features = report.recipe_features()
    if not settings and not features:
        return []
    kinds = [_n(sum(len(v) for v in settings.values()), "benchmark setting")] if settings else []
    kinds += [_n(len(features), "recipe feature")] if features else []
    lines = [f"<details><summary>Not counted: {', '.join(kinds)}</summary>", ""]
    for knob, flags in settings.items():
        lines.append(f"- {knob} (benchmark setting): {', '.join(cells.code(f) for f in flags)}")
    if features:
        lines.append(
            "- recipe features for chat clients the benchmark does not use: "
            + ", ".join(cells.code(f) for f in features)
        )
    return [*lines, "", "</details>", ""]


def recipe_table(cells: _Cells, groups: Sequence[RecipeGroup]) -> list[str]:
    """One line per recipe file: counts and the flags that drift in the most config keys."""
    lines = [
        "| recipe | " + " | ".join(STATUS_ORDER) + " | most differing flags (config keys) |",
        "|---|" + "---:|" * len(STATUS_ORDER) + "---|",
    ]
    for group in groups:
        counts = group.counts()
        top = ", ".join(f"{cells.code(flag)} ({n})" for flag, n in group.top_flags())
        lines.append(
            f"| {_recipe_cell(cells, group)} | "
            + " | ".join(str(counts[s]) for s in STATUS_ORDER)
            + f" | {top or '—'} |"
        )
    return lines


GUIDE_SHOWN = 40


def _guide_lines(report: AuditReport, cells: _Cells) -> list[str]:
    """Copy-paste ``vllm serve`` commands of recipe guides that differ from the launch line
    of the profile they document (hardware in the heading, same parallelism)."""
    counts = report.guide_commands()
    if not counts["compared"]:
        return []
    lines = [
        "### Guide commands",
        "",
        f"{counts['compared']} guide commands compared with a launch line; "
        f"{counts['drifted']} drifted, {counts['drifted_citing_benchmark']} of them in "
        "hand-written sections that cite the benchmark.",
        "",
    ]
    drifted = report.drifted_guide_commands()
    if drifted:
        lines += [
            "| recipe line | section | compared with | differences |",
            "|---|---|---|---|",
        ]
        for row, guide in drifted[:GUIDE_SHOWN]:
            diffs = "<br>".join(
                f"{cells.code(f.flag)}: {cells.code(f.bench)} (benchmark) vs "
                f"{cells.code(f.recipe)} (guide)"
                for f in guide.drift
            )
            where = cells.code(f"{guide.recipe}:{guide.line}")
            cites = " (cites the benchmark)" if guide.cites_benchmark else ""
            lines.append(
                f"| {where} | {cells.text(guide.heading)}{cites} | "
                f"{cells.code(row.config_key)} {cells.text(row.point_label)} {row.arm} | "
                f"{diffs} |"
            )
        if len(drifted) > GUIDE_SHOWN:
            lines.append(f"… {len(drifted) - GUIDE_SHOWN} more in the JSON and HTML outputs.")
        lines.append("")
    return lines


def render_markdown(
    report: AuditReport,
    *,
    limit: int | None = None,
    safe: bool = False,
    details_url: str = "",
    extra: Extra | None = None,
) -> str:
    """The grouped audit: one table line per recipe, then per recipe its entries.

    Sized by design: a line per distinct difference set (not per launch line), values cut at
    100 characters, at most six flags per line. ``limit`` stops at a recipe boundary and says
    how many recipes were left out; ``extra(group)`` adds lines under a recipe's heading
    (the dashboard issue's checkboxes).
    """
    cells = _Cells(safe)
    groups = group_report(report)
    counts = report.by_status()
    scope = report.out_of_scope_by_framework()
    out = [
        f"# {TITLE}",
        "",
        f"Benchmark repository {cells.code(report.bench_label)} · "
        f"recipes repository {cells.code(report.recipes_label or '(does not load)')}",
        "",
        f"**{len(report.rows)} launch lines** of **{report.keys_audited} vLLM config keys**: "
        + " · ".join(f"{counts[s]} {s}" for s in STATUSES)
        + ".",
        *_start_here(report, groups, cells),
        "",
        *_drift_lines(report, cells),
    ]
    if scope:
        out += [
            "",
            f"{_n(len(report.out_of_scope), 'config key')} out of scope: "
            + ", ".join(f"{cells.text(g)} {n}" for g, n in scope.items())
            + " (listed at the end).",
        ]
    if details_url:
        out += [
            "",
            f"Every difference with its reason and links: [the full report]({details_url}).",
        ]
    out += _guide_lines(report, cells)
    if report.internal_errors:
        out += [
            "",
            f"**{report.internal_errors} launch lines hit an internal error** (status "
            "`unresolved (internal error: …)`, traceback in the log).",
        ]
    if report.warnings:
        out += ["", "Warnings:", ""] + [f"- {cells.text(w)}" for w in report.warnings]
    out += ["", "## Recipes", "", *recipe_table(cells, groups), ""]
    tail = _out_of_scope_lines(report, cells)
    size = sum(len(line) + 1 for line in out) + sum(len(line) + 1 for line in tail)
    budget = None if limit is None else limit - 300  # room for the note on what was cut
    left: list[str] = []
    for group in groups:
        block = _group_block(cells, group, extra, report)
        block_size = sum(len(line) + 1 for line in block)
        if left or (budget is not None and size + block_size > budget):
            left.append(group.recipe)
            continue
        out += block
        size += block_size
    if left:
        where = (
            f"[the full report]({details_url})"
            if details_url
            else ("`recipe-sync audit --format html`")
        )
        out += [
            f"… the details of {len(left)} more recipes are not shown (length limit); see {where}.",
            "",
        ]
    out += tail
    text = "\n".join(out).rstrip("\n") + "\n"
    if limit is not None and len(text) > limit:  # a pathological summary: cut hard, say so
        note = "\n… truncated (length limit).\n"
        text = text[: limit - len(note)] + note
    return text


def _group_block(
    cells: _Cells, group: RecipeGroup, extra: Extra | None, report: AuditReport
) -> list[str]:
    entries = group.entries()
    lines = [f"### {_recipe_cell(cells, group)}", ""]
    if extra is not None:
        added = extra(group)
        if added:
            lines += [*added, ""]
    lines += [
        f"<details><summary>{_n(len(entries), 'entry', 'entries')} "
        f"({_n(len(group.rows), 'launch line')})</summary>",
        "",
    ]
    for profile in group.profiles:
        if profile.profile:
            lines.append(f"**{cells.text(profile.profile)}**")
            lines.append("")
        for key in profile.keys:
            for entry in key.entries:
                lines += _entry_lines(cells, key, entry, report)
        lines.append("")
    return [*lines, "</details>", ""]


def _out_of_scope_lines(report: AuditReport, cells: _Cells) -> list[str]:
    scope = report.out_of_scope_by_framework()
    if not scope:
        return []
    reasons = report.out_of_scope_reasons()
    keys = report.out_of_scope_keys()
    lines = [
        "## Out of scope",
        "",
        f"<details><summary>{len(report.out_of_scope)} config keys</summary>",
        "",
        "| framework | config keys | reason | keys |",
        "|---|---:|---|---|",
    ]
    for group, count in scope.items():
        names = ", ".join(cells.code(k) for k in keys[group][:KEYS_SHOWN])
        if count > KEYS_SHOWN:
            names += f", … {count - KEYS_SHOWN} more"
        lines.append(f"| {cells.text(group)} | {count} | {cells.text(reasons[group])} | {names} |")
    return [*lines, "", "</details>", ""]
