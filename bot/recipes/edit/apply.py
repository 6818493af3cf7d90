"""``apply_edits``: structural edits → new recipe text, byte-identical outside the edits.

Each edit is located with ruamel.yaml's round-trip composer and applied as whole-line text
splices; the text is re-parsed after every edit (so edits compose), and the final text must
parse back to exactly the original data with the edits applied in Python — otherwise
:class:`EditVerificationError` is raised and no text is returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ruamel.yaml.nodes import MappingNode, Node

from bot.recipes.edit.data import apply_to_data, canonical, construct_data, get
from bot.recipes.edit.document import Document
from bot.recipes.edit.edits import Edit, EditResult, EnsurePath, InsertKey, SetScalar, edit_path
from bot.recipes.edit.errors import EditError, EditVerificationError
from bot.recipes.edit.paths import format_path
from bot.recipes.edit.render import normalize
from bot.recipes.edit.splice import LineTracker, unified_diff
from bot.recipes.edit.textual import TextEdit, splices_for
from bot.sources import FileSource

TOP_LEVEL_BEFORE = "guide"  # new top-level sections go above the long prose block


def decode_recipe(data: bytes, file: str) -> str:
    """UTF-8 text, or an :class:`EditError` naming the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise EditError(file, "", f"file is not UTF-8 (byte {err.start})", line) from err


def apply_edits(text: str | bytes, edits: Sequence[Edit], *, file: str = "<recipe>") -> EditResult:
    """Apply ``edits`` in order; see the module docstring for the guarantees."""
    if isinstance(text, bytes):
        text = decode_recipe(text, file)
    doc = Document(text, file)
    expected = construct_data(doc.root, file)
    tracker = LineTracker(doc.lines)
    for edit in edits:
        lowered = _lower(doc, expected, edit)
        if lowered is None:
            continue
        splices = splices_for(doc, lowered)
        apply_to_data(expected, lowered, file)
        if not splices:
            continue
        tracker.apply(splices)
        try:
            doc = Document(tracker.text(), file)  # the next edit locates nodes in this text
        except EditError as err:
            raise EditVerificationError(
                file, format_path(edit_path(edit)), f"edit produced invalid YAML ({err.reason})"
            ) from err
    result = tracker.text()
    _verify(doc, expected, edits)
    return EditResult(
        text=result,
        changed=tracker.changed_ranges(),
        diff=unified_diff(text, result, file),
        edits=tuple(edits),
    )


def edit_recipe(source: FileSource, path: str, edits: Sequence[Edit]) -> EditResult:
    """Read ``path`` from a repository view and edit it; the diff is relative to its root."""
    return apply_edits(source.read_bytes(path), edits, file=path)


def _lower(doc: Document, data: Any, edit: Edit) -> TextEdit | None:
    """EnsurePath → the InsertKey that creates its first missing key; no-ops → None."""
    if isinstance(edit, SetScalar):
        doc.locate(edit.path)  # validate (aliases, kinds) even when nothing changes
        if edit.path and canonical(get(data, edit.path, doc.file)) == canonical(edit.value):
            return None
        return edit
    if not isinstance(edit, EnsurePath):
        return edit
    node: Node = doc.root
    for depth, part in enumerate(edit.path):
        if isinstance(node, MappingNode) and isinstance(part, str):
            found = doc.find_key(node, part)
            if found is None:
                parent = doc.locate(edit.path[:depth])  # refuses aliases / merge keys
                rest = edit.path[depth + 1 :]
                if any(not isinstance(key, str) for key in rest):
                    raise EditError(
                        doc.file,
                        format_path(edit.path),
                        "EnsurePath creates mappings only; a missing sequence item "
                        "cannot be created",
                        parent.line,
                    )
                value = normalize(edit.value)
                for key in reversed(rest):
                    assert isinstance(key, str)
                    value = {key: value}
                before = None
                if depth == 0 and doc.find_key(doc.root, TOP_LEVEL_BEFORE) is not None:
                    before = TOP_LEVEL_BEFORE
                return InsertKey(
                    edit.path[:depth], part, value, comment=edit.comment or None, before=before
                )
            node = node.value[found][1]
        else:
            node = doc.locate(edit.path[: depth + 1]).node  # raises the located reason
    located = doc.locate(edit.path)
    if canonical(get(data, edit.path, doc.file)) != canonical(normalize(edit.value)):
        raise EditError(
            doc.file,
            format_path(edit.path),
            "already exists with a different value (EnsurePath only creates; "
            "use SetScalar / InsertItems / RemoveItems to change it)",
            located.line,
        )
    return None


def _verify(doc: Document, expected: Any, edits: Sequence[Edit]) -> None:
    """The final text must hold exactly the expected data (order and types included)."""
    where = ", ".join(format_path(edit_path(edit)) for edit in edits)
    try:
        actual = construct_data(doc.root, doc.file)
    except EditError as err:
        raise EditVerificationError(
            doc.file, where, f"edited text does not load: {err.reason}"
        ) from err
    if canonical(actual) != canonical(expected):
        raise EditVerificationError(
            doc.file,
            where,
            "edited text does not parse back to the expected data; nothing written",
        )
