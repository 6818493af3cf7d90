"""A backtest report as Markdown, JSON or one self-contained HTML page (deterministic)."""

from __future__ import annotations

import html
import json
from typing import Any

from bot.backtest.model import BacktestReport, PRRow


def to_json(report: BacktestReport) -> str:
    data: dict[str, Any] = {
        "version": 1,
        "bench": report.bench,
        "recipes": report.recipes,
        "summary": report.summary(),
        "counts": report.counts(),
        "volume": report.volume.to_json(),
        "prs": [row.to_json() for row in report.rows],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _edits_md(row: PRRow) -> list[str]:
    lines = [f"  - `{e.recipe}` {e.kind}: `{e.node}` = `{e.after}`" for e in row.edits]
    lines += [f"  - offered: `{e.recipe}` {e.kind}: `{e.node}` = `{e.after}`" for e in row.offered]
    sections = row.sections_written
    if row.opens_pr:
        written = ", ".join(f"`{g.recipe}` {g.block} ({g.lines} lines)" for g in sections)
        lines.append(
            f"  - adds {row.added_lines} lines"
            + (f"; reproduction sections: {written}" if written else "")
        )
    lines += [f"  - note: {_cell(n)}" for n in row.notes]
    for m in row.maintainers:
        lines.append(
            f"  - maintainers ({m.commit[:10]}): `{m.recipe}` `{m.node}`: "
            f"`{m.before}` → `{m.after}` ({m.match})"
        )
    return lines


def to_markdown(report: BacktestReport) -> str:
    lines = [
        "# recipe-sync backtest",
        "",
        f"- benchmark: `{report.bench}`",
        f"- recipes: `{report.recipes}`",
        f"- {report.summary()}",
        "",
        "| PR | merged | recipes | outcome | reason |",
        "|---|---|---|---|---|",
    ]
    details: list[str] = []
    for row in report.rows:
        lines.append(
            f"| #{row.number} | {row.day} | {row.recipes_sha[:10] or 'dir'} | {row.outcome} "
            f"| {_cell(row.reason)} |"
        )
        extra = _edits_md(row)
        if extra:
            details += [f"- #{row.number} {_cell(row.title)}", *extra]
    if details:
        lines += ["", "## Edits, notes and maintainers' changes", "", *details]
    return "\n".join(lines) + "\n"


STYLE = """
body{font:14px system-ui,sans-serif;margin:1.5em}
table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}
th{cursor:pointer;background:#f4f4f4}
tr.o-alignment-PR td.o{background:#cf222e;color:#fff}
tr.o-aligned td.o{background:#2da44e;color:#fff}
tr.o-error td.o{background:#000;color:#fff}
ul{margin:0;padding-left:1.2em}
"""
SCRIPT = """
document.getElementById('filter').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('#prs tbody tr').forEach(function (tr) {
    tr.style.display = tr.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  });
});
document.querySelectorAll('#prs th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = document.querySelector('#prs tbody');
    var rows = Array.prototype.slice.call(body.rows);
    var dir = th.dataset.dir === 'asc' ? -1 : 1;
    th.dataset.dir = dir === 1 ? 'asc' : 'desc';
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.v || a.cells[col].textContent;
      var y = b.cells[col].dataset.v || b.cells[col].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      if (!isNaN(nx) && !isNaN(ny)) return (nx - ny) * dir;
      return x < y ? -dir : x > y ? dir : 0;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def to_html(report: BacktestReport) -> str:
    esc = html.escape
    counts = "".join(
        f"<li><b>{esc(k)}</b>: <span class=count data-outcome='{esc(k)}'>{n}</span></li>"
        for k, n in report.counts().items()
    )
    rows = []
    for row in report.rows:
        extra = "".join(f"<li>{esc(line.strip()[2:])}</li>" for line in _edits_md(row))
        rows.append(
            f"<tr class='o-{esc(row.outcome.replace(' ', '-'))}' data-pr='{row.number}'>"
            f"<td data-v='{row.number}'>#{row.number}</td><td>{esc(row.day)}</td>"
            f"<td>{esc(row.title)}</td><td>{esc(row.recipes_sha[:10] or 'dir')}</td>"
            f"<td class=o>{esc(row.outcome)}</td><td>{esc(row.reason)}"
            f"{'<ul>' + extra + '</ul>' if extra else ''}</td></tr>"
        )
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>recipe-sync backtest</title>"
        f"<style>{STYLE}</style></head><body><h1>recipe-sync backtest</h1>"
        f"<p id=summary>{esc(report.summary())}</p><ul id=counts>{counts}</ul>"
        "<input id=filter placeholder='filter rows'>"
        "<table id=prs><thead><tr><th>PR</th><th>merged</th><th>title</th><th>recipes</th>"
        "<th>outcome</th><th>reason</th></tr></thead><tbody>"
        + "".join(rows)
        + f"</tbody></table><script>{SCRIPT}</script></body></html>\n"
    )


def render(report: BacktestReport, fmt: str) -> str:
    if fmt == "json":
        return to_json(report)
    if fmt == "html":
        return to_html(report)
    return to_markdown(report)
