"""Guide lines that name an image the patch re-pins (docs/alignment.md §6b).

A line of the hand-written guide that names a replaced image reference, or its tag on another
image (``docker pull vllm/vllm-openai:<old tag>`` when the ROCm image of that tag is re-pinned),
is re-pinned only when it is unambiguously about hardware the patch moves: the GPUs (else the
generation, else the brand) the line names, or else its heading path names, all move to one
new image; the reference becomes that image. A line that names no hardware, or hardware that
keeps its image, is left for a maintainer and listed with its line. Managed blocks are not
read; the guide is spliced line for line and re-parsed (:func:`bot.recipes.guide.splice_guide`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.align.nodes import hw_label
from bot.align.profile import Profile
from bot.align.reproduction import hardware_named
from bot.errors import RecipeSyncError
from bot.recipes import RecipesRepo, RenderRequest, render
from bot.recipes.guide import (
    GuideError,
    Heading,
    headings,
    locate_guide,
    managed_blocks,
    splice_guide,
)


@dataclass(frozen=True)
class ImageLine:
    """A guide line naming an image the patch re-pins, and what the patch did with it."""

    line: int  # 1-based line in the patched recipe file
    old: str  # the image reference the line names
    new: str | None  # what it names now (None: left for a maintainer)
    why: str = ""  # why it was left


def image_moves(
    before: RecipesRepo, after: RecipesRepo, profiles: Sequence[Profile]
) -> dict[str, tuple[str, str]]:
    """hardware id → (image before, image after) for every hardware of the profiles' variants
    (same recipe file); equal images when the patch leaves that hardware's image alone."""
    out: dict[str, tuple[str, str]] = {}
    for model, variant in dict.fromkeys((p.model, p.variant) for p in profiles):
        for hw in before.hardware:
            request = RenderRequest(model=model, hardware=hw, variant=variant)
            try:
                old, new = render(before, request).image, render(after, request).image
            except RecipeSyncError:
                continue  # not rendered on this hardware
            if old and new:
                out.setdefault(hw, (old, new))
    return out


_IMAGE_LIKE = re.compile(r"[\w.-]+/[\w./-]+(?::[\w.-]+)?")


def _ref(image: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w./-]){re.escape(image)}(?![\w.-])")


def _mentions(line: str, image: str) -> bool:
    return _ref(image).search(line) is not None


def _same_tag(line: str, image: str) -> str | None:
    """Another image reference on ``line`` with ``image``'s tag (its pinned day-0 sibling)."""
    repo, _, tag = image.rpartition(":")
    if not repo or not tag:
        return None
    for match in re.finditer(rf"(?<![\w./-])([\w./-]+):{re.escape(tag)}(?![\w.-])", line):
        if match.group(1) != repo:
            return match.group(0)
    return None


def update_image_lines(
    text: str,
    path: str,
    recipes: RecipesRepo,
    moves: Mapping[str, tuple[str, str]],
) -> tuple[str, tuple[ImageLine, ...]]:
    """The recipe text with the guide's unambiguous lines re-pinned, and every line naming a
    replaced image or its tag on another image (updated or left)."""
    replaced = {old for old, new in moves.values() if old != new}
    if not replaced:
        return text, ()
    try:
        guide = locate_guide(text, path)
    except GuideError:
        return text, ()
    if guide is None:
        return text, ()
    md = list(guide.lines)
    inside = {i for b in managed_blocks(md) for i in range(b.start, b.end)}
    heads = headings(guide.markdown)
    hardware = list(moves)
    found: list[ImageLine] = []
    edits: dict[int, str] = {}
    for index, line in enumerate(md):
        if index in inside:
            continue
        refs = [old for old in sorted(replaced) if _mentions(line, old)]
        refs += [r for old in sorted(replaced) if (r := _same_tag(line, old)) and r not in refs]
        if not refs:
            continue
        at = guide.file_line(index)
        prose = _IMAGE_LIKE.sub(" ", line)  # "vllm-openai-rocm" names no brand
        named = hardware_named(prose, recipes, hardware) or hardware_named(
            _heading_path(heads, index), recipes, hardware
        )
        kept = [hw for hw in named if moves[hw][0] == moves[hw][1]]
        targets = {moves[hw][1] for hw in named}
        for ref in refs:
            if not named:
                found.append(ImageLine(at, ref, None, "it names no hardware"))
            elif kept or len(targets) != 1:
                labels = ", ".join(hw_label(recipes, hw) for hw in kept or named)
                found.append(ImageLine(at, ref, None, f"it is also about {labels}"))
            else:
                new = next(iter(targets))
                edits[index] = _ref(ref).sub(new.replace("\\", "\\\\"), edits.get(index, line))
                found.append(ImageLine(at, ref, new))
    edited = text
    try:
        for index in sorted(edits):
            edited = splice_guide(edited, guide, index, index + 1, [edits[index]], path)
            guide = locate_guide(edited, path) or guide
    except GuideError as err:
        why = f"the guide could not be edited safely ({err})"
        return text, tuple(ImageLine(i.line, i.old, None, i.why or why) for i in found)
    return edited, tuple(found)


def _heading_path(heads: Sequence[Heading], index: int) -> str:
    """The headings above Markdown line ``index``, outermost first, as one string."""
    path: list[Heading] = []
    for heading in heads:
        if heading.line >= index:
            break
        while path and path[-1].level >= heading.level:
            path.pop()
        path.append(heading)
    return " / ".join(h.title for h in path)
