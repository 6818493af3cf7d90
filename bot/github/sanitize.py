"""The bot's hidden markers and machine-readable metadata in comments and PR bodies.

Making untrusted text safe to echo (markers, mentions, closing keywords, length) is
:mod:`bot.markdown`'s; the names below are re-exported for the callers that need both.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.markdown import MAX_BODY, ZWSP, fence, inline, neutralize, truncate

__all__ = [
    "EDITED_MARKER",
    "MAX_BODY",
    "REAPPROVE_MARKER",
    "REFUSAL_MARKER",
    "VERIFY_MARKER",
    "ZWSP",
    "fence",
    "inline",
    "meta_comment",
    "neutralize",
    "parse_meta",
    "truncate",
]

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
