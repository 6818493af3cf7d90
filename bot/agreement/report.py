"""The agreement scorecard as Markdown, JSON or one self-contained HTML page (deterministic)."""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.agreement.guide import GuideScore
from bot.agreement.practice import practice
from bot.agreement.proposals import ADOPTIONS, Proposal
from bot.agreement.run import Scorecard
from bot.agreement.score import RECALLS, LinkedChange, breakdown

# issue #31's done-when (on the later half): precision first, recall with the checklist
SAME_NODE = 0.35
SAME_VALUE = 0.60
SAME_VALUE_ADOPTED = 6
RECALL = 0.50
REPRODUCTION = 0.75
GUIDE_RATIO = 2.0
HALVES_WITHIN = 0.15


@dataclass(frozen=True)
class Measure:
    """One headline figure: hits of a whole, against its goal (None: no goal)."""

    name: str
    hits: int
    of: int
    goal: str
    met: bool | None

    @property
    def rate(self) -> float | None:
        return self.hits / self.of if self.of else None

    def cell(self) -> str:
        return _pct(self.hits, self.of)


def _day(moment: int) -> str:
    return datetime.fromtimestamp(moment, UTC).date().isoformat()


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "0/0"


def _at_least(hits: int, of: int, goal: float, least: int = 0) -> bool | None:
    """Is the rate at the goal (and are there ``least`` hits)? None: nothing to measure."""
    if not of:
        return None
    return hits / of >= goal and hits >= least


def same_value_name(card: Scorecard) -> str:
    if card.strictness.covering:
        return "adopted with the same value at a node covering the GPU"
    return "adopted with the same value (any node)"


def headline(card: Scorecard) -> list[Measure]:
    """The figures issue #31's goals are stated in (strict scoring unless ``--loose``)."""
    t = card.totals
    recall_all = t.linked_hit + t.linked_in_checklist
    guide = card.guide
    measures = [
        Measure(
            "adopted at the same node",
            t.adopted_same_node,
            t.scored,
            f"≥ {100 * SAME_NODE:.0f} %",
            _at_least(t.adopted_same_node, t.scored, SAME_NODE),
        ),
        Measure(
            same_value_name(card),
            t.adopted_any_node,
            t.scored,
            f"≥ {100 * SAME_VALUE:.0f} %, ≥ {SAME_VALUE_ADOPTED} adopted",
            _at_least(t.adopted_any_node, t.scored, SAME_VALUE, SAME_VALUE_ADOPTED),
        ),
        Measure("linked maintainer leaves proposed in the diff", t.linked_hit, t.leaves_total,
                "", None),
        Measure(
            "linked maintainer leaves in the diff or the checklist",
            recall_all,
            t.leaves_total,
            f"≥ {100 * RECALL:.0f} %",
            _at_least(recall_all, t.leaves_total, RECALL),
        ),
        Measure(
            "maintainers' reproduction sections the bot also wrote",
            t.reproduction_written,
            t.reproduction_wanted,
            f"≥ {100 * REPRODUCTION:.0f} %",
            _at_least(t.reproduction_written, t.reproduction_wanted, REPRODUCTION),
        ),
    ]  # fmt: skip
    if guide is not None:
        measures.append(
            Measure(
                "reproduction sections proposed that maintainers also wrote for",
                guide.sections_matched,
                guide.sections_proposed,
                "",
                None,
            )
        )
    return measures


def guide_lines(guide: GuideScore | None) -> str:
    """``guide lines proposed 320 vs maintainers' 140 (2.3×)``."""
    if guide is None:
        return "guide lines not recorded"
    ratio = guide.lines_ratio
    times = f" ({ratio:.1f}×)" if ratio is not None else ""
    return (
        f"guide lines proposed {guide.lines_proposed:,} vs maintainers' "
        f"{guide.maintainer_lines:,}{times}"
    )


