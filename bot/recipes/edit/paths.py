"""Node paths: ``strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args[0]``.

A path is a tuple of mapping keys (``str``) and sequence indices (``int``). Its string form is
the one the renderer's provenance uses: keys joined by dots, indices in brackets. A key that
contains a dot, a bracket or a quote, or that is empty, is written quoted in brackets,
JSON-style: ``meta["a.b"]``, ``["top.level"].x``.
"""

from __future__ import annotations

import json
import re

from bot.recipes.edit.errors import PathSyntaxError

PathPart = str | int
NodePath = tuple[PathPart, ...]

_PLAIN_KEY = re.compile(r"[^.\[\]\"']+")
_INDEX = re.compile(r"\[(-?[0-9]+)\]")


def format_path(path: NodePath) -> str:
    """The string form of a path; ``parse_path(format_path(p)) == p``."""
    out: list[str] = []
    for part in path:
        if isinstance(part, bool) or not isinstance(part, str | int):
            raise TypeError(f"path parts are str keys or int indices, not {part!r}")
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_KEY.fullmatch(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)


def parse_path(text: str) -> NodePath:
    """Parse ``a.b[0]`` / ``a["x.y"][2].c`` into a tuple; the empty string is the root."""
    parts: list[PathPart] = []
    pos = 0
    expect_key = True  # at the start or right after a dot
    while pos < len(text):
        char = text[pos]
        if char == "[":
            index = _INDEX.match(text, pos)
            if index:
                parts.append(int(index.group(1)))
                pos = index.end()
            elif text.startswith('["', pos):
                key, pos = _quoted_key(text, pos + 1)
                parts.append(key)
            else:
                raise PathSyntaxError(text, f'expected [N] or ["key"] at column {pos + 1}')
            expect_key = False
            continue
        if char == ".":
            if expect_key:
                raise PathSyntaxError(text, f"empty key at column {pos + 1}")
            pos += 1
            expect_key = True
            if pos == len(text):
                raise PathSyntaxError(text, "path ends with a dot")
            continue
        if not expect_key:
            raise PathSyntaxError(text, f"expected '.' or '[' at column {pos + 1}")
        plain = _PLAIN_KEY.match(text, pos)
        if not plain:
            raise PathSyntaxError(text, f"unexpected {char!r} at column {pos + 1}")
        parts.append(plain.group(0))
        pos = plain.end()
        expect_key = False
    return tuple(parts)


def _quoted_key(text: str, pos: int) -> tuple[str, int]:
    """Decode the JSON string starting at ``text[pos]`` and the ``]`` after it."""
    try:
        key, end = json.JSONDecoder().raw_decode(text, pos)
    except json.JSONDecodeError as err:
        raise PathSyntaxError(text, f"bad quoted key at column {pos + 1}: {err.msg}") from err
    if not isinstance(key, str) or not text.startswith("]", end):
        raise PathSyntaxError(text, f"expected a quoted key and ']' at column {pos + 1}")
    return key, end + 1


def as_path(path: str | NodePath) -> NodePath:
    """Accept either form; edits store tuples."""
    if isinstance(path, str):
        return parse_path(path)
    for part in path:
        if isinstance(part, bool) or not isinstance(part, str | int):
            raise TypeError(f"path parts are str keys or int indices, not {part!r}")
    return tuple(path)
