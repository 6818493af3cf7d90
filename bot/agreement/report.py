"""The agreement scorecard as Markdown, JSON or one self-contained HTML page (deterministic)."""

from __future__ import annotations

import html
import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from bot.agreement.practice import practice
from bot.agreement.run import Scorecard
from bot.agreement.score import ADOPTIONS, RECALLS, LinkedChange, Proposal, breakdown

TARGETS = (
    ("adopted at the same node", 0.40),
    ("adopted with the same value (any node)", 0.60),
    ("linked maintainer leaves proposed (any node)", 0.50),
    ("maintainers' reproduction sections the bot also wrote", 0.75),
)


def _day(moment: int) -> str:
    return datetime.fromtimestamp(moment, UTC).date().isoformat()


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "0/0"


def headline(card: Scorecard) -> list[tuple[str, int, int, float]]:
    """(measure, hits, of, target) — the four figures the issue's targets are stated in."""
    t = card.totals
    recall_hit = t.linked_leaves["same node"] + t.linked_leaves["elsewhere"]
    return [
        (TARGETS[0][0], t.adopted_same_node, t.scored, TARGETS[0][1]),
        (TARGETS[1][0], t.adopted_any_node, t.scored, TARGETS[1][1]),
        (TARGETS[2][0], recall_hit, t.leaves_total, TARGETS[2][1]),
        (TARGETS[3][0], t.reproduction_written, t.reproduction_wanted, TARGETS[3][1]),
    ]


def summary(card: Scorecard) -> str:
    """One line for the console and the README."""
    t = card.totals
    parts = [
        f"{len(card.proposals)} distinct YAML edits proposed ({t.scored} with ≥ 5 days of history)",
        f"same node {_pct(t.adopted_same_node, t.scored)}",
        f"same value {_pct(t.adopted_any_node, t.scored)}",
        "linked leaves proposed "
        + _pct(t.linked_leaves["same node"] + t.linked_leaves["elsewhere"], t.leaves_total),
        f"reproduction sections {_pct(t.reproduction_written, t.reproduction_wanted)}",
    ]
    return "; ".join(parts)


def _edit_text(proposal: Proposal) -> str:
    edit = proposal.edit
    value = "(removed)" if proposal.removes else f"`{edit.after}`"
    return f"`{edit.node}` {edit.subject} = {value}"


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


def to_markdown(card: Scorecard) -> str:
    window = f"{card.since or 'start'} … {card.until or 'end'}"
    lines = [
        "# recipe-sync agreement score",
        "",
        f"- benchmark PRs merged {window} (`{card.bench}`), replayed where the App would have "
        f"seen them open; recipes history `{card.recipes}` to {_day(card.history_end)}",
        f"- {len(card.replays)} PRs replayed, "
        f"{sum(1 for r in card.replays if r.row.outcome == 'alignment PR')} would open an "
        f"alignment PR; {len(card.commits)} maintainer commits read, {len(card.links)} links "
        "to replayed PRs, each replayed again just before its commit",
        "",
        "| measure | result | target |",
        "|---|---|---|",
    ]
    for name, hit, whole, target in headline(card):
        mark = "met" if whole and hit / whole >= target else "not met"
        lines.append(f"| {name} | {_pct(hit, whole)} | ≥ {target:.0%} ({mark}) |")
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
    lines += ["## Every proposal", "", "| PRs | edit | knob | outcome | maintainers |"]
    lines.append("|---|---|---|---|---|")
    for proposal in sorted(card.proposals, key=lambda p: (p.edit.recipe, p.edit.node)):
        prs = ", ".join(f"#{n}" for n in proposal.prs)
        lines.append(
            f"| {prs} | {_cell(_edit_text(proposal))} | {proposal.knob} | {proposal.outcome} "
            f"| {_cell(_match_text(proposal))} |"
        )
    lines += ["", "## Where maintainers placed linked leaves, by knob class", ""]
    found = practice(card.proposals, card.linked, "", "")
    lines += ["| knob | linked leaves | placements | bot proposals adopted |", "|---|---|---|---|"]
    for entry in found.classes:
        where = ", ".join(f"{name} {count}" for name, count in entry.placements) or "–"
        lines.append(
            f"| {entry.knob} | {entry.linked} | {where} | {entry.adopted} of {entry.proposed} |"
        )
    lines += ["", "## Replays that propose or are linked", ""]
    lines += ["| PR | merged | replayed on recipes | outcome | reason |", "|---|---|---|---|---|"]
    linked_prs = {link.pr for link in card.links}
    for replay in card.replays:
        row = replay.row
        if row.outcome != "alignment PR" and row.number not in linked_prs:
            continue
        lines.append(
            f"| #{row.number} | {row.day} | {replay.recipes_sha[:7]} {_day(replay.moment)} "
            f"| {row.outcome} | {_cell(row.reason[:300])} |"
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
            f"**{verdict.status}** — {_cell(verdict.why)}"
        )
    if change.moved:
        lines.append(f"  - moved (not counted): {len(change.moved)} leaves")
    lines.append("")
    return lines


def to_json(card: Scorecard) -> str:
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
                }
                for v in c.leaves
            ],
        }

    data = {
        "version": 1,
        "since": card.since,
        "until": card.until,
        "history_end": _day(card.history_end),
        "summary": summary(card),
        "headline": [
            {"measure": name, "hits": hit, "of": whole, "target": target}
            for name, hit, whole, target in headline(card)
        ],
        "proposals": [proposal(p) for p in card.proposals],
        "linked": [linked(c) for c in card.linked],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def to_html(card: Scorecard) -> str:
    """The Markdown tables as one plain page (no scripts, no external resources)."""
    body: list[str] = []
    in_table = False
    for line in to_markdown(card).splitlines():
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


def render(card: Scorecard, fmt: str) -> str:
    if fmt == "json":
        return to_json(card)
    if fmt == "html":
        return to_html(card)
    return to_markdown(card)