def guide_met(guide: GuideScore | None) -> bool | None:
    if guide is None or not (guide.lines_proposed or guide.maintainer_lines):
        return None
    return guide.lines_proposed <= GUIDE_RATIO * guide.maintainer_lines


def summary(card: Scorecard) -> str:
    """One line for the console and the README."""
    t = card.totals
    same_value = "same value at a covering node" if card.strictness.covering else "same value"
    parts = [
        f"{card.strictness.name} {card.window}: {len(card.proposals)} distinct YAML edits "
        f"proposed ({t.scored} with ≥ 5 days of history)",
        f"same node {_pct(t.adopted_same_node, t.scored)}",
        f"{same_value} {_pct(t.adopted_any_node, t.scored)}",
        f"linked leaves proposed {_pct(t.linked_hit, t.leaves_total)}",
        "in diff or checklist " + _pct(t.linked_hit + t.linked_in_checklist, t.leaves_total),
        f"reproduction sections {_pct(t.reproduction_written, t.reproduction_wanted)}",
        guide_lines(card.guide),
    ]
    if card.volume is not None:
        parts.append(f"volume: {card.volume.text()}")
    return "; ".join(parts)


def _edit_text(proposal: Proposal) -> str:
    edit = proposal.edit
    value = "(removed)" if proposal.removes else f"`{edit.after}`"
    text = f"`{edit.node}` {edit.subject} = {value}"
    if proposal.restated:
        names = ", ".join(leaf.subject for leaf in proposal.restated)
        text += f" (already in the recipe, not scored: {names})"
    return text


def _match_text(proposal: Proposal) -> str:
    if not proposal.matches:
        return ""
    match = proposal.matches[0]
    commit = match.commit
    return (
        f"{commit.sha[:7]} {_day(commit.time)} `{match.leaf.node}` "
        f"{match.leaf.subject}=`{match.leaf.value}`"
    )


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _counter_row(name: str, counts: Counter[str], columns: tuple[str, ...]) -> str:
    cells = " | ".join(str(counts.get(c, 0)) for c in columns)
    return f"| {_cell(name)} | {cells} | {sum(counts.values())} |"


def _mark(met: bool | None) -> str:
    return "" if met is None else " (met)" if met else " (not met)"


def halves_md(cards: Sequence[Scorecard]) -> list[str]:
    """One column per window: the headline figures, the guide lines and the volume."""
    lines = [
        "| measure | goal | " + " | ".join(card.window for card in cards) + " |",
        "|---" * (len(cards) + 2) + "|",
    ]
    rows = [headline(card) for card in cards]
    for index, first in enumerate(rows[0]):
        cells = " | ".join(f"{row[index].cell()}{_mark(row[index].met)}" for row in rows)
        lines.append(f"| {first.name} | {first.goal or '–'} | {cells} |")
    guide = " | ".join(
        f"{guide_lines(card.guide).removeprefix('guide lines ')}{_mark(guide_met(card.guide))}"
        for card in cards
    )
    lines.append(f"| guide lines proposed vs maintainers' | ≤ {GUIDE_RATIO:.0f}× | {guide} |")
    volume = " | ".join(card.volume.text() if card.volume else "–" for card in cards)
    lines.append(f"| volume | – | {volume} |")
    if len(cards) >= 2:
        lines += ["", _spread(cards[0], cards[1])]
    return lines


def _spread(first: Scorecard, second: Scorecard) -> str:
    """How far apart the first two windows are on the rates the goals are stated in."""
    parts = []
    for a, b in zip(headline(first)[:2], headline(second)[:2], strict=True):
        if a.rate is None or b.rate is None:
            continue
        gap = abs(a.rate - b.rate)
        mark = "within" if gap <= HALVES_WITHIN else "more than"
        parts.append(f"{a.name}: {100 * gap:.0f} points apart ({mark} {100 * HALVES_WITHIN:.0f})")
    return "- " + ("; ".join(parts) if parts else "too few scored edits to compare the windows")


