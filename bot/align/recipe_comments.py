"""Recipe comments an edit would make wrong (docs/alignment.md §5).

A ``#`` comment directly above a value is *about* that value when it names it: the value
itself, or the words that set it apart from the new one (``aiter_triton_mxfp4_bf16`` against
``aiter``: two of "triton", "mxfp4", "bf16"; "AITER's Triton kernel" is such a comment).

- A value changed in place: the comment is replaced by the benchmark script's own comment on
  the new value, or removed when the script has none (it would describe the old value).
- A shared value overridden for one GPU: the old comment stays, since the shared value still
  applies to every other rendering (the recipe's own overrides leave their base comments
  alone too); the new override gets a comment that says what it replaces there and why (the
  script's comment, the benchmark that ran it).

Pure: the recipe text, the planned edits and the data after them in; editor edits
(:class:`~bot.recipes.edit.SetComment`) and what they do, for the PR body, out.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from bot.align.model import CommentChange, PlannedEdit
from bot.align.nodes import MISSING, hw_label, lookup, text_value
from bot.argv import value_at
from bot.errors import RecipeSyncError
from bot.recipes import RecipesRepo
from bot.recipes.edit import (
    AppendItems,
    EditError,
    EnsurePath,
    InsertKey,
    NodePath,
    SetComment,
    SetScalar,
    comment_above,
    format_path,
)
from bot.recipes.edit.data import construct_data
from bot.recipes.edit.document import Document
from bot.shell.result import SourceSpan
from bot.sources import FileSource
from bot.vllm import canonical_flag

WIDTH = 92  # columns of a comment line (the recipes wrap theirs at about 90)
_WORD = re.compile(r"[a-z0-9]+")
_EDITED = frozenset({"flag", "flag-new", "env", "env-new", "image"})


def names_value(comment: Sequence[str], old: str, new: str | None) -> bool:
    """Whether ``comment`` is about ``old``: it spells it, or names the words of ``old``
    that ``new`` lacks (two of them, or the only one)."""
    text = " ".join(comment).lower()
    if not old.strip():
        return False
    if re.search(rf"(?<![a-z0-9_.-]){re.escape(old.lower())}(?![a-z0-9_])", text):
        return True
    kept = set(_WORD.findall((new or "").lower()))
    distinct = [
        w
        for w in dict.fromkeys(_WORD.findall(old.lower()))
        if w not in kept and len(w) >= 3 and not w.isdigit()
    ]
    words = set(_WORD.findall(text))
    found = sum(1 for w in distinct if w in words)
    return bool(distinct) and found >= min(2, len(distinct))


def script_comment(
    bench: FileSource | None, sources: Sequence[SourceSpan]
) -> tuple[str, str] | None:
    """The benchmark script's ``#`` lines directly above where it sets the value (the value's
    line first, then the flag's), joined, and where they are (``file:line[-line]``); None
    when it has none."""
    if bench is None:
        return None
    for span in reversed(sources):
        try:
            lines = bench.read_bytes(span.file).decode("utf-8", "replace").splitlines()
        except RecipeSyncError:
            continue
        first = span.line - 1  # 0-based index of the value's line
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            if lines[first - 1].startswith("#!"):
                break
            first -= 1
        found = [line.strip().lstrip("#").strip() for line in lines[first : span.line - 1]]
        text = " ".join(f for f in found if f)
        if text:
            last = span.line - 1
            where = f"{first + 1}" if last == first + 1 else f"{first + 1}-{last}"
            return text, f"{span.file}:{where}"
    return None


def _shadowed_value(before: Mapping[str, Any], path: NodePath) -> str | None:
    if path and isinstance(path[-1], int):
        tokens = lookup(before, path[:-1])
        if isinstance(tokens, list) and str(tokens[path[-1]]).startswith("--"):
            return value_at([str(t) for t in tokens], path[-1])
    value = lookup(before, path)
    return None if value is MISSING else text_value(value)


def _written_at(edit: PlannedEdit, after: Mapping[str, Any]) -> tuple[NodePath, str | None]:
    """The node of the override that holds the new value (the flag's item, the env key, the
    image) and that value."""
    raw = edit.edit
    if isinstance(raw, InsertKey):
        return (*raw.map_path, raw.key), edit.after
    if isinstance(raw, AppendItems):
        container: NodePath = raw.list_path
    elif isinstance(raw, EnsurePath | SetScalar):
        container = raw.path
    else:
        return (), None
    value = lookup(after, container)
    if isinstance(value, Mapping):
        return (*container, edit.subject), edit.after
    if not isinstance(value, list):
        return container, edit.after
    flags = [canonical_flag(str(t)) if str(t).startswith("--") else None for t in value]
    found = [i for i, flag in enumerate(flags) if flag == edit.subject]
    if not found:
        return (), None
    return (*container, found[-1]), value_at([str(t) for t in value], found[-1])


def _commented(
    doc: Document, before: Mapping[str, Any], path: NodePath
) -> tuple[NodePath, tuple[str, ...]]:
    """The node whose comment introduces ``path`` (a value item: its flag token above it) and
    that comment (empty when there is none)."""
    candidates = [path]
    if path and isinstance(path[-1], int) and path[-1] > 0:
        tokens = lookup(before, path[:-1])
        if isinstance(tokens, list) and str(tokens[path[-1] - 1]).startswith("--"):
            candidates.insert(0, (*path[:-1], path[-1] - 1))
    for candidate in candidates:
        try:
            lines = comment_above(doc, candidate)
        except EditError:
            continue
        if lines:
            return candidate, lines
    return path, ()


def _wrapped(doc: Document, at: NodePath, *paragraphs: str) -> tuple[str, ...]:
    """Each paragraph wrapped to :data:`WIDTH` at the column of the node ``at`` of ``doc``."""
    try:
        line = doc.locate(at).line - 1
        column = len(doc.lines[line]) - len(doc.lines[line].lstrip(" "))
    except EditError:
        column = 0
    width = max(40, WIDTH - column - 2)
    return tuple(line for p in paragraphs if p for line in textwrap.wrap(p, width))


def stale_comment_edits(
    doc: Document,
    before: Mapping[str, Any],
    edited: Document,
    planned: Sequence[PlannedEdit],
    recipes: RecipesRepo,
    *,
    bench: FileSource | None = None,
    provenance: str = "",
) -> tuple[list[SetComment], list[CommentChange]]:
    """The comment edits of a plan (applied after its node edits) and what each does.

    ``doc``/``before``: the recipe before the edits; ``edited``: after them;
    ``provenance``: the benchmark PR the values come from (``owner/name#N``), or "".
    """
    after = construct_data(edited.root, edited.file)
    edits: list[SetComment] = []
    changes: list[CommentChange] = []
    seen: set[NodePath] = set()
    benchmarked = f"as benchmarked in {provenance}" if provenance else "as benchmarked"
    for edit in planned:
        if edit.kind not in _EDITED:
            continue
        if edit.shadows is None:
            if not isinstance(edit.edit, SetScalar) or edit.before is None:
                continue
            at, lines = _commented(doc, before, edit.edit.path)
            if at in seen or not names_value(lines, edit.before, edit.after):
                continue
            seen.add(at)
            said = script_comment(bench, edit.sources)
            new = _wrapped(edited, at, said[0], "A" + benchmarked[1:] + ".") if said else ()
            edits.append(SetComment(at, new))
            changes.append(
                CommentChange(
                    edit.subject,
                    edit.before,
                    format_path(at),
                    lines,
                    "replaced" if new else "removed",
                    format_path(at) if new else "",
                    new,
                    said[1] if said else "",
                )
            )
            continue
        old = _shadowed_value(before, edit.shadows)
        at, lines = _commented(doc, before, edit.shadows)
        new_at, new_value = _written_at(edit, after)
        if old is None or not new_at or at in seen or not names_value(lines, old, new_value):
            continue
        seen.add(at)
        parts = [str(p) for p in new_at]
        where = (
            f"On {hw_label(recipes, parts[parts.index('hardware_overrides') + 1])} this"
            if "hardware_overrides" in parts
            else "This"
        )
        said = script_comment(bench, edit.sources)
        new = _wrapped(
            edited,
            new_at,
            said[0] if said else "",
            f"{where} replaces {old}, {benchmarked}.",
        )
        edits.append(SetComment(new_at, new))
        changes.append(
            CommentChange(
                edit.subject,
                old,
                format_path(at),
                lines,
                "kept",
                format_path(new_at),
                new,
                said[1] if said else "",
            )
        )
    return edits, changes
