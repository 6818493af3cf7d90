"""Round-trip YAML with positions: untrusted text parsed into ruamel's round-trip nodes (they
carry line numbers), bounded after alias expansion, with one located error for anything
malformed; ``line_of`` answers where a key path is, ``to_plain`` gives plain data."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from bot.errors import InputError, Location
from bot.yamlio.bounds import check_expansion


def read_yaml_with_positions(path: Path, display: str | None = None) -> Any:
    """Parse YAML keeping ruamel's round-trip nodes (they carry line numbers)."""
    name = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(Location(name), f"cannot read file: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise InputError(Location(name), "file is not UTF-8") from err
    return parse_untrusted(text, name)


def parse_untrusted(text: str, name: str) -> Any:
    """Round-trip parse of untrusted YAML text, bounded after alias expansion.

    The one loader for rules, per-repo configs and benchmark master configs: a located
    one-line :class:`InputError` for malformed YAML and for documents whose aliases expand
    past :mod:`bot.yamlio.bounds`' limits (so :func:`to_plain` never sees an alias bomb)."""
    try:
        data = YAML(typ="rt").load(text)
    except RecursionError:
        raise InputError(Location(name), "malformed YAML: nested too deeply") from None
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = err.problem or err.context or "syntax error"
        raise InputError(Location(name, line=line), f"malformed YAML: {problem}") from err
    except YAMLError as err:
        raise InputError(Location(name), f"malformed YAML: {err}") from err
    check_expansion(data, name, lambda path: line_of(data, path))
    return data


def line_of(data: Any, path: Sequence[str | int]) -> int | None:
    """1-based line of the deepest node on ``path`` that exists in ``data``."""
    line: int | None = None
    node = data
    for part in path:
        if isinstance(node, CommentedMap) and part in node:
            line = node.lc.key(part)[0] + 1
            node = node[part]
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
            line = node.lc.item(part)[0] + 1
            node = node[part]
        else:
            break
    return line


def to_plain(data: Any) -> Any:
    """Round-trip nodes → plain dicts/lists/scalars (pydantic wants builtins)."""
    if isinstance(data, dict):
        return {str(k): to_plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [to_plain(v) for v in data]
    if isinstance(data, str):
        return str(data)
    return data


def parse_yaml_with_positions(text: str, name: str) -> Any:
    """:func:`read_yaml_with_positions` of a text already read (e.g. from a git tree)."""
    return parse_untrusted(text, name)
