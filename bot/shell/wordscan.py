"""Byte-level scanning of a word's source: brace expansion and matching brackets.

Pure functions over a :class:`ParsedFile`'s bytes: :func:`brace_variants` expands ``a{b,c}``
and ``{1..8}`` into byte ranges and generated text; :func:`find_close` and
:func:`pattern_end` find where a bracketed or ``${x/pat/rep}`` part ends, quotes respected.
"""

from __future__ import annotations

import re

from bot.shell.parse import ParsedFile
from bot.shell.textutils import is_integer

SPECIAL_PARAMS = "@*#?$!-0"
NAME_START = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
NAME_CHARS = NAME_START | frozenset(b"0123456789")
DIGITS = frozenset(b"0123456789")

BracePart = tuple[int, int] | str  # a byte range of the word, or generated text
_SEQUENCE = re.compile(r"^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$")
MAX_BRACE_WORDS = 10_000


def _brace_scan(data: bytes, start: int, end: int, ends: dict[int, int]) -> list[tuple[int, int]]:
    """Top-level ``{`` … ``}`` pairs outside quotes and ``${…}``/``$(…)``."""
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    i = start
    while i < end:
        c = data[i]
        if c == 0x5C:
            i += 2
            continue
        if c == 0x27:
            close = data.find(b"'", i + 1, end)
            i = end if close == -1 else close + 1
            continue
        if c == 0x22:
            i += 1
            while i < end and data[i] != 0x22:
                if data[i] == 0x24 and i in ends:
                    i = ends[i]
                    continue
                i += 2 if data[i] == 0x5C else 1
            i += 1
            continue
        if c == 0x24 and i in ends:
            i = ends[i]
            continue
        if c == 0x24 and i + 1 < end and data[i + 1] == 0x7B:
            i += 2
            continue
        if c == 0x7B:
            stack.append(i)
        elif c == 0x7D and stack:
            opened = stack.pop()
            if not stack:
                pairs.append((opened, i))
        i += 1
    return pairs


def _top_commas(data: bytes, start: int, end: int, ends: dict[int, int]) -> list[int]:
    commas: list[int] = []
    depth = 0
    i = start
    while i < end:
        c = data[i]
        if c == 0x5C:
            i += 2
            continue
        if c in (0x27, 0x22):
            close = data.find(bytes([c]), i + 1, end)
            i = end if close == -1 else close + 1
            continue
        if c == 0x24 and i in ends:
            i = ends[i]
            continue
        if c == 0x7B:
            depth += 1
        elif c == 0x7D:
            depth -= 1
        elif c == 0x2C and depth == 0:
            commas.append(i)
        i += 1
    return commas


def _sequence(text: str) -> list[str] | None:
    match = _SEQUENCE.match(text)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if is_integer(first, signed=True) and is_integer(last, signed=True):
        a, b = int(first), int(last)
        if abs(b - a) // step > MAX_BRACE_WORDS:
            return None
        width = (
            max(len(first), len(last))
            if first.lstrip("-").startswith("0") or last.lstrip("-").startswith("0")
            else 0
        )
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(v).zfill(width) if width else str(v) for v in values]
    if first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in values]
    return None


# bytes that open a quote, an escape, an expansion, a brace, a glob, a tilde or a redirection:
# a word with none of them is its own text whatever the shell's state (no splitting, no
# pathname expansion), so its field can be kept with the parsed file
_NOT_PLAIN = re.compile(rb"[\\'\"$`~<>{}*?\[\]()]")


def plain_word(data: bytes, start: int, end: int) -> bool:
    return _NOT_PLAIN.search(data, start, end) is None


def brace_variants(pf: ParsedFile, start: int, end: int) -> list[list[BracePart]] | None:
    """Bash brace expansion of the word [start, end): ``a{b,c}`` and ``{1..8}``; None if the
    word has none (the common case)."""
    data = pf.data
    if b"{" not in data[start:end]:
        return None
    for opened, closed in _brace_scan(data, start, end, pf.ends):
        inner = pf.slice(opened + 1, closed)
        commas = _top_commas(data, opened + 1, closed, pf.ends)
        alternatives: list[list[BracePart]]
        sequence = _sequence(inner) if not commas else None
        if sequence is not None:
            alternatives = [[value] for value in sequence]
        elif commas:
            bounds = [opened + 1, *(c + 1 for c in commas)]
            stops = [*commas, closed]
            alternatives = []
            for a, b in zip(bounds, stops, strict=True):
                nested = brace_variants(pf, a, b)
                alternatives.extend(nested if nested is not None else [[(a, b)]])
        else:
            continue
        suffix = brace_variants(pf, closed + 1, end) or [[(closed + 1, end)]]
        out: list[list[BracePart]] = []
        for alternative in alternatives:
            for tail in suffix:
                out.append([(start, opened), *alternative, *tail])
                if len(out) > MAX_BRACE_WORDS:
                    return None
        return out
    return None


def find_close(pf: ParsedFile, i: int, end: int, open_b: int, close_b: int) -> int:
    """Index just past the bracket matching the one at ``i`` (quotes respected)."""
    data = pf.data
    depth = 0
    j = i
    while j < end:
        c = data[j]
        if c == 0x5C:
            j += 2
            continue
        if c == 0x27:
            close = data.find(b"'", j + 1, end)
            j = end if close == -1 else close + 1
            continue
        if c == 0x22:
            j += 1
            while j < end and data[j] != 0x22:
                j += 2 if data[j] == 0x5C else 1
            j += 1
            continue
        if c == open_b:
            depth += 1
        elif c == close_b:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return end


def pattern_end(pf: ParsedFile, i: int, end: int) -> int:
    """Position of the ``/`` that ends the pattern of ``${x/pat/rep}`` (or ``end``)."""
    data = pf.data
    while i < end:
        c = data[i]
        if c == 0x5C:
            i += 2
            continue
        if c == 0x27:
            close = data.find(b"'", i + 1, end)
            i = end if close == -1 else close + 1
            continue
        if c == 0x22:
            i = find_close_quote(pf, i, end)
            continue
        if c == 0x24 and i + 1 < end and data[i + 1] in b"{(":
            i = pf.ends.get(i) or find_close(
                pf, i + 1, end, data[i + 1], 0x7D if data[i + 1] == 0x7B else 0x29
            )
            continue
        if c == 0x2F:
            return i
        i += 1
    return end


def find_close_quote(pf: ParsedFile, i: int, end: int) -> int:
    data = pf.data
    j = i + 1
    while j < end and data[j] != 0x22:
        j += 2 if data[j] == 0x5C else 1
    return j + 1


def name_end(data: bytes, p: int, end: int) -> int:
    """End of the parameter name at ``p`` in ``${…}``: a name, digits or one special."""
    q = p
    if q < end and data[q] in NAME_START:
        while q < end and data[q] in NAME_CHARS:
            q += 1
    elif q < end and data[q] in DIGITS:
        while q < end and data[q] in DIGITS:
            q += 1
    elif q < end and chr(data[q]) in SPECIAL_PARAMS:
        q += 1
    return q


def offset_end(data: bytes, start: int, end: int) -> int:
    """Position of the ``:`` that ends the offset of ``${x:offset:length}`` (or ``end``)."""
    colon = start
    depth = 0
    while colon < end:
        c = data[colon]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif c == 0x3A and depth == 0 and not (colon > start and data[colon - 1] == 0x3F):
            break
        colon += 1
    return colon