def to_markdown(cards: Sequence[Scorecard]) -> str:
    """The scorecard of the last card (the whole span) in detail; with several windows, a
    table of the headline figures of each first."""
    card = cards[-1]
    mode = card.strictness.name
    lines = [
        f"# recipe-sync agreement score ({mode})",
        "",
        f"- benchmark PRs merged {card.window} (`{card.bench}`), replayed where the App would "
        f"have seen them open; recipes history `{card.recipes}` to {_day(card.history_end)}",
        f"- {len(card.replays)} PRs replayed, "
        f"{sum(1 for r in card.replays if r.row.outcome == 'alignment PR')} would open an "
        f"alignment PR; {len(card.commits)} maintainer commits read, {len(card.links)} links "
        "to replayed PRs, each replayed again just before its commit",
        f"- scoring: {_mode_text(card)}",
        "",
    ]
    if len(cards) > 1:
        lines += ["## Windows", "", *halves_md(cards), ""]
    lines += ["| measure | result | goal |", "|---|---|---|"]
    for measure in headline(card):
        goal = f"{measure.goal}{_mark(measure.met)}" if measure.goal else "–"
        lines.append(f"| {measure.name} | {measure.cell()} | {goal} |")
    lines.append(
        f"| {guide_lines(card.guide)} | | ≤ {GUIDE_RATIO:.0f}×{_mark(guide_met(card.guide))} |"
    )
    if card.volume is not None:
        lines += ["", f"Volume: {card.volume.text()}."]
    lines += ["", "## Proposals by outcome", ""]
    header = "| | " + " | ".join(ADOPTIONS) + " | all |"
    rule = "|---" * (len(ADOPTIONS) + 2) + "|"
    for by, title in (
        ("knob", "knob class"),
        ("kind", "kind of edit"),
        ("placement", "placement"),
        ("model", "model"),
    ):
        lines += [f"### By {title}", "", header, rule]
        for name, counts in breakdown(card.proposals, by).items():
            lines.append(_counter_row(name, counts, ADOPTIONS))
        lines.append("")
    lines += ["## Every proposal", "", *_proposals_md(card.proposals)]
    if card.offered:
        lines += ["", "## Candidates offered as checkboxes", "", *_proposals_md(card.offered)]
    lines += ["", "## Where maintainers placed linked leaves, by knob class", ""]
    found = practice(card.proposals, card.linked, "", "")
    lines += ["| knob | linked leaves | placements | bot proposals adopted |", "|---|---|---|---|"]
    for entry in found.classes:
        where = ", ".join(f"{name} {count}" for name, count in entry.placements) or "–"
        lines.append(
            f"| {entry.knob} | {entry.linked} | {where} | {entry.adopted} of {entry.proposed} |"
        )
    lines += ["", "## Guide output", "", *_guide_md(card.guide)]
    lines += ["", "## Replays that propose or are linked", ""]
    lines += [
        "| PR | merged | replayed on recipes | outcome | added lines | reason |",
        "|---|---|---|---|---|---|",
    ]
    linked_prs = {link.pr for link in card.links}
    for replay in card.replays:
        row = replay.row
        if row.outcome != "alignment PR" and row.number not in linked_prs:
            continue
        lines.append(
            f"| #{row.number} | {row.day} | {replay.recipes_sha[:7]} {_day(replay.moment)} "
            f"| {row.outcome} | {row.added_lines} | {_cell(row.reason[:300])} |"
        )
    lines += ["", "## Linked maintainer changes", ""]
    recall_header = "| | " + " | ".join(RECALLS) + " | all |"
    lines += ["### Leaves by knob class", "", recall_header, "|---" * (len(RECALLS) + 2) + "|"]
    by_knob: dict[str, Counter[str]] = {}
    for change in card.linked:
        for verdict in change.leaves:
            by_knob.setdefault(verdict.knob, Counter())[verdict.status] += 1
    for name, counts in sorted(by_knob.items()):
        lines.append(_counter_row(name, counts, RECALLS))
    lines.append("")
    for change in card.linked:
        lines += _linked_md(change)
    return "\n".join(lines) + "\n"


