"""Validate YAML (read by :mod:`bot.yamlio`) against a pydantic model.

Errors name the file, the dotted key path and the line (from ruamel.yaml's position
information), in one line: ``rules/hardware.yaml:12: key 'runners.3.hardware': <reason>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from bot.errors import InputError, Location
from bot.yamlio.positions import line_of, read_yaml_with_positions, to_plain

ModelT = TypeVar("ModelT", bound=BaseModel)


class FieldError(ValueError):
    """Raised by cross-field validators to point the error at a specific key path."""

    def __init__(self, loc: Sequence[str | int], message: str) -> None:
        super().__init__(message)
        self.loc = tuple(loc)
        self.message = message


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
