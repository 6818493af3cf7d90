"""Load a YAML rules file and validate it against a pydantic model.

Errors name the file, the dotted key path and the line (from ruamel.yaml's position
information), in one line: ``rules/hardware.yaml:12: key 'runners.3.hardware': <reason>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from bot.errors import InputError, Location
from bot.safeyaml import check_expansion

ModelT = TypeVar("ModelT", bound=BaseModel)


class FieldError(ValueError):
    """Raised by cross-field validators to point the error at a specific key path."""

    def __init__(self, loc: Sequence[str | int], message: str) -> None:
        super().__init__(message)
        self.loc = tuple(loc)
        self.message = message


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
    past :mod:`bot.safeyaml`'s limits (so :func:`to_plain` never sees an alias bomb)."""
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


def load_validated(path: Path, model: type[ModelT], display: str | None = None) -> ModelT:
    """Read ``path`` and validate it as ``model``; raise :class:`InputError` on any problem."""
    name = display or str(path)
    return validate(read_yaml_with_positions(path, name), model, name)


def validate(
    data: Any, model: type[ModelT], name: str, defaults: dict[str, Any] | None = None
) -> ModelT:
    """Validate parsed YAML as ``model`` (over ``defaults``, merged one mapping level deep)."""
    plain = to_plain(data if data is not None else {})
    if defaults is not None and isinstance(plain, dict):
        merged = dict(defaults)
        for key, value in plain.items():
            base = merged.get(key)
            merged[key] = (
                {**base, **value} if isinstance(base, dict) and isinstance(value, dict) else value
            )
        plain = merged
    try:
        return model.model_validate(plain)
    except ValidationError as err:
        first = err.errors()[0]
        loc = [p for p in first["loc"] if isinstance(p, str | int)]
        key = ".".join(str(p) for p in loc)
        reason = first["msg"]
        inner = (first.get("ctx") or {}).get("error")
        if isinstance(inner, FieldError):
            # a nested model's validator names keys below that model: prefix its location
            loc, reason = [*loc, *inner.loc], inner.message
            key = ".".join(str(p) for p in loc)
        if first["type"] == "extra_forbidden":
            reason = "unknown key"
        elif first["type"] == "missing":
            reason = "required key is missing"
        raise InputError(Location(name, key, line_of(data, loc)), reason) from err


def parse_yaml_with_positions(text: str, name: str) -> Any:
    """:func:`read_yaml_with_positions` of a text already read (e.g. from a git tree)."""
    return parse_untrusted(text, name)
