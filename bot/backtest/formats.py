"""A backtest report as Markdown, JSON or one self-contained HTML page (deterministic)."""

from __future__ import annotations

import json
from typing import Any

from bot.backtest.model import BacktestReport, PRRow
from bot.present.page import CSS, HistoryPoint, e, history_svg


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
    lines += [
        f"  - duplicate: `{recipe}` already proposed by #{number}'s open alignment PR "
        "(not counted in the volume)"
        for recipe, number in row.duplicate_of
    ]
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


# the table's own rules; the rest is the audit dashboard's style sheet (bot.present.page)
STYLE = """
#prs { width: 100%; table-layout: fixed; font-size: 13px; }
#prs col.pr { width: 65px; } #prs col.day { width: 92px; } #prs col.title { width: 28%; }
#prs col.rc { width: 96px; } #prs col.o { width: 12%; }
#prs td:nth-child(-n+2), #prs td:nth-child(4) { white-space: nowrap; }
#prs td, #prs th { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left;
  vertical-align: top; overflow-wrap: anywhere; }
#prs th { cursor: pointer; background: #f6f8fa; }
#prs ul { margin: 4px 0 0; padding-left: 1.2em; color: var(--muted); font-size: 12px; }
td.o { font-weight: 600; }
tr.o-alignment-PR td.o, tr.o-blocked td.o { color: #cf222e; }
tr.o-aligned td.o { color: #2da44e; } tr.o-error td.o { color: #fff; background: #1f2328; }
.card.o-alignment-PR b, .card.o-blocked b { color: #cf222e; } .card.o-aligned b { color: #2da44e; }
#filter { margin: 8px 0; }
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


def _link(url: str, label: str) -> str:
    return f"<a href='{e(url)}'>{e(label)}</a>" if url else e(label)


def _row_html(report: BacktestReport, row: PRRow) -> str:
    bench, recipes = report.bench_name, report.recipes_name
    pr = _link(f"https://github.com/{bench}/pull/{row.number}" if bench else "", f"#{row.number}")
    commit = f"https://github.com/{bench}/commit/{row.sha}" if bench and row.sha else ""
    sha = row.recipes_sha
    tree = f"https://github.com/{recipes}/blob/{sha}/" if recipes and sha else ""
    files = "".join(f"<li>{_link(tree + f if tree else '', f)}</li>" for f in row.files)
    extra = "".join(f"<li>{e(line.strip()[2:])}</li>" for line in _edits_md(row))
    recipes_cell = _link(
        f"https://github.com/{recipes}/tree/{sha}" if tree else "", sha[:10] or "dir"
    )
    return (
        f"<tr class='o-{e(row.outcome.replace(' ', '-'))}' data-pr='{row.number}'>"
        f"<td data-v='{row.number}'>{pr}</td><td>{_link(commit, row.day)}</td>"
        f"<td>{e(row.title)}</td><td>{recipes_cell}</td>"
        f"<td class=o>{e(row.outcome)}</td><td>{e(row.reason)}"
        f"{'<ul>' + files + extra + '</ul>' if files or extra else ''}</td></tr>"
    )


def _links_warning(report: BacktestReport) -> str:
    off = []
    if not report.bench_name:
        off.append("no benchmark repository name: pass --bench-name OWNER/NAME")
    if not report.recipes_name:
        off.append("no recipes repository name: pass --recipes-name OWNER/NAME")
    if not off:
        return ""
    return f"<p class=warn id=links-warning>PR and file links are off ({e('; '.join(off))}).</p>"


def to_html(report: BacktestReport) -> str:
    """One self-contained page in the audit dashboard's style: the counts as cards, merged
    PRs over time by outcome (inline SVG), then every PR with links to it, its merge commit
    and the recipe files it would edit; the table sorts and filters (inline script)."""
    cards = "".join(
        f"<div class='card o-{e(k.replace(' ', '-'))}'><b class=count data-outcome='{e(k)}'>"
        f"{n}</b>{e(k)}</div>"
        for k, n in report.counts().items()
    )
    chart = (
        history_svg([HistoryPoint(r.day, r.outcome) for r in report.rows]) if report.rows else ""
    )
    bench = report.bench_name or report.bench
    rows = "".join(_row_html(report, row) for row in report.rows)
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>recipe-sync backtest</title><style>{CSS}{STYLE}</style></head><body>"
        "<h1>recipe-sync backtest</h1>"
        f"<p class=sub>benchmark repository <code>{e(bench)}</code> · recipes "
        f"<code>{e(report.recipes_name or report.recipes)}</code></p>"
        f"<p id=summary class=sub>{e(report.summary())}</p>{_links_warning(report)}"
        f"<div class=cards id=counts>{cards}</div>"
        + (f"<h2>Merged benchmark PRs over time</h2>{chart}" if chart else "")
        + "<h2>Every PR</h2><input id=filter type=search placeholder='filter rows'>"
        "<table id=prs><colgroup><col class=pr><col class=day><col class=title><col class=rc>"
        "<col class=o><col class=reason></colgroup><thead><tr><th>PR</th><th>merged</th>"
        "<th>title</th><th>recipes</th><th>outcome</th><th>reason</th></tr></thead><tbody>"
        + rows
        + f"</tbody></table><script>{SCRIPT}</script></body></html>\n"
    )


def render(report: BacktestReport, fmt: str) -> str:
    if fmt == "json":
        return to_json(report)
    if fmt == "html":
        return to_html(report)
    return to_markdown(report)
