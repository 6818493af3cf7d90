"""Placing the sections in the recipe's guide (:mod:`bot.recipes.guide` keeps every other
byte): an existing block is replaced in place; else after the section of the same hardware,
before Troubleshooting, or at the end (policy ``guide_sections``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.align.reproduction.blocks import section_body
from bot.align.reproduction.model import KIND, GuideDrift, GuidePlacement, ReproSection
from bot.recipes.guide import (
    GuideError,
    headings,
    insertion_point,
    locate_guide,
    managed_blocks,
    place_block,
    section_end,
)


def heading_level(text: str, section: ReproSection, file: str) -> int:
    """The level of the section's heading: an existing block keeps its own; after the section
    that documents the same hardware, a subsection of a ``##`` or a sibling of a deeper one;
    elsewhere (before Troubleshooting, at the end) a ``##`` section."""
    guide = locate_guide(text, file)
    if guide is None:
        return 2
    md_lines = list(guide.lines)
    for block in managed_blocks(md_lines):
        if block.kind == KIND and block.id == section.block_id:
            for line in md_lines[block.start : block.end]:
                match = re.match(r"^(#{1,6}) ", line)
                if match:
                    return len(match.group(1))
    _, _, level = insertion_point(md_lines, headings(guide.markdown), section.after)
    if level is None:
        return 2
    return 3 if level <= 2 else level


def apply_sections(
    text: str,
    file: str,
    sections: Sequence[ReproSection],
    drift: Sequence[GuideDrift],
    policy: str,
    *,
    edited: bool = True,
) -> tuple[str, tuple[GuidePlacement, ...]]:
    """Put each section into the guide; a hand-written section that already documents this
    benchmark on this hardware is left alone (``report``) or replaced (``adopt``). When the
    recipe's nodes are not ``edited``, a new section is written only when the benchmark's
    command differs from the recipe's (an existing block is still kept in sync)."""
    placements: list[GuidePlacement] = []
    for section in sections:
        try:
            if locate_guide(text, file) is None:
                placements.append(GuidePlacement(section, "skipped", "", "the recipe has no guide"))
                continue
        except GuideError as err:
            placements.append(GuidePlacement(section, "skipped", "", str(err)))
            continue
        if not edited and not section.has_deltas and not _has_block(text, file, section):
            continue
        hand = [
            d
            for d in drift
            if not d.managed
            and d.cites_benchmark
            and (d.hardware, d.variant) == (section.hardware, section.variant)
        ]
        replace_lines = None
        if hand and not _has_block(text, file, section):
            if policy != "adopt":
                placements.append(
                    GuidePlacement(
                        section,
                        "skipped",
                        "",
                        f"the hand-written section “{hand[0].heading}” (line {hand[0].line}) "
                        "documents this benchmark; recipe-sync reports its drift and does not "
                        "rewrite it (policy guide_sections: report)",
                    )
                )
                continue
            replace_lines = _hand_section(text, file, hand[0])
        level = heading_level(text, section, file)
        try:
            edit = place_block(
                text,
                KIND,
                section.block_id,
                section_body(section, level),
                after=section.after,
                replace_lines=replace_lines,
                file=file,
            )
        except GuideError as err:
            placements.append(GuidePlacement(section, "skipped", "", str(err)))
            continue
        text = edit.text
        placements.append(GuidePlacement(section, edit.action, edit.where))
    return text, tuple(placements)


def _has_block(text: str, file: str, section: ReproSection) -> bool:
    guide = locate_guide(text, file)
    return guide is not None and any(
        b.kind == KIND and b.id == section.block_id for b in managed_blocks(guide.lines)
    )


def _hand_section(text: str, file: str, drift: GuideDrift) -> tuple[int, int] | None:
    """Markdown lines [a, b) of the hand-written section holding ``drift``'s command."""
    guide = locate_guide(text, file)
    if guide is None:
        return None
    md_line = drift.line - guide.start - 1
    heads = [h for h in headings(guide.markdown) if h.line <= md_line]
    if not heads:
        return None
    head = heads[-1]
    end = section_end(guide.lines, headings(guide.markdown), head)
    return head.line, end
