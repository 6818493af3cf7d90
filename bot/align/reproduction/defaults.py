"""How a block shows a value: the default a value the recipe leaves to vLLM resolves to, a
long list shortened, a value known only when the benchmark script runs, the few fields in
which two JSON objects differ."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from bot import markdown as md
from bot.align.nodes import only_host_copies, parsed_json
from bot.placeholders import PLACEHOLDER_RE
from bot.shell.text import REASONS
from bot.vllm import FlagDiff

# a default vLLM computes from the model or the config (``model.is_prefix_caching_supported``)
# is a rule, not a value to print as "here"
_EXPRESSION = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def default_note(diff: FlagDiff) -> str:
    """The words a block adds to an omitted flag, from the comparison's reason: "(the
    recipe's command leaves it to vLLM: 1024 here)"; nothing when the reason names no default
    that holds unconditionally ("resolves to True only when compatible" is no "True here") or
    names a rule rather than a value ("resolves to model.is_prefix_caching_supported")."""
    match = re.search(
        r"resolves to (?:the default )?(\S+)(?!\S)(?! (?:only|when|unless|if)\b)", diff.reason
    )
    if match is None or _EXPRESSION.fullmatch(match.group(1)):
        return ""
    value = short_list(match.group(1))
    return f" (the recipe's command leaves it to vLLM: {md.text(value)} here)"


def short_list(text: str, keep: int = 3) -> str:
    """A long JSON list as its first items, the last and the count (vLLM's default capture
    sizes are 51 numbers); anything else as it is."""
    found = shortened(text, keep)
    return text if found is None else f"{found[0]} ({found[1]} values)"


def shortened(text: str, keep: int = 3) -> tuple[str, int] | None:
    """A long JSON list as ``[first items, …, last]`` and its length; None for anything
    else (a short list, not a list)."""
    try:
        items = json.loads(text)
    except ValueError:
        return None
    if not isinstance(items, list) or len(items) <= 2 * keep:
        return None
    head = ", ".join(json.dumps(item) for item in items[:keep])
    return f"[{head}, …, {json.dumps(items[-1])}]", len(items)


def run_time_note(value: str) -> str | None:
    """Why a value the benchmark script exports cannot be shown ("its value is known only
    when the script runs (…)"), or None for a value known statically. A block never prints
    the evaluator's placeholder (``<NAME:opaque:reason>``) as if it were the value."""
    found = PLACEHOLDER_RE.search(value)
    if found is None:
        return None
    why = REASONS.get(found.group(2), found.group(2))
    return f"its value is known only when the script runs ({why})"


# fields a block names one by one; an object that differs in more is shown whole
MAX_FIELDS = 3


def json_fields_note(flag: str, bench: Any, recipe: Any) -> str | None:
    """For two JSON objects that differ in a few fields, what to change inside the recipe's:
    "In the `--speculative-config` JSON: set `num_speculative_tokens` to `2` (the recipe's
    command: `3`)."; None otherwise. A field the benchmark read from a copy on its host
    (``/data/models/<the recipe's name>``) is no difference."""
    bench, recipe = parsed_json(bench), parsed_json(recipe)
    if not isinstance(bench, Mapping) or not isinstance(recipe, Mapping):
        return None
    parts = []
    for key in [*bench, *(k for k in recipe if k not in bench)]:
        if key not in recipe:
            parts.append(field_words(key, bench[key]))
        elif key not in bench:
            parts.append(field_words(key, removed=True))
        elif not only_host_copies(bench[key], recipe[key]):
            parts.append(field_words(key, bench[key], recipe[key]))
    if not parts or len(parts) > MAX_FIELDS:
        return None
    return in_json(flag, parts)


_ABSENT = object()


def field_words(key: str, value: Any = None, before: Any = _ABSENT, removed: bool = False) -> str:
    """One field's change inside a JSON flag, as every block words it: "set `k` to `v`
    (the recipe's command: `w`)", "set `k` to `v`", "remove `k`"."""
    if removed:
        return f"remove {md.code(key)}"
    text = f"set {md.code(key)} to {md.code(_compact(value))}"
    if before is not _ABSENT:
        text += f" (the recipe's command: {md.code(_compact(before))})"
    return text


def in_json(flag: str, parts: list[str]) -> str:
    return f"In the {md.code(flag)} JSON: {'; '.join(parts)}."


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
