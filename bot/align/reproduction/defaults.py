"""How a block shows a value the recipe leaves to vLLM: the default it resolves to, a long
list shortened."""

from __future__ import annotations

import json
import re

from bot import markdown as md
from bot.vllm import FlagDiff


def default_note(diff: FlagDiff) -> str:
    """The words a block adds to an omitted flag, from the comparison's reason: "(the
    recipe's command leaves it to vLLM: 1024 here)"; nothing when the reason names no default
    that holds unconditionally ("resolves to True only when compatible" is no "True here")."""
    match = re.search(
        r"resolves to (?:the default )?(\S+)(?!\S)(?! (?:only|when|unless|if)\b)", diff.reason
    )
    if match is None:
        return ""
    value = short_list(match.group(1))
    return f" (the recipe's command leaves it to vLLM: {md.text(value)} here)"


def short_list(text: str, keep: int = 3) -> str:
    """A long JSON list as its first items, the last and the count (vLLM's default capture
    sizes are 51 numbers); anything else as it is."""
    try:
        items = json.loads(text)
    except ValueError:
        return text
    if not isinstance(items, list) or len(items) <= 2 * keep:
        return text
    head = ", ".join(json.dumps(item) for item in items[:keep])
    return f"[{head}, …, {json.dumps(items[-1])}] ({len(items)} values)"
