"""What every section of the alignment PR body uses: the budget of its long parts and the
escaping of what it quotes (trusted identifiers plain, the rest escaped or in code spans)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot import markdown as md
from bot.placeholders import as_variables

MAX_TABLE_ROWS = 12  # regression groups shown before the rest go into <details>


MAX_LISTED = 40  # items per <details> list


@dataclass(frozen=True)
class TextBudget:
    """How much of the long parts a body shows; a body over the limit is rebuilt compact."""

    table_rows: int = MAX_TABLE_ROWS  # regression groups in the table (the rest: <details>)
    detail_rows: int = 1_000  # regression groups inside <details>
    listed: int = MAX_LISTED  # items per list of what was left alone
    excerpts: bool = True  # job-log excerpts in the evidence section


FULL = TextBudget()
COMPACT = TextBudget(table_rows=3, detail_rows=0, listed=5, excerpts=False)


def code(value: object) -> str:
    """A value in a code span; a part known only at run time as the script's variable."""
    return md.code(as_variables(str(value)))


_PLAIN = re.compile(r"[A-Za-z0-9_ .,:;()=+/\-—]*")


_LOOSE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def plain(text: str) -> str:
    """Trusted identifiers (recipe, strategy and hardware names) as they are when they hold
    no Markdown (an intraword ``_`` is not emphasis); anything else escaped."""
    if _PLAIN.fullmatch(text) and not _LOOSE_UNDERSCORE.search(text):
        return text
    return md.text(text)


def prose(text: str) -> str:
    """Text with identifiers in code spans (:func:`bot.markdown.prose`), without its final
    period (the caller ends the sentence); a part known only at run time as the script's
    variable."""
    return md.prose(as_variables(text.strip().rstrip(".")))


_REF = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+")


def ref(bench_ref: str) -> str:
    """``owner/name#N`` stays a live cross-reference; anything else is escaped."""
    return bench_ref if _REF.fullmatch(bench_ref) else md.text(bench_ref)


_HEX = re.compile(r"[0-9a-f]{13,}")


def short_image(image: str) -> str:
    """An image or tag with its long hex run cut to 12 (``nightly-eed1f3d0c604``)."""
    return _HEX.sub(lambda m: m.group(0)[:12], image)


def shorten(text: str, images: Sequence[str]) -> str:
    """``text`` with the tags of ``images`` short: the edited images, in full in the summary."""
    for image in images:
        tag = image.rpartition(":")[2]
        if short_image(tag) != tag:
            text = text.replace(tag, short_image(tag))
    return text


def details(summary: str, lines: Sequence[str]) -> list[str]:
    """A collapsed block (the summary is plain text: GitHub renders no Markdown there)."""
    return [f"<details><summary>{md.text(summary)}</summary>", "", *lines, "", "</details>"]
