"""argv → (canonical flag, canonical value) pairs: one comparable unit per setting.

The agreement score compares what a benchmark launched, what the bot proposed and what
maintainers wrote, each spelled its own way. Here every spelling of one setting becomes one
pair under vLLM's own parser (:func:`bot.vllm.normalise.normalise`: last wins, ``_`` → ``-``,
``--no-x``): a JSON-valued flag is one pair per field (``--attention-config.a``), so the
dotted and the JSON spelling compare equal; a bare switch is ``""`` (on) or ``"false"``.
Flags the catalogue does not know are kept as written, so nothing written is lost.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from bot.vllm.catalogue import canonical_flag
from bot.vllm.normalise import normalise
from bot.vllm.serve_config import ServeConfig


def canonical_value(value: Any) -> str:
    """One text per value: JSON canonical (sorted keys, no spaces), booleans lower-case."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    text = str(value).strip()
    if text in ("True", "False"):
        return text.lower()
    if text[:1] in "{[":
        try:
            return canonical_value(json.loads(text))
        except ValueError:
            return text
    return text


def flag_pairs(tokens: Sequence[str]) -> list[tuple[str, str]]:
    """The pairs of an args list (no ``vllm serve`` and no model), in vLLM's order."""
    tokens = [str(t) for t in tokens]
    return _pairs(normalise(["vllm", "serve", "model", *tokens]), tokens)


def launch_pairs(argv: Sequence[str]) -> list[tuple[str, str]]:
    """The pairs of a whole launch line (``vllm serve MODEL ...``); the model is not a pair."""
    argv = [str(t) for t in argv]
    return _pairs(normalise(argv), argv[2:])


def _pairs(config: ServeConfig, tokens: Sequence[str]) -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    seen: set[str] = set()
    for setting in config.settings:
        if setting.spec is None:
            continue  # the positional model
        seen.update(setting.tokens)
        flag = canonical_flag(setting.flag)
        value = setting.value
        if isinstance(value, dict):
            for field, inner in _fields(value):
                out[f"{flag}.{field}"] = canonical_value(inner)
        elif isinstance(value, bool) and "." not in flag:
            out[flag] = "" if value else "false"
        else:
            out[flag] = canonical_value(value)
    for flag, value in _unparsed(tokens, seen):
        out.setdefault(flag, value)
    return list(out.items())


def _fields(value: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, inner in value.items():
        name = f"{prefix}{key}"
        if isinstance(inner, dict) and inner:
            yield from _fields(inner, name + ".")
        else:
            yield name, inner


def _unparsed(tokens: Sequence[str], seen: set[str]) -> Iterator[tuple[str, str]]:
    """Flags the parser did not take (unknown to the catalogue): ``--x v`` as written."""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.startswith("--") and token not in seen:
            name, eq, inline = token.partition("=")
            value = inline if eq else ""
            if not eq and index + 1 < len(tokens) and not tokens[index + 1].startswith("--"):
                value = tokens[index + 1]
                index += 1
            flag = canonical_flag(name)
            parsed = _json_dict(value)
            if parsed is not None:
                for field, inner in _fields(parsed):
                    yield f"{flag}.{field}", canonical_value(inner)
            else:
                yield flag, canonical_value(value)
        index += 1


def _json_dict(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None
