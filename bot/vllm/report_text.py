"""A semantic diff as an aligned plain-text table (``recipe-sync diff`` without --format
json)."""

from __future__ import annotations

from bot.vllm.diff_report import DiffReport, FlagDiff
from bot.vllm.serve_config import Finding
from bot.vllm.values import compact
from bot.words import count

VALUE_WIDTH = 36


def _cell(diff: FlagDiff, bench: bool) -> str:
    tokens = diff.bench_tokens if bench else diff.recipe_tokens
    value = diff.bench_value if bench else diff.recipe_value
    if not tokens and value is None:
        return "(omitted)"
    text = compact(value)
    return text if len(text) <= VALUE_WIDTH else text[: VALUE_WIDTH - 1] + "…"


def _findings(title: str, findings: tuple[Finding, ...]) -> list[str]:
    if not findings:
        return []
    return [f"{title}:"] + [f"  {f.severity:6} {f.code}: {f.message}" for f in findings]


def render_text(report: DiffReport) -> str:
    """A compact aligned table: verdict, flag, bench, recipe, reason."""
    device = report.device
    where = (
        f"{device.hardware}, {device.memory_gib:g} GiB per GPU, tier {report.tier}"
        if device.hardware and device.memory_gib is not None
        else "unknown (compared on every tier)"
    )
    lines = [
        f"vLLM {report.version.label} ({report.version.source}): {report.version.reason}",
        f"device: {where}; usage context {report.usage_context}",
        *(f"note: {n}" for n in (*report.version.notes, *report.notes)),
        "",
    ]
    rows = [("VERDICT", "FLAG", "BENCH", "RECIPE", "REASON")]
    rows += [
        (d.verdict.value, d.flag, _cell(d, True), _cell(d, False), d.reason) for d in report.diffs
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        lines.append(
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4]
        )
    lines.append("")
    lines += _findings("benchmark findings", report.bench_findings)
    lines += _findings("recipe findings", report.recipe_findings)
    mismatches = report.mismatches
    lines.append(
        f"{count(len(mismatches), 'serving-configuration difference')}, "
        f"{len(report.benchmark_only)} benchmark-only; identical: "
        f"{'yes' if report.identical else 'no'}"
    )
    return "\n".join(lines)