def _mode_text(card: Scorecard) -> str:
    if card.strictness.linked:
        return (
            "strict — an adoption is a commit linked to a proposing PR within 21 days of its "
            "merge, on the leaves the edit changes, at the same node or one whose renderings "
            "include the benchmarked GPU, and the same choice (forced or opt-in feature)"
        )
    return "loose — any later commit, any node, every leaf of the edit (`--loose`)"


def _proposals_md(proposals: Sequence[Proposal]) -> list[str]:
    lines = ["| PRs | edit | knob | outcome | maintainers |", "|---|---|---|---|---|"]
    for proposal in sorted(proposals, key=lambda p: (p.edit.recipe, p.edit.node)):
        prs = ", ".join(f"#{n}" for n in proposal.prs)
        lines.append(
            f"| {prs} | {_cell(_edit_text(proposal))} | {proposal.knob} | {proposal.outcome} "
            f"| {_cell(_match_text(proposal))} |"
        )
    return lines


def _guide_md(guide: GuideScore | None) -> list[str]:
    if guide is None:
        return ["- not recorded"]
    lines = [
        f"- {guide.sections_proposed} reproduction sections proposed ({guide.lines_proposed:,} "
        f"lines), {guide.sections_matched} for a recipe and GPU maintainers also wrote guide "
        f"text for; maintainers' linked commits added {guide.maintainer_lines:,} guide lines "
        f"in {guide.maintainer_additions} (commit, recipe) additions",
        "",
        "| PR | recipe | bot sections (lines) | maintainers' additions (lines, GPUs) | matched |",
        "|---|---|---|---|---|",
    ]
    for lane in guide.lanes:
        mine = ", ".join(f"`{s.block}` ({s.lines})" for s in lane.sections) or "–"
        theirs = (
            ", ".join(
                f"{m.commit[:7]} {m.day} ({m.lines}, {'/'.join(m.hardware) or 'any'})"
                for m in lane.maintainers
            )
            or "–"
        )
        name = lane.recipe.rsplit("/", 1)[-1]
        lines.append(f"| #{lane.pr} | {name} | {mine} | {theirs} | {len(lane.matched)} |")
    return lines


def _linked_md(change: LinkedChange) -> list[str]:
    link = change.link
    commit = link.commit
    when = "before the merge" if link.before_merge else "after the merge"
    lines = [
        f"### {commit.sha[:7]} {_day(commit.time)} → #{link.pr} "
        f"(`{link.recipe.rsplit('/', 1)[-1]}`, confidence {link.confidence:.2f}, {when})",
        "",
        f"- {_cell(commit.subject)}",
        f"- evidence: {_cell(link.reason())}",
    ]
    if change.row is not None:
        lines.append(
            f"- #{link.pr} replayed just before it: {change.row.outcome} — "
            f"{_cell(change.row.reason[:240])}"
        )
    if change.reproduction:
        bot = f"bot wrote `{change.bot_section}`" if change.bot_section else "bot wrote none"
        lines.append(f"- maintainers wrote a reproduction section; {bot}")
    for verdict in change.leaves:
        leaf = verdict.leaf
        value = "(removed)" if verdict.removed else f"`{leaf.value}`"
        lines.append(
            f"  - `{leaf.node}` {leaf.subject} = {value} [{verdict.knob}, {verdict.placement}]: "
            f"**{verdict.status}**{' (offered)' if verdict.offered else ''} — "
            f"{_cell(verdict.why)}"
        )
    if change.moved:
        lines.append(f"  - moved (not counted): {len(change.moved)} leaves")
    lines.append("")
    return lines


