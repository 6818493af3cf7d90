"""Safe GitHub-flavoured Markdown from untrusted text (job names, log lines, changelog text).

Untrusted text must not inject Markdown or HTML into a PR body or comment: no raw HTML (``<``
becomes ``&lt;``), no @mentions (a zero-width space follows ``@``), no links, emphasis or
headings, no table breaks. Code goes in spans or fences longer than any backtick run it
contains, so it cannot close them. ``<!--`` and ``-->`` never appear in the output, not even in
code, because bots find their own comments by such markers in the raw body.
"""

from __future__ import annotations

import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]|~#!])")
_LINE_START = re.compile(r"^(\s*)([-+=>]|\d+[.)])")
_BACKTICKS = re.compile(r"`+")
_SAFE_URL = re.compile(r"https://[A-Za-z0-9.-]+(?:/[A-Za-z0-9._~%!$&'*+,;=:@/?#-]*)?")
ZWSP = "\u200b"
MAX_BODY = 60_000  # GitHub rejects bodies over 65,536 characters; keep a margin

_FENCE = re.compile(r"(^|\n)(`{3,}|~{3,})[^\n]*\n.*?(\n\2[ \t]*(?=\n|$)|$)", re.S)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9][A-Za-z0-9-]*)")
_KEYWORD = re.compile(
    r"\b((?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:[\w.-]+/[\w.-]+)?)#(?=\d)",
    re.IGNORECASE,
)


def _outside_code(text: str, transform: Any) -> str:
    """Apply ``transform`` to the parts of markdown ``text`` outside fences and code spans."""
    out: list[str] = []
    pos = 0
    for match in _FENCE.finditer(text):
        out.append(_outside_spans(text[pos : match.start()], transform))
        out.append(match.group(0))
        pos = match.end()
    out.append(_outside_spans(text[pos:], transform))
    return "".join(out)


def _outside_spans(text: str, transform: Any) -> str:
    out: list[str] = []
    pos = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(transform(text[pos : match.start()]))
        out.append(match.group(0))
        pos = match.end()
    out.append(transform(text[pos:]))
    return "".join(out)


def _defuse(text: str) -> str:
    text = _MENTION.sub("@" + ZWSP, text)
    return _KEYWORD.sub(lambda m: m.group(1) + "#" + ZWSP, text)


def no_markers(text: str) -> str:
    """``<!--`` and ``-->`` defused by a zero-width space (literal: entities are not decoded
    inside code), so untrusted text never opens or closes a hidden marker."""
    return text.replace("<!--", "<!-" + ZWSP + "-").replace("-->", "-" + ZWSP + "->")


def neutralize(text: str) -> str:
    """Defuse HTML comments everywhere, and mentions/closing keywords outside code."""
    return _outside_code(no_markers(text), _defuse)


def truncate(text: str, limit: int = MAX_BODY) -> str:
    """Cut ``text`` to ``limit`` characters with a visible note (never mid-way silently)."""
    if len(text) <= limit:
        return text
    note = f"\n\n… truncated: {len(text) - limit:,} more characters were not shown.\n"
    return text[: limit - len(note)] + note


def fence(text: str, info: str = "") -> str:
    """A code fence longer than any backtick run in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def inline(text: str) -> str:
    """A code span safe for any ``text`` (one line)."""
    text = text.replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _one_line(text: str) -> str:
    flat = text.replace("\r\n", " ").replace("\n", " ").replace("\t", " ")
    return no_markers(_CONTROL.sub(" ", flat))


def text(value: str, *, line_start: bool = False) -> str:
    """Inline plain text: every Markdown/HTML construct rendered literally, on one line.
    ``line_start``: the text begins a line (or a list item), where ``-``, ``>``, ``1.`` … would
    open a block."""
    escaped = _one_line(value).replace("&", "&amp;").replace("<", "&lt;")
    escaped = _INLINE_SPECIAL.sub(r"\\\1", escaped)
    if line_start:
        escaped = _LINE_START.sub(r"\1\\\2", escaped)
    return escaped.replace("@", "@" + ZWSP)


def code(value: str) -> str:
    """An inline code span that ``value`` cannot close (mentions do not fire in code)."""
    content = _one_line(value)
    if not content.strip():
        return "`(empty)`"
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    fence = "`" * (longest + 1)
    if content.startswith("`") or content.endswith("`"):
        content = f" {content} "
    return f"{fence}{content}{fence}"


def fenced(value: str, info: str = "") -> str:
    """A fenced code block that ``value`` cannot close."""
    content = no_markers(_CONTROL.sub(" ", value.replace("\r\n", "\n")))
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{content.rstrip(chr(10))}\n{fence}"


def safe_url(url: str | None) -> str | None:
    """``url`` if it is a plain https URL that cannot break out of ``[…](…)``, else None."""
    if url and _SAFE_URL.fullmatch(url) and "(" not in url and ")" not in url:
        return url
    return None


def link(label_markdown: str, url: str | None) -> str:
    """``[label](url)`` for a safe URL; the bare label otherwise. The label is Markdown."""
    target = safe_url(url)
    return f"[{label_markdown}]({target})" if target else label_markdown


def sha8(sha: str) -> str:
    return text(sha[:8])
