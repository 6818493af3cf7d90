"""Safe GitHub-flavoured Markdown from untrusted text (job names, log lines, changelog text).

Untrusted text must not inject Markdown or HTML into a PR body or comment: no raw HTML (``<``
becomes ``&lt;``), no @mentions (a zero-width space follows ``@``), no links, emphasis or
headings, no table breaks. Code goes in spans or fences longer than any backtick run it
contains, so it cannot close them. ``<!--`` and ``-->`` never appear in the output, not even in
code, because bots find their own comments by such markers in the raw body.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]|~#!])")
_LINE_START = re.compile(r"^(\s*)([-+=>]|\d+[.)])")
_BACKTICKS = re.compile(r"`+")
_SAFE_URL = re.compile(r"https://[A-Za-z0-9.-]+(?:/[A-Za-z0-9._~%!$&'*+,;=:@/?#-]*)?")
ZERO_WIDTH_SPACE = "&#8203;"


def _no_markers(text: str) -> str:
    # literal zero-width space: entities are not decoded inside code
    return text.replace("<!--", "<\u200b!--").replace("-->", "--\u200b>")


def _one_line(text: str) -> str:
    flat = text.replace("\r\n", " ").replace("\n", " ").replace("\t", " ")
    return _no_markers(_CONTROL.sub(" ", flat))


def text(value: str, *, line_start: bool = False) -> str:
    """Inline plain text: every Markdown/HTML construct rendered literally, on one line.
    ``line_start``: the text begins a line (or a list item), where ``-``, ``>``, ``1.`` … would
    open a block."""
    escaped = _one_line(value).replace("&", "&amp;").replace("<", "&lt;")
    escaped = _INLINE_SPECIAL.sub(r"\\\1", escaped)
    if line_start:
        escaped = _LINE_START.sub(r"\1\\\2", escaped)
    return escaped.replace("@", "@" + ZERO_WIDTH_SPACE)


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
    content = _no_markers(_CONTROL.sub(" ", value.replace("\r\n", "\n")))
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
