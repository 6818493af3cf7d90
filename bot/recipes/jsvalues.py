"""JavaScript value semantics the upstream renderer relies on (truthiness, ``??``, ``String()``).

The recipes builder is JavaScript; whether a block "exists" is JS truthiness (``{}`` and
``[]`` are truthy, ``0`` and ``""`` are not) and values are turned into text by ``String()``.
Python's own truthiness differs on empty containers, so the renderer never uses it on YAML
values directly.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from bot.yamlio.yaml12 import js_float_str


def truthy(value: Any) -> bool:
    """JavaScript truthiness of a YAML value."""
    if value is None or value is False:
        return False
    kind = type(value)
    if kind is str:
        return bool(value != "")
    if kind is int:
        return bool(value != 0)
    if kind is float:
        return value != 0 and not math.isnan(value)
    return True  # True, and every object and list, even empty


def first_present(*values: Any) -> Any:
    """``a ?? b ?? …``: the first value that is not null/undefined."""
    for value in values:
        if value is not None:
            return value
    return None


def js_str(value: Any) -> str:
    """``String(value)`` for YAML-born values."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_float_str(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_str(item) for item in value)
    return "[object Object]"


def as_dict(value: Any) -> dict[str, Any]:
    """A mapping node, or an empty one when absent/not a mapping (``x?.y`` chains)."""
    return value if isinstance(value, dict) else {}


def is_number(value: Any) -> TypeGuard[int | float]:
    """A YAML number (not a boolean)."""
    return type(value) is int or type(value) is float
