"""What the HTML pages of recipe-sync share (the audit dashboard, the backtest report): one
style sheet, the status colours and the drift-over-time chart, all inline (no network, no
script from elsewhere)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from html import escape

COLORS: Mapping[str, str] = {
    "aligned": "#2da44e",
    "drifted": "#cf222e",
    "unmapped": "#bf8700",
    "unresolved": "#8250df",
}
OTHER_COLOR = "#afb8c1"


@dataclass(frozen=True)
class HistoryPoint:
    """One merged benchmark PR of a backtest: its day and outcome (``alignment PR`` = drift)."""

    day: str  # YYYY-MM-DD
    outcome: str


CSS = """
:root { color-scheme: light; --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); margin: 0; padding: 20px 28px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 24px 0 8px; }
a { color: #0969da; text-decoration: none; } a:hover { text-decoration: underline; }
.sub { color: var(--muted); margin: 0 0 14px; overflow-wrap: anywhere; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin-bottom: 14px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; min-width: 120px; }
.card b { display: block; font-size: 22px; }
.card.aligned b { color: #2da44e; } .card.drifted b { color: #cf222e; }
.card.unmapped b { color: #bf8700; } .card.unresolved b { color: #8250df; }
.charts { display: flex; gap: 28px; flex-wrap: wrap; align-items: flex-start; }
.charts > div { max-width: 100%; overflow: hidden; }
table { border-collapse: collapse; }
#rows { width: 100%; table-layout: fixed; font-size: 13px; }
#rows col.where { width: 27%; } #rows col.state { width: 13%; } #rows col.why { width: 60%; }
#rows td, #rows th { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left;
  vertical-align: top; overflow-wrap: anywhere; }
#rows tr.recipe th { background: #f6f8fa; font-size: 14px; padding-top: 10px;
  border-top: 2px solid var(--line); }
#rows tr.profile th { font-weight: 600; color: var(--muted); padding-left: 16px; }
.status { font-weight: 600; }
.status.aligned { color: #2da44e; } .status.drifted { color: #cf222e; }
.status.unmapped { color: #9a6700; } .status.unresolved { color: #8250df; }
.badge { display: inline-block; border-radius: 10px; padding: 0 7px; margin-right: 4px;
  font-size: 12px; font-weight: 600; color: #fff; }
code { font: 12px ui-monospace, SFMono-Regular, monospace; background: #f6f8fa;
  padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
.key { font-family: ui-monospace, monospace; font-size: 12px; }
.points { color: var(--muted); font-size: 12px; }
.diff { margin: 0 0 6px; } .diff.uncounted { opacity: .7; }
.why { color: var(--muted); font-size: 12px; }
.at { font-size: 11px; margin-left: 6px; }
.cat { display: inline-block; width: 9px; height: 9px; border-radius: 2px; margin-right: 4px; }
.notes { color: var(--muted); font-size: 12px; }
.filters { display: flex; gap: 12px; flex-wrap: wrap; align-items: center; margin: 8px 0; }
.filters label { color: var(--muted); }
#shown { color: var(--muted); }
.warn { border-left: 4px solid #bf8700; padding: 4px 12px; background: #fff8c5; }
.start { border-left: 4px solid #cf222e; padding: 6px 12px; background: #fff5f5;
  margin: 0 0 14px; }
.start code.cmd { display: block; margin-top: 4px; user-select: all; white-space: pre-wrap; }
details#out-of-scope { margin-top: 28px; } details summary { cursor: pointer; }
details table td { border-bottom: 1px solid var(--line); padding: 4px 8px; vertical-align: top; }
svg text { font: 12px system-ui, sans-serif; fill: #1f2328; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; max-width: 520px; margin: 6px 0;
  color: var(--muted); font-size: 12px; }
.swatch { display: inline-block; width: 14px; height: 12px; border-radius: 2px;
  vertical-align: -2px; }
details.uncounted { margin: 2px 0 6px; font-size: 12px; }
details.uncounted > summary { color: var(--muted); }
.fix { margin: 8px 0 2px; padding: 6px 8px; background: #ddf4ff; border-radius: 6px;
  font-size: 12px; }
.fix code.cmd { display: block; margin-top: 4px; user-select: all; white-space: pre-wrap; }
svg .cell { cursor: pointer; }
"""


def e(text: str) -> str:
    """``text`` escaped for HTML text and attribute values."""
    return escape(text, quote=True)


DRIFT_OUTCOMES = ("alignment PR", "blocked")  # a backtest PR that called for a recipe change


def _buckets(days: Sequence[str]) -> tuple[str, Callable[[str], str]]:
    """Days when the history spans a month or less, ISO weeks up to half a year, else months."""
    first, last = date.fromisoformat(min(days)[:10]), date.fromisoformat(max(days)[:10])
    span = (last - first).days
    if span <= 31:
        return "day", lambda day: day[5:10]
    if span <= 183:

        def week(day: str) -> str:
            year, number, _ = date.fromisoformat(day[:10]).isocalendar()
            return f"{year}-W{number:02d}"

        return "week", week
    return "month", lambda day: day[:7]


def history_svg(history: Sequence[HistoryPoint]) -> str:
    """Merged benchmark PRs per day, week or month, by whether they called for a recipe change."""
    unit, bucket = _buckets([p.day for p in history])
    periods: dict[str, list[int]] = {}
    for point in sorted(history, key=lambda p: p.day):
        counts = periods.setdefault(bucket(point.day), [0, 0, 0])
        if point.outcome in DRIFT_OUTCOMES:
            counts[DRIFT_OUTCOMES.index(point.outcome)] += 1
        else:
            counts[2] += 1
    colors = (COLORS["drifted"], "#fb8f44", OTHER_COLOR)
    legend = ("alignment PR", "blocked drift", "no recipe change")
    bar_w, gap, top, left, plot = 34, 8, 26, 30, 150
    width = max(440, left + max(1, len(periods)) * (bar_w + gap) + 10)
    biggest = max((sum(c) for c in periods.values()), default=1) or 1
    height = top + plot + 28
    parts = [
        f"<svg id=history-chart xmlns='http://www.w3.org/2000/svg' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
        f"aria-label='drift over time'><title>Merged benchmark PRs per {unit}</title>"
    ]
    for index, (color, text) in enumerate(zip(colors, legend, strict=True)):
        x = left + index * 140
        parts.append(
            f"<rect x='{x}' y='4' width='11' height='11' fill='{color}'/>"
            f"<text x='{x + 15}' y='14'>{text}</text>"
        )
    for index, (period, counts) in enumerate(periods.items()):
        x = left + index * (bar_w + gap)
        y = float(top + plot)
        marks = []
        for n, color in zip(counts, colors, strict=True):
            h = plot * n / biggest
            y -= h
            marks.append(
                f"<rect x='{x}' y='{y:.1f}' width='{bar_w}' height='{h:.1f}' fill='{color}'/>"
            )
        parts.append(
            f"<g class=period data-period='{period}' data-drift='{counts[0]}' "
            f"data-blocked='{counts[1]}' data-other='{counts[2]}'>{''.join(marks)}"
            f"<text x='{x + bar_w / 2:.0f}' y='{top + plot + 14}' text-anchor='middle'>"
            f"{e(period[-5:])}</text><title>{e(period)}: {counts[0]} alignment PRs, "
            f"{counts[1]} blocked, {counts[2]} without a recipe change</title></g>"
        )
    parts.append("</svg>")
    return "".join(parts)
