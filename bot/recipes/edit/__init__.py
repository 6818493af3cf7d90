"""Minimal, byte-preserving edits of recipe YAML.

``apply_edits(text, [SetScalar(...), InsertKey(...), ...], file=...)`` returns the new text,
the changed line ranges and a git-style unified diff. Outside the edited nodes the file is
byte-identical: comments, quoting, key order, indentation, flow/block style, blank lines and
the final newline all survive. The result is re-parsed and must equal the original data with
the edits applied, or :class:`EditVerificationError` is raised.
"""

from __future__ import annotations

from bot.recipes.edit.apply import apply_edits, decode_recipe, edit_recipe
from bot.recipes.edit.describe import describe, edit_as_dict, edit_from_dict
from bot.recipes.edit.edits import (
    AppendItems,
    ChangedRange,
    Edit,
    EditResult,
    EnsurePath,
    InsertItems,
    InsertKey,
    RemoveItems,
    Scalar,
    SetComment,
    SetScalar,
    YamlValue,
)
from bot.recipes.edit.errors import EditError, EditVerificationError, PathSyntaxError
from bot.recipes.edit.paths import NodePath, format_path, parse_path
from bot.recipes.edit.textual import comment_above

__all__ = [
    "AppendItems",
    "ChangedRange",
    "Edit",
    "EditError",
    "EditResult",
    "EditVerificationError",
    "EnsurePath",
    "InsertItems",
    "InsertKey",
    "NodePath",
    "PathSyntaxError",
    "RemoveItems",
    "Scalar",
    "SetComment",
    "SetScalar",
    "YamlValue",
    "apply_edits",
    "comment_above",
    "decode_recipe",
    "describe",
    "edit_as_dict",
    "edit_from_dict",
    "edit_recipe",
    "format_path",
    "parse_path",
]
