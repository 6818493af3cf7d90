"""The same edits applied to plain data: what the edited text must parse back to."""

from __future__ import annotations

import math
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import Node

from bot.errors import InputError
from bot.recipes.edit.edits import (
    AppendItems,
    InsertItems,
    InsertKey,
    RemoveItems,
    SetComment,
    SetScalar,
)
from bot.recipes.edit.errors import EditError
from bot.recipes.edit.paths import NodePath, format_path
from bot.recipes.edit.render import normalize
from bot.yamlio.bounds import check_expansion

DataEdit = SetScalar | InsertKey | InsertItems | AppendItems | RemoveItems | SetComment


def construct_data(root: Node, file: str) -> Any:
    """Plain YAML 1.2 data of a composed document (duplicate keys are an error).

    Constructing from the nodes the editor already composed avoids a second parse.
    """
    try:
        data = SafeConstructor(loader=YAML(typ="safe", pure=True)).construct_document(root)
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = err.problem or err.context or "invalid YAML"
        raise EditError(file, "", f"malformed YAML: {problem}", line) from err
    except YAMLError as err:
        raise EditError(file, "", f"malformed YAML: {err}") from err
    except ValueError as err:  # ruamel's float resolver on scalars such as ._
        raise EditError(file, "", f"unreadable YAML scalar: {err}") from err
    try:
        check_expansion(data, file)  # callers compare and walk it as a tree
    except InputError as err:
        raise EditError(file, err.location.key, err.reason, err.location.line) from None
    return data


def canonical(value: Any) -> Any:
    """A comparable form that keeps mapping order and scalar types (``1 != True != 1.0``)."""
    if isinstance(value, dict):
        return ("map", tuple((canonical(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("seq", tuple(canonical(item) for item in value))
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def get(data: Any, path: NodePath, file: str) -> Any:
    node = data
    for depth, part in enumerate(path):
        in_map = isinstance(node, dict) and isinstance(part, str) and part in node
        in_list = (
            isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node)
        )
        if in_map or in_list:
            node = node[part]
        else:
            raise EditError(file, format_path(path[: depth + 1]), "no such node in the data")
    return node


def apply_to_data(data: Any, edit: DataEdit, file: str) -> None:
    """Apply ``edit`` to ``data`` in place (the text edit has already validated it)."""
    if isinstance(edit, SetComment):
        return  # comments are not data
    if isinstance(edit, SetScalar):
        parent = get(data, edit.path[:-1], file)
        parent[edit.path[-1]] = edit.value
    elif isinstance(edit, InsertKey):
        mapping = get(data, edit.map_path, file)
        entries = list(mapping.items())
        anchor = edit.after if edit.after is not None else edit.before
        if anchor is None:
            position = len(entries)
        else:
            position = [key for key, _ in entries].index(anchor)
            position += 1 if edit.after is not None else 0
        entries.insert(position, (edit.key, normalize(edit.value)))
        mapping.clear()
        mapping.update(entries)
    elif isinstance(edit, InsertItems):
        items = get(data, edit.list_path, file)
        items[edit.index : edit.index] = [normalize(item) for item in edit.items]
    elif isinstance(edit, AppendItems):
        get(data, edit.list_path, file).extend(normalize(item) for item in edit.items)
    else:
        del get(data, edit.list_path, file)[edit.index : edit.index + edit.count]
