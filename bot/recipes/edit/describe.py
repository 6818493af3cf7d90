"""Edits as words and as JSON, for plans, PR bodies and logs."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

from bot.recipes.edit.edits import (
    AppendItems,
    Edit,
    EnsurePath,
    InsertItems,
    InsertKey,
    RemoveItems,
    SetComment,
    SetScalar,
)
from bot.recipes.edit.paths import format_path


def _jsonable(value: Any) -> Any:
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    return value


def edit_as_dict(edit: Edit) -> dict[str, Any]:
    """``{"op": "SetScalar", "path": "a.b[0]", "value": ...}``: JSON-ready, paths as strings."""
    out: dict[str, Any] = {"op": type(edit).__name__}
    for field in dataclasses.fields(edit):
        value = getattr(edit, field.name)
        if field.name in ("path", "map_path", "list_path"):
            value = format_path(value)
        out[field.name] = _jsonable(value)
    return out


_OPS: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (SetScalar, InsertKey, EnsurePath, InsertItems, AppendItems, RemoveItems, SetComment)
}


def edit_from_dict(data: dict[str, Any]) -> Edit:
    """The inverse of :func:`edit_as_dict` (dates come back as strings, as JSON has them)."""
    fields = dict(data)
    op = fields.pop("op", None)
    if op not in _OPS:
        raise ValueError(f"unknown edit op {op!r}")
    edit: Edit = _OPS[op](**fields)
    return edit


def _show(value: Any) -> str:
    return json.dumps(_jsonable(value), ensure_ascii=False)


def describe(edit: Edit) -> str:
    """One line a reviewer can read: ``set model.docker_image.amd = "…"``."""
    if isinstance(edit, SetScalar):
        return f"set {format_path(edit.path)} = {_show(edit.value)}"
    if isinstance(edit, InsertKey):
        where = (
            f" after {edit.after}"
            if edit.after
            else f" before {edit.before}"
            if edit.before
            else ""
        )
        return f"add {format_path((*edit.map_path, edit.key))} = {_show(edit.value)}{where}"
    if isinstance(edit, EnsurePath):
        return f"ensure {format_path(edit.path)} = {_show(edit.value)}"
    if isinstance(edit, InsertItems):
        return (
            f"insert {_show(list(edit.items))} into {format_path(edit.list_path)} at {edit.index}"
        )
    if isinstance(edit, AppendItems):
        return f"append {_show(list(edit.items))} to {format_path(edit.list_path)}"
    if isinstance(edit, RemoveItems):
        last = edit.index + edit.count - 1
        items = f"[{edit.index}]" if edit.count == 1 else f"[{edit.index}..{last}]"
        return f"remove {format_path(edit.list_path)}{items}"
    assert isinstance(edit, SetComment)
    return f"comment {format_path(edit.path)}: {_show(list(edit.comment))}"
