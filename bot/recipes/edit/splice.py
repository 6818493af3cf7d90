"""Line splices, and the bookkeeping that proves which original lines survived untouched.

Every edit becomes whole-line replacements. :class:`LineTracker` remembers, for each line of
the current text, which original line it is (or that it is new), so the changed ranges are
known exactly rather than guessed by a diff.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from bot.recipes.edit.edits import ChangedRange


@dataclass(frozen=True)
class Splice:
    """Replace lines ``start .. end-1`` (0-based) with ``lines`` (terminators included)."""

    start: int
    end: int
    lines: tuple[str, ...]


def split_lines(text: str) -> list[str]:
    """Lines with their terminators (``\\n`` or ``\\r\\n``); only the last may lack one."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


class LineTracker:
    """The current lines and, for each, the index of the original line it still is."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.original = list(lines)
        self.lines = list(lines)
        self.origin: list[int | None] = list(range(len(lines)))

    def text(self) -> str:
        return "".join(self.lines)

    def apply(self, splices: Sequence[Splice]) -> None:
        """Apply splices computed against the current lines (they must not overlap)."""
        ordered = sorted(splices, key=lambda s: (s.start, s.end))
        for first, second in itertools.pairwise(ordered):
            if second.start < first.end:
                raise AssertionError(f"overlapping splices {first} and {second}")
        for splice in reversed(ordered):
            if not 0 <= splice.start <= splice.end <= len(self.lines):
                raise AssertionError(f"splice out of range: {splice}")
            self.lines[splice.start : splice.end] = splice.lines
            self.origin[splice.start : splice.end] = [None] * len(splice.lines)

    def changed_ranges(self) -> tuple[ChangedRange, ...]:
        """Maximal runs of new / removed lines between lines that survived unchanged."""
        anchors = [(new, old) for new, old in enumerate(self.origin) if old is not None]
        previous_new, previous_old = -1, -1
        ranges: list[ChangedRange] = []
        for new, old in [*anchors, (len(self.lines), len(self.original))]:
            if old <= previous_old or self.lines[new : new + 1] != self.original[old : old + 1]:
                raise AssertionError("line bookkeeping is inconsistent")
            if new - previous_new > 1 or old - previous_old > 1:
                ranges.append(ChangedRange(previous_old + 2, old + 1, previous_new + 2, new + 1))
            previous_new, previous_old = new, old
        return tuple(ranges)


def unified_diff(old: str, new: str, file: str, context: int = 3) -> str:
    """A ``git apply``-able unified diff with ``a/`` and ``b/`` headers ('' when equal)."""
    if old == new:
        return ""
    out: list[str] = []
    diff = difflib.unified_diff(
        split_lines(old), split_lines(new), f"a/{file}", f"b/{file}", n=context
    )
    for line in diff:
        if line.endswith("\n"):
            out.append(line)
        else:  # the last line of a file without a final newline
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)