def _figures(card: Scorecard) -> dict[str, Any]:
    """The headline figures of one window, its guide output and its volume."""
    guide = card.guide
    return {
        "since": card.since,
        "until": card.until,
        "summary": summary(card),
        "headline": [
            {"measure": m.name, "hits": m.hits, "of": m.of, "goal": m.goal, "met": m.met}
            for m in headline(card)
        ],
        "guide": None
        if guide is None
        else {
            "sections_proposed": guide.sections_proposed,
            "sections_matched": guide.sections_matched,
            "lines_proposed": guide.lines_proposed,
            "maintainer_additions": guide.maintainer_additions,
            "maintainer_lines": guide.maintainer_lines,
            "met": guide_met(guide),
        },
        "volume": card.volume.to_json() if card.volume is not None else None,
    }


def to_json(cards: Sequence[Scorecard]) -> str:
    card = cards[-1]

    def proposal(p: Proposal) -> dict[str, Any]:
        return {
            "recipe": p.edit.recipe,
            "kind": p.edit.kind,
            "subject": p.edit.subject,
            "node": p.edit.node,
            "after": p.edit.after,
            "prs": list(p.prs),
            "replayed": _day(p.moment),
            "knob": p.knob,
            "placement": p.placement,
            "outcome": p.outcome,
            "restated": [leaf.subject for leaf in p.restated],
            "matches": [
                {
                    "commit": m.commit.sha,
                    "node": m.leaf.node,
                    "subject": m.leaf.subject,
                    "value": m.leaf.value,
                    "how": m.how,
                }
                for m in p.matches
            ],
        }

    def linked(c: LinkedChange) -> dict[str, Any]:
        return {
            "commit": c.link.sha,
            "subject": c.link.commit.subject,
            "day": _day(c.link.commit.time),
            "pr": c.link.pr,
            "recipe": c.link.recipe,
            "hardware": list(c.link.hardware),
            "confidence": c.link.confidence,
            "before_merge": c.link.before_merge,
            "evidence": [{"kind": e.kind, "detail": e.detail} for e in c.link.evidence],
            "reproduction": c.reproduction,
            "bot_section": c.bot_section,
            "leaves": [
                {
                    "node": v.leaf.node,
                    "subject": v.leaf.subject,
                    "value": v.leaf.value,
                    "removed": v.removed,
                    "status": v.status,
                    "why": v.why,
                    "knob": v.knob,
                    "placement": v.placement,
                    "offered": v.offered,
                }
                for v in c.leaves
            ],
        }

    data = {
        "version": 2,
        "scoring": card.strictness.name,
        "history_end": _day(card.history_end),
        **_figures(card),
        "windows": [_figures(c) for c in cards] if len(cards) > 1 else [],
        "proposals": [proposal(p) for p in card.proposals],
        "offered": [proposal(p) for p in card.offered],
        "linked": [linked(c) for c in card.linked],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def to_html(cards: Sequence[Scorecard]) -> str:
    """The Markdown tables as one plain page (no scripts, no external resources)."""
    body: list[str] = []
    in_table = False
    for line in to_markdown(cards).splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            if all(set(c) <= {"-"} for c in cells):
                continue
            if not in_table:
                body.append("<table>")
                in_table = True
                tag = "th"
            else:
                tag = "td"
            body.append(
                "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"
            )
            continue
        if in_table:
            body.append("</table>")
            in_table = False
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line.lstrip('# '))}</h{level}>")
        elif line.strip():
            body.append(f"<p>{html.escape(line)}</p>")
    if in_table:
        body.append("</table>")
    style = (
        "body{font:14px system-ui,sans-serif;margin:2em;max-width:1400px}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
        "padding:3px 6px;text-align:left;vertical-align:top}th{background:#f4f4f4}"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>recipe-sync agreement</title>"
        f"<style>{style}</style></head><body>" + "\n".join(body) + "</body></html>\n"
    )


def render(cards: Sequence[Scorecard], fmt: str) -> str:
    if fmt == "json":
        return to_json(cards)
    if fmt == "html":
        return to_html(cards)
    return to_markdown(cards)
