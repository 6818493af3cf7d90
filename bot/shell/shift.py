"""A cached evaluation's library lines, moved with the statements they are in.

An edit of a helper the evaluation never read moves every later line of the library
(InferenceX's benchmark library: a line added to an eval summary helper moves the serve
helpers below it), while everything the evaluation read stays as it was. Two blobs of one
library digest (:func:`bot.shell.cache.library_digest`, counted without positions) hold the
same statements in the same order, so each line the result cites moves by what its
statement moved. A line outside every counted statement, or a line number the result holds
in a form this cannot tell apart from a value (a case arm's "at line N", a line number in
the launch's words), makes the result unmovable: the caller evaluates again.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import replace

from bot.shell.result import Alternative, ScriptResult, SourceSpan, Unresolved

# the first and last row (0-based) of each statement a library digest counts, in order
Layout = tuple[tuple[int, int], ...]
Moves = Mapping[str, tuple[Layout, Layout]]  # library path → (layout then, layout now)


class _Unmovable(Exception):
    pass


class _Mover:
    def __init__(self, moves: Moves) -> None:
        self.moves = {
            path: (then, [row for row, _ in then], now) for path, (then, now) in moves.items()
        }
        # `path:line` where the path is not the tail of a longer one
        self.place = re.compile(
            r"(?<![\w./-])(" + "|".join(re.escape(path) for path in moves) + r"):(\d+)"
        )

    def line(self, file: str, line: int | None) -> int | None:
        found = self.moves.get(file)
        if found is None or line is None:
            return line
        then, starts, now = found
        index = bisect.bisect_right(starts, line - 1) - 1
        if index < 0 or then[index][1] < line - 1:
            raise _Unmovable(f"{file}:{line} is in no statement the digest counts")
        return line + now[index][0] - then[index][0]

    def text(self, text: str) -> str:
        if "at line " in text:
            raise _Unmovable("a line number without its file")
        return self.place.sub(lambda m: f"{m[1]}:{self.line(m[1], int(m[2]))}", text)

    def value(self, text: str) -> str:
        """A word of the launch: kept as it is; one naming a library line is not a value
        this can move."""
        if self.place.search(text):
            raise _Unmovable("a library line in the launch's words")
        return text

    def span(self, span: SourceSpan) -> SourceSpan:
        line = self.line(span.file, span.line)
        return span if line == span.line else SourceSpan(span.file, line or 0)

    def item(self, item: Unresolved) -> Unresolved:
        return Unresolved(
            self.text(item.what), self.text(item.why), item.file, self.line(item.file, item.line)
        )

    def alternative(self, alternative: Alternative) -> Alternative:
        for word in (*alternative.argv, *alternative.env.values()):
            self.value(word)
        return replace(alternative, conditions=tuple(self.text(c) for c in alternative.conditions))


def shift_result(result: ScriptResult, moves: Moves) -> ScriptResult | None:
    """``result`` with every line of the libraries in ``moves`` moved with its statement;
    None when a line cannot be moved (the caller evaluates again)."""
    if not moves:
        return result
    mover = _Mover(moves)
    try:
        for word in (*result.argv, *result.env.values(), *result.files.values()):
            mover.value(word)
        return replace(
            result,
            argv_sources=tuple(mover.span(span) for span in result.argv_sources),
            unresolved=tuple(mover.item(item) for item in result.unresolved),
            assumptions=tuple(mover.item(item) for item in result.assumptions),
            invalid=mover.text(result.invalid) if result.invalid is not None else None,
            reason=mover.text(result.reason) if result.reason is not None else None,
            launch=mover.span(result.launch) if result.launch is not None else None,
            alternatives=tuple(mover.alternative(a) for a in result.alternatives),
            reach={mover.item(item): places for item, places in result.reach.items()},
        )
    except _Unmovable:
        return None
