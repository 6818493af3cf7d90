"""Bash pattern matching (globs in ``case``, ``[[ == ]]``, ``${x#pat}``) and ``=~`` regexes.

Patterns arrive as strings in which characters that were quoted in the script are
backslash-escaped, so ``"$prefix"*`` matches a literal prefix followed by anything.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v",
    "blank": " \\t",
    "xdigit": "0-9A-Fa-f",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "word": "a-zA-Z0-9_",
    "cntrl": "\\x00-\\x1f\\x7f",
    "print": "\\x20-\\x7e",
    "graph": "\\x21-\\x7e",
}

GLOB_SPECIAL = frozenset("*?[]\\")


def escape_glob(text: str) -> str:
    """Make every character of ``text`` match literally."""
    return "".join("\\" + c if c in GLOB_SPECIAL else c for c in text)


def _bracket(pattern: str, start: int) -> tuple[str, int] | None:
    """Translate a ``[...]`` expression starting at ``start``; None when it is not one."""
    i = start + 1
    negate = False
    if i < len(pattern) and pattern[i] in "!^":
        negate = True
        i += 1
    parts: list[str] = []
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            body = "".join(parts)
            return ("[^" if negate else "[") + body + "]", i + 1
        first = False
        if c == "[" and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            if end != -1 and pattern[i + 2 : end] in _CLASSES:
                parts.append(_CLASSES[pattern[i + 2 : end]])
                i = end + 2
                continue
        if c == "\\" and i + 1 < len(pattern):
            parts.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "-" and parts and i + 1 < len(pattern) and pattern[i + 1] != "]":
            parts.append("-")
            i += 1
            continue
        parts.append(re.escape(c) if c != "-" else "\\-")
        i += 1
    return None


@lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 < len(pattern):
                out.append(re.escape(pattern[i + 1]))
                i += 2
            else:
                out.append("\\\\")
                i += 1
        elif c == "*":
            out.append(".*")
            i += 1
        elif c == "?":
            out.append(".")
            i += 1
        elif c == "[":
            bracket = _bracket(pattern, i)
            if bracket is None:
                out.append("\\[")
                i += 1
            else:
                out.append(bracket[0])
                i = bracket[1]
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def has_glob(pattern: str) -> bool:
    """True if the pattern has an unescaped glob character."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] in "*?[":
            return True
        i += 1
    return False


def unescape(pattern: str) -> str:
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.DOTALL)


def matches(pattern: str, text: str) -> bool:
    if not has_glob(pattern):
        return unescape(pattern) == text
    return glob_regex(pattern).fullmatch(text) is not None


def remove_prefix(text: str, pattern: str, longest: bool) -> str:
    regex = glob_regex(pattern)
    order = range(len(text), -1, -1) if longest else range(len(text) + 1)
    for i in order:
        if regex.fullmatch(text, 0, i):
            return text[i:]
    return text


def remove_suffix(text: str, pattern: str, longest: bool) -> str:
    regex = glob_regex(pattern)
    order = range(len(text) + 1) if longest else range(len(text), -1, -1)
    for i in order:
        if regex.fullmatch(text, i):
            return text[:i]
    return text


def replace(text: str, pattern: str, replacement: str, mode: str) -> str:
    """``${x/pat/rep}`` (mode '/'), ``//`` (all), ``/#`` (anchored start), ``/%`` (end)."""
    if pattern == "":
        return text
    regex = glob_regex(pattern)
    if mode == "#":
        for i in range(len(text), -1, -1):
            if regex.fullmatch(text, 0, i):
                return replacement + text[i:]
        return text
    if mode == "%":
        for i in range(len(text) + 1):
            if regex.fullmatch(text, i):
                return text[:i] + replacement
        return text
    out: list[str] = []
    pos = 0
    replaced = False
    while pos <= len(text):
        if replaced and mode != "//":
            break
        found = None
        for end in range(len(text), pos - 1, -1):  # longest match at this position
            if end > pos and regex.fullmatch(text, pos, end):
                found = end
                break
        if found is None:
            if pos < len(text):
                out.append(text[pos])
            pos += 1
            continue
        out.append(replacement)
        pos = found
        replaced = True
    out.append(text[pos:])
    return "".join(out)


def _ere_bracket(ere: str, start: int) -> tuple[str, int]:
    """Translate the POSIX bracket expression at ``start`` (backslash is literal in POSIX)."""
    i = start + 1
    negate = i < len(ere) and ere[i] == "^"
    if negate:
        i += 1
    parts: list[str] = []
    first = True
    while i < len(ere):
        c = ere[i]
        if c == "]" and not first:
            return ("[^" if negate else "[") + "".join(parts) + "]", i + 1
        first = False
        if ere.startswith("[:", i):
            close = ere.find(":]", i + 2)
            if close != -1 and ere[i + 2 : close] in _CLASSES:
                parts.append(_CLASSES[ere[i + 2 : close]])
                i = close + 2
                continue
        if c == "-" and parts and i + 1 < len(ere) and ere[i + 1] != "]":
            parts.append("-")
        else:
            parts.append("\\" + c if c in "\\]^-[" else c)
        i += 1
    return re.escape(ere[start:]), len(ere)  # unterminated: literal


def ere_to_python(ere: str) -> str:
    """POSIX extended regex → Python ``re`` (bracket expressions are the real difference)."""
    out: list[str] = []
    i = 0
    while i < len(ere):
        c = ere[i]
        if c == "\\" and i + 1 < len(ere):
            out.append(ere[i : i + 2])
            i += 2
        elif c == "[":
            text, i = _ere_bracket(ere, i)
            out.append(text)
        else:
            out.append(c)
            i += 1
    return "".join(out)
