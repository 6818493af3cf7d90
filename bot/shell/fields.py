"""Expansion results and POSIX field splitting.

Expansion yields *segments* (:class:`Seg`): pieces of text that remember whether they were
quoted (no globbing, no splitting) and whether they came from an unquoted expansion (subject
to IFS splitting). ``BREAK`` separates the elements of ``"$@"``/``"${A[@]}"``.
:func:`split_fields` then applies POSIX field splitting; :func:`join_pieces` and
:func:`pattern_of` read the pieces as one string or as a glob pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from bot.shell import patterns
from bot.shell.result import Unresolved
from bot.shell.text import Run, Text


@dataclass(slots=True)
class Seg:
    text: Text
    quoted: bool  # quoted in the script: literal for globbing, never split
    split: bool  # produced by an unquoted expansion: IFS splitting applies
    void: bool = False  # a quoted "${A[@]}" of zero elements: contributes no word


class _Break:
    __slots__ = ()

    def __repr__(self) -> str:
        return "BREAK"


BREAK: Final = _Break()
Piece = Seg | _Break


@dataclass(slots=True)
class Field:
    text: Text
    glob: bool  # carries unquoted glob characters (bash would try pathname expansion)


DEFAULT_IFS = " \t\n"


def utf8_len(first: int) -> int:
    if first < 0x80:
        return 1
    if first >> 5 == 0b110:
        return 2
    if first >> 4 == 0b1110:
        return 3
    if first >> 3 == 0b11110:
        return 4
    return 1


def split_fields(pieces: list[Piece], ifs: str) -> list[Field]:
    """POSIX field splitting of expansion results; quoted text is never split."""
    pieces = [p for p in pieces if not (isinstance(p, Seg) and p.void)]
    separators = frozenset(ifs)
    if not any(
        isinstance(p, _Break) or (p.split and not separators.isdisjoint(p.text.s)) for p in pieces
    ):
        segs = [p for p in pieces if isinstance(p, Seg)]
        if not segs:
            return []
        if not any(s.quoted for s in segs) and not any(s.text.s for s in segs):
            return []  # unquoted empty expansion: no word at all
        text = Text.join(s.text for s in segs)
        return [Field(text.with_taints(_dropped_taints(segs)), _has_glob(segs))]

    white = {c for c in ifs if c in " \t\n"}
    delimiter = re.compile("[" + re.escape(ifs) + "]+")
    fields: list[Field] = []
    cur: list[Run] = []
    glob = False
    exists = False
    pending = ""  # IFS characters seen since the last content

    def flush() -> None:
        nonlocal cur, glob, exists
        fields.append(Field(Text(cur), glob))
        cur, glob, exists = [], False, False

    def resolve() -> None:
        # one delimiter per non-white IFS character (each ends a field, even an empty one);
        # white space alone ends a field only if there is one
        nonlocal pending
        if pending:
            hard = sum(1 for c in pending if c not in white)
            if hard:
                for _ in range(hard):
                    flush()
            elif exists:
                flush()
            pending = ""

    def content(run: Run, quoted: bool) -> None:
        nonlocal glob, exists
        resolve()
        if run.s or run.taints:
            cur.append(run)
        if not quoted and _globby(run.s):
            glob = True
        exists = exists or quoted or bool(run.s)

    for piece in pieces:
        if isinstance(piece, _Break):
            resolve()
            if exists:
                flush()
            continue
        if not piece.split:
            if not piece.text.runs and piece.quoted:
                resolve()
                exists = True
            for run in piece.text.runs:
                content(run, piece.quoted)
            continue
        for run in piece.text.runs:
            position = 0
            for match in delimiter.finditer(run.s):
                if match.start() > position:
                    content(Run(run.s[position : match.start()], run.origin, run.taints), False)
                pending += match.group()
                position = match.end()
            if position < len(run.s):
                content(Run(run.s[position:], run.origin, run.taints), False)
    resolve()
    if exists:
        flush()
    return fields


def _dropped_taints(segs: list[Seg]) -> frozenset[Unresolved]:
    out: set[Unresolved] = set()
    for seg in segs:
        if not seg.text.s:
            out |= seg.text.taints
    return frozenset(out)


def _globby(s: str) -> bool:
    """Whether ``s`` holds a glob character (``*``, ``?``, ``[``)."""
    return "*" in s or "?" in s or "[" in s


def _has_glob(segs: list[Seg]) -> bool:
    return any(not s.quoted and _globby(s.text.s) for s in segs)


def join_pieces(pieces: list[Piece], sep: str = " ") -> Text:
    """Pieces as one string (assignment context: no splitting, ``"$@"`` joined by spaces)."""
    out: list[Text] = []
    for piece in pieces:
        out.append(Text.lit(sep) if isinstance(piece, _Break) else piece.text)
    return Text.join(out)


def pattern_of(pieces: list[Piece]) -> tuple[str, frozenset[Unresolved]]:
    """Pieces as a glob pattern: quoted characters escaped, unquoted ones active."""
    parts: list[str] = []
    taints: set[Unresolved] = set()
    for piece in pieces:
        if isinstance(piece, _Break):
            parts.append(" ")
            continue
        taints |= piece.text.taints
        parts.append(patterns.escape_glob(piece.text.s) if piece.quoted else piece.text.s)
    return "".join(parts), frozenset(taints)
