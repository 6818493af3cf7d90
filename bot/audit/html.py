"""The audit as one self-contained HTML page: inline CSS, JS and SVG, no network.

What a maintainer needs first is *why* a recipe drifts, so the page is built around
:func:`bot.audit.groups.group_report`: one section per recipe file, then profile, then config
key, with identical differences across points collapsed into one entry that lists the
points. Every difference shows its reason, a link to the recipe YAML line and to the
script line (GitHub blob URLs at the audited commits when the repository names are known,
else paths relative to each repository). The table has a fixed layout: nothing scrolls
sideways at 1400 px.

Charts: a recipe × hardware heat-map of serving drift, the flags that drift in the most
config keys (coloured by class), and, given backtest output, drift over time. Filters
(status, hardware, model, text) live in the URL fragment, so a view can be linked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape

from bot.audit.actions import fix_for, pr_label, pr_url, start_here
from bot.audit.groups import Entry, KeyGroup, RecipeGroup, group_report, top_flags
from bot.audit.heatmap import heatmap_legend, heatmap_svg, text_width
from bot.audit.markdown import TITLE
from bot.audit.model import STATUSES, AuditReport, AuditRow, FlagRow
from bot.digits import is_integer
from bot.present.page import COLORS, CSS, OTHER_COLOR, HistoryPoint, history_svg

# difference classes (FlagDiff.category): serving configuration first
CATEGORY_COLORS: Mapping[str, str] = {
    "engine": "#cf222e",
    "maybe": "#fb8f44",
    "env": "#8250df",
    "image": "#0969da",
    "api": "#1a7f37",
    "front-end": "#6e7781",
    "topology": "#bf8700",
}
MAX_VALUE = 160
TOP_FLAGS = 15


SCRIPT = r"""
(function () {
  var table = document.getElementById('rows');
  var groups = Array.prototype.slice.call(table.tBodies);
  var entries = Array.prototype.slice.call(table.querySelectorAll('tr.entry'));
  var names = ['status', 'hardware', 'model', 'guide', 'text'];
  var filters = {};
  names.forEach(function (n) { filters[n] = document.getElementById('filter-' + n); });
  var shown = document.getElementById('shown');
  function apply() {
    var f = {};
    names.forEach(function (n) { f[n] = filters[n].value; });
    var text = f.text.trim().toLowerCase(), count = 0, lines = 0;
    entries.forEach(function (row) {
      var ok = (!f.status || row.getAttribute('data-status') === f.status) &&
        (!f.hardware || row.getAttribute('data-hardware') === f.hardware) &&
        (!f.model || row.getAttribute('data-model') === f.model) &&
        (!f.guide || row.getAttribute('data-guide') === f.guide) &&
        (!text || row.textContent.toLowerCase().indexOf(text) >= 0 ||
          row.parentNode.rows[0].textContent.toLowerCase().indexOf(text) >= 0);
      row.hidden = !ok;
      if (ok) { count += 1; lines += parseInt(row.getAttribute('data-lines'), 10); }
    });
    groups.forEach(function (body) {
      var any = body.querySelector('tr.entry:not([hidden])') !== null;
      body.hidden = !any;
      Array.prototype.slice.call(body.querySelectorAll('tr.profile')).forEach(function (p) {
        var next = p.nextElementSibling, seen = false;
        while (next && !next.classList.contains('profile')) {
          if (next.classList.contains('entry') && !next.hidden) { seen = true; }
          next = next.nextElementSibling;
        }
        p.hidden = !seen;
      });
    });
    shown.textContent = 'showing ' + count + ' of ' + entries.length + ' entries (' + lines +
      ' launch lines)';
    table.setAttribute('data-shown', String(count));
  }
  function save() {
    var parts = [];
    names.forEach(function (n) {
      if (filters[n].value) { parts.push(n + '=' + encodeURIComponent(filters[n].value)); }
    });
    var hash = parts.join('&');
    if (window.history && history.replaceState) {
      history.replaceState(null, '', hash ? '#' + hash : location.pathname + location.search);
    }
  }
  names.forEach(function (n) {
    filters[n].addEventListener(n === 'text' ? 'input' : 'change', function () {
      apply(); save();
    });
  });
  Array.prototype.slice.call(document.querySelectorAll('[data-filter]')).forEach(function (el) {
    el.addEventListener('click', function () {
      el.getAttribute('data-filter').split('&').forEach(function (part) {
        var eq = part.indexOf('=');
        filters[part.slice(0, eq)].value = decodeURIComponent(part.slice(eq + 1));
      });
      apply(); save(); table.scrollIntoView();
    });
  });
  (location.hash || '').replace(/^#/, '').split('&').forEach(function (part) {
    var eq = part.indexOf('='); if (eq < 0) { return; }
    var name = part.slice(0, eq);
    if (filters[name]) { filters[name].value = decodeURIComponent(part.slice(eq + 1)); }
  });
  apply();
})();
"""


def _e(text: str) -> str:
    return escape(text, quote=True)


def _code(text: str) -> str:
    if not text:
        return "<span class=notes>(omitted)</span>"
    short = text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"
    return f"<code title='{_e(text)}'>{_e(short)}</code>"


class Links:
    """``file:line`` → a URL under ``base_url`` (``--recipes-url``), else a GitHub blob URL at
    the audited commit, else a path relative to the repository."""

    def __init__(self, name: str, commit: str, base_url: str = "") -> None:
        if base_url:
            self.base = base_url if base_url.endswith("/") else base_url + "/"
        else:
            self.base = f"https://github.com/{name}/blob/{commit}/" if name and commit else ""

    def href(self, at: str) -> str | None:
        """None without a base: a path relative to the repository is no link from the saved
        page (the page warns instead, :func:`links_warning`)."""
        file, sep, line = at.rpartition(":")
        if not sep or not is_integer(line) or not self.base:
            return None
        return f"{self.base}{file}#L{line}"

    def anchor(self, at: str, label: str) -> str:
        if not at:
            return ""
        href = self.href(at)
        if href is None:
            return f"<span class=at title='{_e(at)}'>{_e(label)}</span>"
        return f"<a class=at href='{_e(href)}' title='{_e(at)}'>{_e(label)}</a>"


def links_warning(report: AuditReport) -> str:
    """What keeps file links off, and the flag that turns them on ("" when all work)."""
    off = []
    if not report.bench_name:
        off.append(
            "the benchmark repository's origin is not on GitHub: pass --bench-name OWNER/NAME"
        )
    elif not report.bench_commit:
        off.append(
            "the benchmark repository is a plain directory (no commit to link at): pass a git "
            "repository as --bench-repo"
        )
    if not report.recipes_url and not (report.recipes_name and report.recipes_commit):
        name = report.recipes_name or not report.recipes_commit
        off.append(
            "the recipes have no GitHub name and commit: pass "
            + ("" if name else "--recipes-name OWNER/NAME or ")
            + "--recipes-url URL (the base URL of the recipe files)"
        )
    if not off:
        return ""
    return (
        f"<p class=warn id=links-warning>File links are off ({_e('; '.join(off))}): the page "
        "shows repository paths instead.</p>"
    )


def _start_here(report: AuditReport, groups: Sequence[RecipeGroup]) -> str:
    """Above the fold: the drifted entry with the most impact and its fix command."""
    found = start_here(report, groups)
    if found is None:
        return ""
    key, entry = found.key, found.entry
    lines = len(entry.rows)
    flags = ", ".join(found.flags)
    where = f"status=drifted&text={key.config_key}"
    what = (
        f"<b>Start here</b>: <a href='#{_e(where)}' data-filter='{_e(where)}'>"
        f"<code>{_e(key.config_key)}</code></a> <span class=notes>({_e(key.hardware)})</span>: "
        f"{len(found.flags)} flag{'s' if len(found.flags) != 1 else ''} drift on {lines} launch "
        f"line{'s' if lines != 1 else ''} ({_e(flags)})"
    )
    if found.fix.prs:
        what += ", introduced by " + ", ".join(f"#{n}" for n in found.fix.prs)
    fix = (
        f". Fix: <code class=cmd>{_e(found.fix.command)}</code>"
        if found.fix.command
        else ". No fix command: no benchmark commit introduced it (read from a directory)"
    )
    return f"<p class=start id=start-here>{what}{fix}</p>"


def _short_at(at: str) -> str:
    return at.rsplit("/", 1)[-1]


# --- charts ------------------------------------------------------------------------------


def flags_svg(report: AuditReport) -> str:
    """The flags that drift in the most config keys, each bar split by difference class."""
    ranked = top_flags(report.rows, TOP_FLAGS)
    classes: dict[str, str] = {}
    for row in report.rows:
        for found in row.flags:
            if found.drift:
                classes.setdefault(found.flag, found.category)
    longest = max((flag for flag, _ in ranked), key=len, default="")
    label_w, bar_h, gap, top = max(160, text_width(longest) + 16), 18, 5, 30
    width = label_w + 320
    biggest = max((n for _, n in ranked), default=1)
    scale = (width - label_w - 40) / biggest
    height = top + max(1, len(ranked)) * (bar_h + gap) + 8
    parts = [
        f"<svg id=flags-chart xmlns='http://www.w3.org/2000/svg' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
        "aria-label='flags that drift in the most config keys'>"
        "<title>Top differing flags (config keys)</title>"
    ]
    used = sorted({classes[f] for f, _ in ranked})
    x = 10
    for category in used:
        color = CATEGORY_COLORS.get(category, OTHER_COLOR)
        parts.append(
            f"<rect x='{x}' y='6' width='11' height='11' fill='{color}'/>"
            f"<text x='{x + 15}' y='16'>{_e(category or 'other')}</text>"
        )
        x += 24 + text_width(category or "other")
    if not ranked:
        parts.append(f"<text x='10' y='{top + 14}'>no flag drifts</text>")
    for index, (flag, count) in enumerate(ranked):
        y = top + index * (bar_h + gap)
        color = CATEGORY_COLORS.get(classes[flag], OTHER_COLOR)
        parts.append(
            f"<g class=cell data-filter='text={_e(flag)}' data-flag='{_e(flag)}' "
            f"data-count='{count}'><text x='{label_w - 8}' y='{y + 13}' text-anchor='end'>"
            f"{_e(flag)}</text><rect x='{label_w}' y='{y}' width='{count * scale:.1f}' "
            f"height='{bar_h}' fill='{color}'/><text x='{label_w + count * scale + 5:.1f}' "
            f"y='{y + 13}'>{count}</text><title>{_e(flag)}: drifts in {count} config keys "
            f"({_e(classes[flag] or 'other')})</title></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


# --- the grouped table -----------------------------------------------------------------------


def _introduced(report: AuditReport, flag: FlagRow) -> str:
    intro = flag.introduced
    if intro is None:
        return ""
    url = pr_url(report, intro)
    label = pr_label(intro)
    link = f"<a href='{_e(url)}'>{_e(label)}</a>" if url else _e(label)
    return f"<span class=at title='{_e(intro.subject)}'>introduced in {link}</span>"


def _diff(
    flag: FlagRow, values: Sequence[str], recipes: Links, bench: Links, report: AuditReport
) -> str:
    color = CATEGORY_COLORS.get(flag.category, OTHER_COLOR)
    counted = "counted" if flag.drift else "uncounted"
    why_not = _uncounted_kind(flag) + (f": {flag.knob}" if flag.benchmark_setting else "")
    verdict = flag.verdict if flag.drift else f"{flag.verdict}, {why_not}"
    if len(values) > 1:  # the benchmark's value follows the point (e.g. = concurrency)
        shown = " ".join(_code(v) for v in values[:8]) + (" …" if len(values) > 8 else "")
        bench_text = f"{shown} <span class=notes>(varies by point)</span>"
        reason = f"e.g. {flag.reason}"
    else:
        bench_text, reason = _code(flag.bench), flag.reason
    return (
        f"<div class='diff {counted}' data-flag='{_e(flag.flag)}'>"
        f"<span class=cat style='background:{color}' title='{_e(flag.category)}'></span>"
        f"<code>{_e(flag.flag)}</code> benchmark {bench_text} · recipe "
        f"{_code(flag.recipe)} <span class=notes>({_e(verdict)})</span>"
        f"{recipes.anchor(flag.recipe_at, 'recipe ' + _short_at(flag.recipe_at))}"
        f"{bench.anchor(flag.bench_at, 'benchmark ' + _short_at(flag.bench_at))}"
        f"{_introduced(report, flag)}"
        f"<div class=why>{_e(reason)}</div></div>"
    )


def _uncounted_kind(flag: FlagRow) -> str:
    """Why a difference is not counted, in the words of the folded summary."""
    if flag.recipe_feature:
        return "recipe feature"
    if flag.benchmark_setting:
        return "benchmark setting"
    return "undecided" if flag.verdict == "unknown" else "not counted"


def _uncounted(parts: Sequence[tuple[FlagRow, str]]) -> str:
    """Differences that are not drift, folded: they never read as something to fix."""
    if not parts:
        return ""
    kinds = Counter(_uncounted_kind(flag) for flag, _ in parts)
    what = ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in kinds.items())
    return (
        f"<details class=uncounted><summary>{len(parts)} not counted ({_e(what)})</summary>"
        + "".join(html for _, html in parts)
        + "</details>"
    )


def _fix(report: AuditReport, key: str, row: AuditRow) -> str:
    """What to do about a drifted entry: the PRs that introduced it and the align command."""
    fix = fix_for(report, key, row.flags)
    parts = []
    if fix.introduced:
        links = []
        for intro in fix.introduced:
            url = pr_url(report, intro)
            label = _e(pr_label(intro))
            shown = f"<a href='{_e(url)}'>{label}</a>" if url else label
            links.append(f"{shown} <span class=notes>{_e(intro.subject)}</span>")
        parts.append("introduced by " + "; ".join(links))
    if fix.command:
        parts.append(
            "fix: run (plans the recipe edit and writes the alignment PR text)"
            f"<code class=cmd>{_e(fix.command)}</code>"
        )
    if fix.recipe_only:
        parts.append(
            f"only the recipe sets {_e(', '.join(fix.recipe_only))} (no benchmark PR "
            "introduced it): drop it from the recipe, or ignore it on the dashboard issue"
        )
    elif not fix.introduced:
        parts.append("no introducing commit found (read from a directory, not git history)")
    return "<div class=fix>" + "<br>".join(parts) + "</div>"


def _entry(key: KeyGroup, entry: Entry, recipes: Links, bench: Links, report: AuditReport) -> str:
    row = entry.first
    where = (
        f"<div class=key>{bench.anchor(f'{key.config_file}:{key.config_line}', key.config_key)}"
        if key.config_line
        else f"<div class=key>{_e(key.config_key)}"
    )
    where += (
        f" <span class=notes>{_e(key.hardware)}</span></div>"
        f"<div class=points>{len(entry.rows)} launch line{'s' if len(entry.rows) != 1 else ''}"
        f": {_e(entry.points_text())}</div>"
    )
    if row.launch_at:
        where += f"<div>{bench.anchor(row.launch_at, 'launch ' + _short_at(row.launch_at))}</div>"
    state = f"<span class='status {row.status}'>{_e(row.status)}</span>"
    if row.status == "drifted":
        state += f" <span class=notes>{row.drift_count} flags</span>"
    if row.context:
        state += "<div class=notes>context only</div>"
    why = ""
    if row.reason:
        why += f"<div class=diff>{_e(row.reason)}</div>"
    shown = [
        (flag, _diff(flag, entry.bench_values(index), recipes, bench, report))
        for index, flag in enumerate(row.flags)
    ]
    why += "".join(html for flag, html in shown if flag.drift)
    if row.status == "drifted":  # what to do, right under what drifts
        why += _fix(report, key.config_key, row)
    why += _uncounted([(flag, html) for flag, html in shown if not flag.drift])
    if row.notes:
        why += f"<div class=notes>{_e('; '.join(row.notes))}</div>"
    why += _guide(row)
    return (
        f"<tr class=entry data-status='{row.status}' data-hardware='{_e(row.hardware)}' "
        f"data-model='{_e(row.model)}' data-key='{_e(key.config_key)}' "
        f"data-guide='{_e(row.guide_status or 'none')}' "
        f"data-lines='{len(entry.rows)}'><td>{where}</td><td>{state}</td>"
        f"<td class=reasons>{why or '—'}</td></tr>"
    )


def _guide(row: AuditRow) -> str:
    """The guide commands documenting this profile, and how each differs from the launch."""
    items = "".join(
        f"<li title='{_e(g.recipe)}:{g.line}'>guide: {_e(g.heading or '(no heading)')} "
        f"<span class=notes>line {g.line}"
        + (", cites the benchmark" if g.cites_benchmark else "")
        + (", managed" if g.managed else "")
        + "</span>"
        + (
            "<ul class=flags>"
            + "".join(
                f"<li title='{_e(f.reason)}'>{_code(f.flag)} {_code(f.bench)} "
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
    return f"<ul class=flags>{items}</ul>" if items else ""


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


def _badges(counts: Mapping[str, int]) -> str:
    return "".join(
        f"<span class=badge style='background:{COLORS[s]}'>{counts[s]} {s}</span>"
        for s in STATUSES
        if counts[s]
    )


def _group(group: RecipeGroup, recipes: Links, bench: Links, report: AuditReport) -> str:
    title = (
        recipes.anchor(f"{group.recipe}:1", group.recipe) if group.has_recipe else _e(group.recipe)
    )
    top = ", ".join(f"{flag} ({n})" for flag, n in group.top_flags())
    head = (
        f"<tr class=recipe><th colspan=3>{title} {_badges(group.counts())}"
        + (f" <span class=notes>most differing: {_e(top)}</span>" if top else "")
        + "</th></tr>"
    )
    body = [head]
    for profile in group.profiles:
        label = profile.profile or "no recipe profile"
        body.append(f"<tr class=profile><th colspan=3>{_e(label)}</th></tr>")
        for key in profile.keys:
            body.extend(_entry(key, entry, recipes, bench, report) for entry in key.entries)
    return f"<tbody data-recipe='{_e(group.recipe)}'>" + "".join(body) + "</tbody>"


def _options(values: list[str]) -> str:
    return "".join(f"<option value='{_e(v)}'>{_e(v)}</option>" for v in values)


def _out_of_scope(report: AuditReport) -> str:
    scope = report.out_of_scope_by_framework()
    if not scope:
        return "<p>Every config key is a single-node vLLM configuration.</p>"
    reasons = report.out_of_scope_reasons()
    keys = report.out_of_scope_keys()
    total = len(report.out_of_scope)
    summary = ", ".join(f"{g} {n}" for g, n in scope.items())
    rows = "".join(
        f"<tr><td>{_e(g)}</td><td>{n}</td><td>{_e(reasons[g])}</td>"
        f"<td class=notes>{_e(', '.join(keys[g]))}</td></tr>"
        for g, n in scope.items()
    )
    return (
        f"<details id=out-of-scope><summary><b>{total} config keys out of scope</b> "
        f"<span class=notes>({_e(summary)})</span></summary><table><tbody>{rows}</tbody>"
        "</table></details>"
    )


def render_html(report: AuditReport, history: Sequence[HistoryPoint] = ()) -> str:
    counts = report.by_status()
    groups = group_report(report)
    recipes = Links(report.recipes_name, report.recipes_commit, report.recipes_url)
    bench = Links(report.bench_name, report.bench_commit)
    cards = "".join(
        f"<div class='card {s}' data-status='{s}' data-filter='status={s}'><b>{counts[s]}</b>"
        f"{s}</div>"
        for s in STATUSES
    )
    warnings = "".join(f"<p class=warn>{_e(w)}</p>" for w in report.warnings)
    if report.internal_errors:
        warnings += (
            f"<p class=warn>{report.internal_errors} launch lines hit an internal error "
            "(status unresolved (internal error: …); traceback in the log).</p>"
        )
    left = f"<h2>Drift by recipe and hardware</h2>{heatmap_svg(groups)}{heatmap_legend(groups)}"
    if history:
        left += f"<h2>Drift over time</h2>{history_svg(history)}"
    charts = f"<div>{left}</div><div><h2>Top differing flags</h2>{flags_svg(report)}</div>"
    hardware = sorted({row.hardware for row in report.rows})
    models = sorted({row.model for row in report.rows})
    entries = sum(len(g.entries()) for g in groups)
    bench_label = report.bench_name or report.bench_label
    if report.bench_name and report.bench_commit:
        bench_label += f"@{report.bench_commit[:12]}"
    recipes_label = report.recipes_name or report.recipes_label or "(does not load)"
    if report.recipes_name and report.recipes_commit:
        recipes_label += f"@{report.recipes_commit[:12]}"
    table = "".join(_group(group, recipes, bench, report) for group in groups)
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{_e(TITLE)}</title><style>{CSS}</style></head><body>"
        f"<h1>{_e(TITLE)}</h1>"
        f"<p class=sub>benchmark repository <code>{_e(bench_label)}</code> · recipes "
        f"repository <code>{_e(recipes_label)}</code> · {len(report.rows)} launch lines of "
        f"{report.keys_audited} vLLM config keys, {entries} distinct entries</p>"
        f"{_start_here(report, groups)}{links_warning(report)}"
        f"<div class=cards id=summary>{cards}</div>{_guide_summary(report)}{warnings}"
        f"<div class=charts>{charts}</div>"
        "<h2>By recipe</h2><div class=filters>"
        "<label>status <select id=filter-status><option value=''>all</option>"
        f"{_options(list(STATUSES))}</select></label>"
        "<label>hardware <select id=filter-hardware><option value=''>all</option>"
        f"{_options(hardware)}</select></label>"
        "<label>model <select id=filter-model><option value=''>all</option>"
        f"{_options(models)}</select></label>"
        "<label>guide command <select id=filter-guide><option value=''>all</option>"
        f"{_options(['drifted', 'matches', 'none'])}</select></label>"
        "<label>search <input id=filter-text type=search></label>"
        f"<span id=shown>{entries} entries</span></div>"
        f"<table id=rows data-total='{entries}'><colgroup><col class=where><col class=state>"
        "<col class=why></colgroup><thead><tr><th>config key · points</th><th>status</th>"
        f"<th>differences and why</th></tr></thead>{table}</table>"
        f"{_out_of_scope(report)}"
        f"<script>{SCRIPT}</script></body></html>\n"
    )
