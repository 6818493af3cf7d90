"""Make untrusted text safe to echo in comments, PR bodies and check runs.

Launch lines, titles and branch names come from benchmark PRs, i.e. from anyone. Echoed
text must not forge our hidden markers (``<!--``), ping people (``@user``), close issues
(``fixes #12`` in a PR body) or exceed GitHub's 65,536-character limit. Mentions and
keywords inside code spans and fences are inert on GitHub and are left untouched there, so
commands stay copy-pastable.
"""

from __future__ import annotations

import json
import re
from typing import Any

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


def neutralize(text: str) -> str:
    """Defuse HTML comments everywhere, and mentions/closing keywords outside code."""
    text = text.replace("<!--", "<!-" + ZWSP + "-").replace("-->", "-" + ZWSP + "->")
    return _outside_code(text, _defuse)


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


# --- hidden markers and metadata -------------------------------------------------------------

VERIFY_MARKER = "<!-- recipe-sync:verify v1 -->"
REAPPROVE_MARKER = "<!-- recipe-sync:reapprove v1 -->"
EDITED_MARKER = "<!-- recipe-sync:edited v1 -->"
REFUSAL_MARKER = "<!-- recipe-sync:refusal v1 -->"
_META = re.compile(r"<!-- recipe-sync:meta (\{.*?\}) -->")


def meta_comment(data: dict[str, Any]) -> str:
    """Machine state in a hidden comment; never used for authorisation (anyone can edit it)."""
    payload = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    # '<' and '>' are escaped so the payload can never open or close a comment
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e")
    return f"<!-- recipe-sync:meta {payload} -->"


def parse_meta(body: str) -> dict[str, Any] | None:
    """The first metadata comment in ``body`` (it sits right after the marker line)."""
    match = _META.search(body[:4096])
    if not match:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
