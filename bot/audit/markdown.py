"""The audit as Markdown: summary counts first, then one table row per launch line, grouped by
status (drifted, unresolved, unmapped, aligned), so a cut for length loses aligned rows first.

``limit`` keeps the text under a length (the dashboard issue: GitHub refuses bodies over
65,536 characters): rows stop at a row boundary and a note says how many were left out.
``safe`` neutralises text from the benchmark repository (mentions, closing keywords, HTML
comment markers) for posting on GitHub.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from bot.audit.model import STATUSES, AuditReport, AuditRow, FlagRow
from bot.github.sanitize import inline, neutralize

TITLE = "recipe-sync drift audit"
MAX_VALUE = 100  # characters of a flag value shown in a cell
KEYS_SHOWN = 8  # out-of-scope keys named per framework (the JSON lists them all)
SECTIONS = (
    ("drifted", "Drifted", "the recipe renders something else than this launch line"),
    ("unresolved", "Unresolved", "the launch line is not statically known"),
    ("unmapped", "Unmapped", "no recipe rendering corresponds to this launch line"),
    ("aligned", "Aligned", "the recipe renders this launch line"),
)
HEADER = (
    "| config key | tp | ep | dp-attn | conc | scenario | isl/osl | spec | arm "
    "| recipe profile | status | differing flags | notes |"
)
RULE = "|" + "---|" * 13


def _short(text: str, limit: int = MAX_VALUE) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Cells:
    """Escapes cell text; neutralises untrusted text when posting on GitHub."""

    def __init__(self, safe: bool) -> None:
        self.safe = safe

    def text(self, value: str) -> str:
        value = value.replace("\r", " ").replace("\n", " ")
        if self.safe:
            value = neutralize(value)
        return value.replace("|", "\\|")

    def code(self, value: str) -> str:
        value = _short(value)
        if self.safe:
            value = value.replace("<!--", "<!-\u200b-")
        return inline(value).replace("|", "\\|") if value else "—"


def _flag(cells: _Cells, flag: FlagRow) -> str:
    if flag.benchmark_setting:
        verdict = f"benchmark setting ({flag.knob}), not counted"
    else:
        verdict = flag.verdict if flag.drift else f"{flag.verdict}, not counted"
    return (
        f"{cells.code(flag.flag)}: {cells.code(flag.bench)} (benchmark) vs "
        f"{cells.code(flag.recipe)} (recipe), {verdict}"
    )


def row_line(cells: _Cells, row: AuditRow) -> str:
    p = row.point_fields()
    notes = list(row.notes)
    parts = [
        cells.code(row.config_key),
        p["tp"],
        p["ep"],
        p["dp-attn"],
        p["conc"],
        p["scenario"],
        p["isl-osl"],
        p["spec"],
        row.arm,
        cells.text(row.profile) or "—",
        cells.text(row.status_text),
        "<br>".join(_flag(cells, f) for f in row.flags) or "—",
        cells.text("; ".join(notes)) or "",
    ]
    return "| " + " | ".join(parts) + " |"


def _counts_table(
    title: str, groups: Mapping[str, Mapping[str, int]], label: Callable[[str], str]
) -> list[str]:
    lines = [f"### {title}", "", f"| {title.split()[-1]} | " + " | ".join(STATUSES) + " | total |"]
    lines.append("|---|" + "---:|" * (len(STATUSES) + 1))
    for name, counts in groups.items():
        total = sum(counts.values())
        cells = " | ".join(str(counts.get(s, 0)) for s in STATUSES)
        lines.append(f"| {label(name)} | {cells} | {total} |")
    return [*lines, ""]


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
    settings = report.benchmark_settings()
    if settings:
        lines.append(
            "Benchmark settings (not drift): "
            + "; ".join(f"{k}: {', '.join(cells.code(f) for f in v)}" for k, v in settings.items())
        )
        lines.append("")
    if report.to_classify():
        lines += [
            "Rules to classify (counted as drift until rules/knobs.yaml says what they are): "
            + ", ".join(cells.code(f) for f in report.to_classify()),
            "",
        ]
    return lines


def summary_lines(report: AuditReport, cells: _Cells) -> list[str]:
    counts = report.by_status()
    lines = [
        f"# {TITLE}",
        "",
        f"Benchmark repository {cells.code(report.bench_label)} · "
        f"recipes repository {cells.code(report.recipes_label or '(does not load)')}",
        "",
        f"**{len(report.rows)} launch lines** of **{report.keys_audited} vLLM config keys**: "
        + " · ".join(f"{counts[s]} {s}" for s in STATUSES)
        + ".",
        "",
        *_drift_lines(report, cells),
        "## Summary",
        "",
        "### By status",
        "",
        "| status | launch lines |",
        "|---|---:|",
        *(f"| {s} | {counts[s]} |" for s in STATUSES),
        "",
    ]
    lines += _counts_table("By hardware", report.by_hardware(), cells.text)
    lines += _counts_table("By model", report.by_model(), cells.code)
    lines += ["### Out of scope", ""]
    scope = report.out_of_scope_by_framework()
    if scope:
        reasons = report.out_of_scope_reasons()
        keys = report.out_of_scope_keys()
        lines += ["| framework | config keys | reason | keys |", "|---|---:|---|---|"]
        for group, count in scope.items():
            names = ", ".join(cells.code(k) for k in keys[group][:KEYS_SHOWN])
            if count > KEYS_SHOWN:
                names += f", … {count - KEYS_SHOWN} more"
            lines.append(
                f"| {cells.text(group)} | {count} | {cells.text(reasons[group])} | {names} |"
            )
    else:
        lines.append("Every config key is a single-node vLLM configuration.")
    lines.append("")
    lines += _guide_lines(report, cells)
    if report.internal_errors:
        lines += [
            f"**{report.internal_errors} launch lines hit an internal error** (status "
            "`unresolved (internal error: …)`, traceback in the log).",
            "",
        ]
    if report.warnings:
        lines += ["### Warnings", ""]
        lines += [f"- {cells.text(w)}" for w in report.warnings]
        lines.append("")
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


def render_markdown(report: AuditReport, *, limit: int | None = None, safe: bool = False) -> str:
    cells = _Cells(safe)
    out = summary_lines(report, cells)
    size = sum(len(line) + 1 for line in out)
    # room for the note that says how many rows were left out
    budget = None if limit is None else limit - 200
    shown = 0
    stopped = False
    for status, title, meaning in SECTIONS:
        rows = [row for row in report.rows if row.status == status]
        if not rows:
            continue
        head = [f"## {title} ({len(rows)})", "", f"_{meaning}_", "", HEADER, RULE]
        head_size = sum(len(line) + 1 for line in head)
        if stopped or (budget is not None and size + head_size > budget):
            stopped = True
            break
        out += head
        size += head_size
        for row in rows:
            line = row_line(cells, row)
            if budget is not None and size + len(line) + 1 > budget:
                stopped = True
                break
            out.append(line)
            size += len(line) + 1
            shown += 1
        out.append("")
        size += 1
        if stopped:
            break
    if stopped:
        left = len(report.rows) - shown
        out.append(
            f"… {left} more launch lines are not shown (length limit); run "
            "`recipe-sync audit` for the full report."
        )
    text = "\n".join(out).rstrip("\n") + "\n"
    if limit is not None and len(text) > limit:  # a pathological summary: cut hard, say so
        note = "\n… truncated (length limit).\n"
        text = text[: limit - len(note)] + note
    return text
