"""The structural edits the editor applies, and what it returns.

Paths may be given as strings (``"hardware_overrides.amd.extra_args[3]"``) or tuples; they are
stored as tuples. Edits apply in order, each to the document the previous ones produced, so an
index in a later edit counts the items as they are after the earlier edits.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from bot.recipes.edit.paths import NodePath, PathPart, as_path
from bot.recipes.edit.scalars import printable

Scalar: TypeAlias = str | int | float | bool | dt.date | None
# A value the editor can write: scalars, sequences (lists or tuples) and string-keyed mappings.
YamlValue: TypeAlias = Scalar | Sequence["YamlValue"] | Mapping[str, "YamlValue"]


def _comment_lines(comment: str | Sequence[str] | None) -> tuple[str, ...]:
    if comment is None:
        return ()
    lines = comment.split("\n") if isinstance(comment, str) else list(comment)
    for line in lines:
        if not printable(line):
            raise ValueError(f"a comment line must be printable text on one line: {line!r}")
    return tuple(lines)


@dataclass(frozen=True)
class SetScalar:
    """Replace the scalar at ``path`` (a mapping value or a sequence item), keeping its style."""

    path: NodePath
    value: Scalar

    def __init__(self, path: str | NodePath, value: Scalar) -> None:
        object.__setattr__(self, "path", as_path(path))
        object.__setattr__(self, "value", value)


@dataclass(frozen=True)
class InsertKey:
    """Add ``key: value`` to the existing mapping at ``map_path``.

    Placed right after sibling ``after``, else right before sibling ``before`` (above the
    comment lines that introduce it), else at the end. ``comment`` lines (without ``#``) go
    above the new key.
    """

    map_path: NodePath
    key: str
    value: YamlValue
    after: str | None = None
    comment: tuple[str, ...] = ()
    before: str | None = None

    def __init__(
        self,
        map_path: str | NodePath,
        key: str,
        value: YamlValue,
        after: str | None = None,
        comment: str | Sequence[str] | None = None,
        *,
        before: str | None = None,
    ) -> None:
        if after is not None and before is not None:
            raise ValueError("give at most one of after= and before=")
        object.__setattr__(self, "map_path", as_path(map_path))
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "after", after)
        object.__setattr__(self, "comment", _comment_lines(comment))
        object.__setattr__(self, "before", before)


@dataclass(frozen=True)
class EnsurePath:
    """Make ``path`` hold ``value``, creating the missing mappings on the way.

    The deepest existing node on the path must be a mapping (block, or flow: an empty ``{}``
    becomes a block mapping). A missing top-level key is added before ``guide:`` when the
    recipe has one, else at the end. If the whole path already exists it must already hold
    ``value`` (then nothing changes); use the other edits to change existing nodes.
    """

    path: NodePath
    value: YamlValue
    comment: tuple[str, ...] = ()

    def __init__(
        self, path: str | NodePath, value: YamlValue, comment: str | Sequence[str] | None = None
    ) -> None:
        object.__setattr__(self, "path", as_path(path))
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "comment", _comment_lines(comment))


@dataclass(frozen=True)
class InsertItems:
    """Insert ``items`` into the sequence at ``list_path`` before item ``index``.

    ``index`` may equal the length (append). Comment lines above item ``index`` stay with it.
    """

    list_path: NodePath
    index: int
    items: tuple[YamlValue, ...]
    comment: tuple[str, ...] = ()

    def __init__(
        self,
        list_path: str | NodePath,
        index: int,
        items: Sequence[YamlValue],
        comment: str | Sequence[str] | None = None,
    ) -> None:
        object.__setattr__(self, "list_path", as_path(list_path))
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "items", tuple(items))
        object.__setattr__(self, "comment", _comment_lines(comment))


@dataclass(frozen=True)
class AppendItems:
    """Append ``items`` to the sequence at ``list_path`` (``comment`` above the first one)."""

    list_path: NodePath
    items: tuple[YamlValue, ...]
    comment: tuple[str, ...] = ()

    def __init__(
        self,
        list_path: str | NodePath,
        items: Sequence[YamlValue],
        comment: str | Sequence[str] | None = None,
    ) -> None:
        object.__setattr__(self, "list_path", as_path(list_path))
        object.__setattr__(self, "items", tuple(items))
        object.__setattr__(self, "comment", _comment_lines(comment))


@dataclass(frozen=True)
class RemoveItems:
    """Remove ``count`` items starting at ``index`` (e.g. a flag and its value).

    Comment lines directly above the first removed item go with it; comments introducing
    the items that remain stay.
    """

    list_path: NodePath
    index: int
    count: int = 1

    def __init__(self, list_path: str | NodePath, index: int, count: int = 1) -> None:
        if count < 1:
            raise ValueError("count must be at least 1")
        object.__setattr__(self, "list_path", as_path(list_path))
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "count", count)


@dataclass(frozen=True)
class SetComment:
    """Replace the ``#`` lines directly above the entry or block item at ``path``.

    Lines are given without ``#``; an empty ``comment`` removes the existing ones. Data is
    unchanged. Use it when an edit makes the comment that introduces a node wrong.
    """

    path: NodePath
    comment: tuple[str, ...]

    def __init__(self, path: str | NodePath, comment: str | Sequence[str] | None) -> None:
        object.__setattr__(self, "path", as_path(path))
        object.__setattr__(self, "comment", _comment_lines(comment))


Edit: TypeAlias = (
    SetScalar | InsertKey | EnsurePath | InsertItems | AppendItems | RemoveItems | SetComment
)


def edit_path(edit: Edit) -> NodePath:
    """The node an edit addresses (for messages)."""
    if isinstance(edit, SetScalar | EnsurePath | SetComment):
        return edit.path
    if isinstance(edit, InsertKey):
        return (*edit.map_path, edit.key)
    return edit.list_path


@dataclass(frozen=True)
class ChangedRange:
    """A run of changed lines: 1-based, end-exclusive, in the old and in the new text.

    Lines ``old_start .. old_end-1`` of the original were replaced by lines
    ``new_start .. new_end-1`` of the result; an empty side means pure insertion or deletion.
    Every line outside these ranges is byte-identical and in the same order.
    """

    old_start: int
    old_end: int
    new_start: int
    new_end: int

    @property
    def old_lines(self) -> range:
        return range(self.old_start, self.old_end)

    @property
    def new_lines(self) -> range:
        return range(self.new_start, self.new_end)


@dataclass(frozen=True)
class EditResult:
    """The edited text, which lines changed, and a unified diff usable as a git patch."""

    text: str
    changed: tuple[ChangedRange, ...]
    diff: str
    edits: tuple[Edit, ...] = field(default=())

    @property
    def unchanged(self) -> bool:
        return not self.changed


__all__ = [
    "AppendItems",
    "ChangedRange",
    "Edit",
    "EditResult",
    "EnsurePath",
    "InsertItems",
    "InsertKey",
    "PathPart",
    "RemoveItems",
    "Scalar",
    "SetComment",
    "SetScalar",
    "YamlValue",
    "edit_path",
]
