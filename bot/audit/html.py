"""The audit as one self-contained HTML page: inline CSS and JS, no network.

The table is rendered on the server (it reads fine without JavaScript); the script adds
sorting (click a column header), filters (status, hardware, model, free text) and keeps the
view in the URL fragment, so a filtered view can be linked. The drift-by-hardware chart is
inline SVG: one stacked bar per hardware, drifted first.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from bot.audit.markdown import TITLE
from bot.audit.model import STATUSES, AuditReport, AuditRow

COLORS: Mapping[str, str] = {
    "aligned": "#2da44e",
    "drifted": "#cf222e",
    "unmapped": "#bf8700",
    "unresolved": "#8250df",
}
COLUMNS = (
    ("key", "config key", "text"),
    ("tp", "tp", "num"),
    ("ep", "ep", "num"),
    ("dpattn", "dp-attn", "text"),
    ("conc", "conc", "num"),
    ("scenario", "scenario", "text"),
    ("islosl", "isl/osl", "text"),
    ("spec", "spec", "text"),
    ("arm", "arm", "text"),
    ("hardware", "hardware", "text"),
    ("profile", "recipe profile", "text"),
    ("status", "status", "text"),
    ("flags", "differing flags", "num"),
    ("guide", "guide command", "text"),
    ("notes", "notes", "text"),
)
MAX_VALUE = 160

CSS = """
:root { color-scheme: light; --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); margin: 0; padding: 24px 32px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
.sub { color: var(--muted); margin: 0 0 18px; word-break: break-all; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin-bottom: 20px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px; min-width: 130px; }
.card b { display: block; font-size: 24px; }
.card.aligned b { color: #2da44e; } .card.drifted b { color: #cf222e; }
.card.unmapped b { color: #bf8700; } .card.unresolved b { color: #8250df; }
.grid { display: flex; gap: 32px; flex-wrap: wrap; align-items: flex-start; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left;
  vertical-align: top; }
table.counts td.n, table.counts th.n { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
#rows { min-width: 100%; font-size: 13px; }
#rows td.flags { min-width: 340px; } #rows td.notes { min-width: 280px; }
#rows td.profile { min-width: 180px; }
#rows td.status-cell { min-width: 160px; max-width: 360px; }
#rows th { position: sticky; top: 0; background: #f6f8fa; cursor: pointer; user-select: none;
  white-space: nowrap; }
#rows th[aria-sort=ascending]::after { content: " ▲"; }
#rows th[aria-sort=descending]::after { content: " ▼"; }
#rows td.key { white-space: nowrap; font-family: ui-monospace, monospace; }
.status { font-weight: 600; }
.status.aligned { color: #2da44e; } .status.drifted { color: #cf222e; }
.status.unmapped { color: #9a6700; } .status.unresolved { color: #8250df; }
code { font: 12px ui-monospace, SFMono-Regular, monospace; background: #f6f8fa;
  padding: 1px 4px; border-radius: 4px; word-break: break-all; }
ul.flags { margin: 0; padding-left: 16px; } ul.flags li.uncounted { color: var(--muted); }
.notes { color: var(--muted); }
.filters { display: flex; gap: 12px; flex-wrap: wrap; align-items: center; margin: 10px 0; }
.filters label { color: var(--muted); }
#shown { color: var(--muted); }
.warn { border-left: 4px solid #bf8700; padding: 4px 12px; background: #fff8c5; }
svg text { font: 12px system-ui, sans-serif; fill: #1f2328; }
"""

SCRIPT = r"""
(function () {
  var table = document.getElementById('rows');
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var filters = {
    status: document.getElementById('filter-status'),
    hardware: document.getElementById('filter-hardware'),
    model: document.getElementById('filter-model'),
    guide: document.getElementById('filter-guide'),
    text: document.getElementById('filter-text')
  };
  var shown = document.getElementById('shown');
  var state = { sort: null, dir: 1 };

  function cellValue(row, index, kind) {
    var cell = row.cells[index];
    var raw = cell.getAttribute('data-sort');
    if (raw === null) { raw = cell.textContent.trim(); }
    if (kind === 'num') { var n = parseFloat(raw); return isNaN(n) ? -Infinity : n; }
    return raw.toLowerCase();
  }
  function sortBy(index, dir) {
    var kind = heads[index].getAttribute('data-kind');
    var keyed = rows.map(function (row, i) { return [cellValue(row, index, kind), i, row]; });
    keyed.sort(function (a, b) {
      if (a[0] < b[0]) { return -dir; }
      if (a[0] > b[0]) { return dir; }
      return a[1] - b[1];
    });
    keyed.forEach(function (item) { body.appendChild(item[2]); });
    heads.forEach(function (h, i) {
      if (i === index) { h.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending'); }
      else { h.removeAttribute('aria-sort'); }
    });
    state.sort = heads[index].getAttribute('data-col');
    state.dir = dir;
  }
  function applyFilters() {
    var status = filters.status.value, hardware = filters.hardware.value;
    var model = filters.model.value, text = filters.text.value.trim().toLowerCase();
    var guide = filters.guide.value;
    var count = 0;
    rows.forEach(function (row) {
      var ok = (!status || row.getAttribute('data-status') === status) &&
        (!hardware || row.getAttribute('data-hardware') === hardware) &&
        (!model || row.getAttribute('data-model') === model) &&
        (!guide || row.getAttribute('data-guide') === guide) &&
        (!text || row.textContent.toLowerCase().indexOf(text) >= 0);
      row.hidden = !ok;
      if (ok) { count += 1; }
    });
    shown.textContent = 'showing ' + count + ' of ' + rows.length + ' launch lines';
    table.setAttribute('data-shown', String(count));
  }
  function saveState() {
    var parts = [];
    ['status', 'hardware', 'model', 'guide', 'text'].forEach(function (name) {
      if (filters[name].value) { parts.push(name + '=' + encodeURIComponent(filters[name].value)); }
    });
    if (state.sort) { parts.push('sort=' + state.sort + (state.dir < 0 ? ':desc' : '')); }
    var hash = parts.join('&');
    if (window.history && history.replaceState) {
      history.replaceState(null, '', hash ? '#' + hash : location.pathname + location.search);
    }
  }
  heads.forEach(function (head, index) {
    head.addEventListener('click', function () {
      var col = head.getAttribute('data-col');
      sortBy(index, state.sort === col ? -state.dir : 1);
      saveState();
    });
  });
  Object.keys(filters).forEach(function (name) {
    var el = filters[name];
    el.addEventListener(name === 'text' ? 'input' : 'change', function () {
      applyFilters(); saveState();
    });
  });
  (location.hash || '').replace(/^#/, '').split('&').forEach(function (part) {
    var eq = part.indexOf('='); if (eq < 0) { return; }
    var name = part.slice(0, eq), value = decodeURIComponent(part.slice(eq + 1));
    if (filters[name]) { filters[name].value = value; }
    if (name === 'sort') {
      var bits = value.split(':');
      heads.forEach(function (h, i) {
        if (h.getAttribute('data-col') === bits[0]) { sortBy(i, bits[1] === 'desc' ? -1 : 1); }
      });
    }
  });
  applyFilters();
})();
"""


def _e(text: str) -> str:
    return escape(text, quote=True)


def _code(text: str) -> str:
    if not text:
        return "<span class=notes>—</span>"
    short = text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"
    return f"<code title='{_e(text)}'>{_e(short)}</code>"


def chart_svg(report: AuditReport) -> str:
    """Stacked horizontal bars per hardware (drifted, unresolved, unmapped, aligned)."""
    groups = report.by_hardware()
    order = sorted(groups, key=lambda hw: (-groups[hw]["drifted"], -sum(groups[hw].values()), hw))
    width, label_w, bar_h, gap, top = 760, 150, 22, 8, 34
    biggest = max((sum(c.values()) for c in groups.values()), default=1) or 1
    scale = (width - label_w - 130) / biggest
    height = top + max(1, len(order)) * (bar_h + gap) + 10
    parts = [
        f"<svg id=drift-chart xmlns='http://www.w3.org/2000/svg' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
        "aria-label='launch lines by hardware and status'>",
        "<title>Drift by hardware</title>",
    ]
    x = label_w
    for status in ("drifted", "unresolved", "unmapped", "aligned"):
        parts.append(
            f"<rect x='{x}' y='6' width='12' height='12' fill='{COLORS[status]}'/>"
            f"<text x='{x + 16}' y='16'>{status}</text>"
        )
        x += 100
    if not order:
        parts.append(f"<text x='{label_w}' y='{top + 15}'>no launch lines audited</text>")
    for index, hardware in enumerate(order):
        counts = groups[hardware]
        y = top + index * (bar_h + gap)
        parts.append(
            f"<text x='{label_w - 8}' y='{y + 15}' text-anchor='end'>{_e(hardware)}</text>"
        )
        x0 = float(label_w)
        for status in ("drifted", "unresolved", "unmapped", "aligned"):
            n = counts.get(status, 0)
            if not n:
                continue
            w = max(2.0, n * scale)
            parts.append(
                f"<rect class='bar {status}' data-hardware='{_e(hardware)}' "
                f"data-status='{status}' data-count='{n}' x='{x0:.1f}' y='{y}' "
                f"width='{w:.1f}' height='{bar_h}' fill='{COLORS[status]}'>"
                f"<title>{_e(hardware)}: {n} {status}</title></rect>"
            )
            x0 += w
        drifted = counts.get("drifted", 0)
        parts.append(
            f"<text x='{x0 + 6:.1f}' y='{y + 15}'>{drifted} drifted / {sum(counts.values())}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _counts_table(title: str, groups: Mapping[str, Mapping[str, int]]) -> str:
    head = "".join(f"<th class=n>{s}</th>" for s in STATUSES)
    body = "".join(
        f"<tr><td>{_e(name)}</td>"
        + "".join(f"<td class=n>{counts.get(s, 0)}</td>" for s in STATUSES)
        + f"<td class=n>{sum(counts.values())}</td></tr>"
        for name, counts in groups.items()
    )
    return (
        f"<div><h2>{_e(title)}</h2><table class=counts><thead><tr><th>{_e(title.split()[-1])}"
        f"</th>{head}<th class=n>total</th></tr></thead><tbody>{body}</tbody></table></div>"
    )


def _row(row: AuditRow) -> str:
    p = row.point_fields()
    flags = "".join(
        f"<li class='{'counted' if f.drift else 'uncounted'}' title='{_e(f.reason)}'>"
        f"{_code(f.flag)} {_code(f.bench)} vs {_code(f.recipe)} "
        f"<span class=notes>{_e(f.verdict)}</span></li>"
        for f in row.flags
    )
    notes = list(row.notes)
    guide = "".join(
        f"<li title='{_e(g.recipe)}:{g.line}'>{_e(g.heading or '(no heading)')} "
        f"<span class=notes>line {g.line}"
        + (", cites the benchmark" if g.cites_benchmark else "")
        + (", managed" if g.managed else "")
        + "</span>"
        + (
            "<ul class=flags>"
            + "".join(
                f"<li class=counted title='{_e(f.reason)}'>{_code(f.flag)} {_code(f.bench)} "
                f"vs guide {_code(f.recipe)}</li>"
                for f in g.drift
            )
            + "</ul>"
            if g.drift
            else " matches"
        )
        + "</li>"
        for g in row.guide
    )
    cells = [
        f"<td class=key title='{_e(row.config_file)}:{row.config_line or ''}'>"
        f"{_e(row.config_key)}</td>",
        f"<td data-sort='{_e(p['tp'])}'>{_e(p['tp'])}</td>",
        f"<td>{_e(p['ep'])}</td>",
        f"<td>{_e(p['dp-attn'])}</td>",
        f"<td data-sort='{_e(p['conc'])}'>{_e(p['conc'])}</td>",
        f"<td>{_e(p['scenario'])}</td>",
        f"<td>{_e(p['isl-osl'])}</td>",
        f"<td>{_e(p['spec'])}</td>",
        f"<td>{_e(row.arm)}</td>",
        f"<td>{_e(row.hardware)}</td>",
        f"<td class=profile>{_e(row.profile) or '—'}</td>",
        f"<td class=status-cell data-sort='{STATUSES.index(row.status)}{_e(row.status)}'>"
        f"<span class='status {row.status}'>{_e(row.status_text)}</span></td>",
        f"<td class=flags data-sort='{row.drift_count}'>"
        + (f"<ul class=flags>{flags}</ul>" if flags else "")
        + "</td>",
        f"<td class=flags data-sort='{_e(row.guide_status)}'>"
        + (f"<ul class=flags>{guide}</ul>" if guide else "")
        + "</td>",
        f"<td class=notes>{_e('; '.join(notes))}</td>",
    ]
    return (
        f"<tr data-status='{row.status}' data-hardware='{_e(row.hardware)}' "
        f"data-model='{_e(row.model)}' data-guide='{_e(row.guide_status or 'none')}'>"
        + "".join(cells)
        + "</tr>"
    )


def _options(values: list[str]) -> str:
    return "".join(f"<option value='{_e(v)}'>{_e(v)}</option>" for v in values)


def _guide_summary(report: AuditReport) -> str:
    counts = report.guide_commands()
    if not counts["compared"]:
        return ""
    return (
        f"<p class=sub id=guide-summary>guide commands compared with a launch line: "
        f"{counts['compared']}, drifted: {counts['drifted']} "
        f"({counts['drifted_citing_benchmark']} in hand-written sections citing the "
        "benchmark)</p>"
    )


def render_html(report: AuditReport) -> str:
    counts = report.by_status()
    cards = "".join(
        f"<div class='card {s}' data-status='{s}'><b>{counts[s]}</b>{s}</div>" for s in STATUSES
    )
    scope = report.out_of_scope_by_framework()
    reasons = report.out_of_scope_reasons()
    keys = report.out_of_scope_keys()
    scope_html = (
        "<table class=counts id=out-of-scope><thead><tr><th>framework</th><th class=n>"
        "config keys</th><th>reason</th><th>keys</th></tr></thead><tbody>"
        + "".join(
            f"<tr><td>{_e(g)}</td><td class=n>{n}</td><td>{_e(reasons[g])}</td>"
            f"<td class=notes>{_e(', '.join(keys[g]))}</td></tr>"
            for g, n in scope.items()
        )
        + "</tbody></table>"
        if scope
        else "<p>Every config key is a single-node vLLM configuration.</p>"
    )
    warnings = "".join(f"<p class=warn>{_e(w)}</p>" for w in report.warnings)
    if report.internal_errors:
        warnings += (
            f"<p class=warn>{report.internal_errors} launch lines hit an internal error "
            "(status unresolved (internal error: …); traceback in the log).</p>"
        )
    heads = "".join(
        f"<th data-col='{col}' data-kind='{kind}' scope=col>{_e(label)}</th>"
        for col, label, kind in COLUMNS
    )
    hardware = sorted({row.hardware for row in report.rows})
    models = sorted({row.model for row in report.rows})
    body = "".join(_row(row) for row in report.rows)
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{_e(TITLE)}</title><style>{CSS}</style></head><body>"
        f"<h1>{_e(TITLE)}</h1>"
        f"<p class=sub>benchmark repository <code>{_e(report.bench_label)}</code> · recipes "
        f"repository <code>{_e(report.recipes_label or '(does not load)')}</code> · "
        f"{len(report.rows)} launch lines of {report.keys_audited} vLLM config keys</p>"
        f"<div class=cards id=summary>{cards}</div>{_guide_summary(report)}{warnings}"
        f"<h2>Drift by hardware</h2>{chart_svg(report)}"
        f"<div class=grid>{_counts_table('By hardware', report.by_hardware())}"
        f"{_counts_table('By model', report.by_model())}"
        f"<div><h2>Out of scope</h2>{scope_html}</div></div>"
        "<h2>Launch lines</h2><div class=filters>"
        "<label>status <select id=filter-status><option value=''>all</option>"
        f"{_options(list(STATUSES))}</select></label>"
        "<label>hardware <select id=filter-hardware><option value=''>all</option>"
        f"{_options(hardware)}</select></label>"
        "<label>model <select id=filter-model><option value=''>all</option>"
        f"{_options(models)}</select></label>"
        "<label>guide command <select id=filter-guide><option value=''>all</option>"
        f"{_options(['drifted', 'matches', 'none'])}</select></label>"
        "<label>search <input id=filter-text type=search></label>"
        f"<span id=shown>{len(report.rows)} launch lines</span></div>"
        f"<div class=scroll><table id=rows data-total='{len(report.rows)}'><thead><tr>{heads}"
        f"</tr></thead><tbody>{body}</tbody></table></div>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )
