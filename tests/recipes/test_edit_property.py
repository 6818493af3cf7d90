"""Property: random valid edits to random real recipes keep every untouched byte.

For each example: pick a recipe from the real corpus, draw one to three valid edits against
its data (tracked by a small independent model below), apply them, and check that

* every line outside the reported changed ranges is identical and in the same order,
* the ranges are sorted, disjoint and inside both texts, and insertions replace no old line,
* the result parses (YAML 1.2) to exactly the model's data, mapping order and types included,
* CRLF files stay CRLF and a missing final newline stays missing (both drawn at random).
"""

from __future__ import annotations

import copy
import datetime as dt
import math
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from bot.recipes.edit import (
    AppendItems,
    ChangedRange,
    Edit,
    EnsurePath,
    InsertItems,
    InsertKey,
    RemoveItems,
    SetScalar,
    apply_edits,
)
from tests.shared import corpus_dir

CORPUS = corpus_dir() / "models"
FILES = sorted(str(path) for path in CORPUS.rglob("*.yaml")) if CORPUS.is_dir() else []

pytestmark = pytest.mark.skipif(not FILES, reason="recipes corpus not available")

_YAML = YAML(typ="safe", pure=True)


@cache
def _recipe(path: str) -> tuple[str, Any, frozenset[tuple[str, ...]]]:
    """Text, data, and the key-only paths of block collections (where comments can go)."""
    text = Path(path).read_text(encoding="utf-8")
    return text, _YAML.load(text), frozenset(_block_paths(YAML(typ="rt").load(text)))


def _block_paths(node: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    if isinstance(node, CommentedMap | CommentedSeq):
        empty_under_key = not node and bool(path)  # `key: {}` / `key: []` turn block
        if not node.fa.flow_style() or empty_under_key:
            out.append(path)
    if isinstance(node, CommentedMap):
        for key, value in node.items():
            if isinstance(key, str):
                out.extend(_block_paths(value, (*path, key)))
    return out


# --- an independent model of what each edit does to the data ---------------------------


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _model_apply(data: Any, edit: Edit) -> None:
    if isinstance(edit, SetScalar):
        _get(data, edit.path[:-1])[edit.path[-1]] = edit.value
    elif isinstance(edit, InsertKey):
        mapping = _get(data, edit.map_path)
        keys = list(mapping)
        at = keys.index(edit.after) + 1 if edit.after is not None else len(keys)
        items = list(mapping.items())
        items.insert(at, (edit.key, copy.deepcopy(edit.value)))
        mapping.clear()
        mapping.update(items)
    elif isinstance(edit, EnsurePath):
        node, depth = data, 0
        while isinstance(node, list) or edit.path[depth] in node:
            node, depth = node[edit.path[depth]], depth + 1
        value: Any = copy.deepcopy(edit.value)
        for key in reversed(edit.path[depth + 1 :]):
            value = {key: value}
        items = list(node.items())
        at = len(items)
        if depth == 0 and "guide" in node:
            at = list(node).index("guide")
        items.insert(at, (edit.path[depth], value))
        node.clear()
        node.update(items)
    elif isinstance(edit, InsertItems):
        _get(data, edit.list_path)[edit.index : edit.index] = copy.deepcopy(list(edit.items))
    elif isinstance(edit, AppendItems):
        _get(data, edit.list_path).extend(copy.deepcopy(list(edit.items)))
    elif isinstance(edit, RemoveItems):
        del _get(data, edit.list_path)[edit.index : edit.index + edit.count]


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return ("map", tuple((_canonical(k), _canonical(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("seq", tuple(_canonical(item) for item in value))
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value).__name__, value)


def _nodes(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out = [(path, data)]
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str):
                out.extend(_nodes(value, (*path, key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out.extend(_nodes(value, (*path, index)))
    return out


# --- strategies ----------------------------------------------------------------------------

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=24)
_words = st.text("abcdefghijklmnopqrstuvwxyz_-.:#' \"0123456789", min_size=1, max_size=16)
_lines = st.text(st.characters(exclude_categories=("Cs",)) | st.just("\n"), max_size=60)
_scalars = st.one_of(
    _text,
    _words,
    _lines,
    st.integers(-(10**6), 10**12),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, width=64),
    st.dates(dt.date(1990, 1, 1), dt.date(2100, 12, 31)),
    st.sampled_from(["--max-num-seqs", "128", "aiter", "yes", "null", "1e3", "0755", "~", ""]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_words, inner, max_size=3),
    max_leaves=6,
)
_comments = st.lists(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\t"), max_size=30),
    max_size=2,
)


def _new_key(draw: st.DrawFn, mapping: dict[Any, Any]) -> str:
    taken = {str(key) for key in mapping}
    return draw((_words | _text.filter(bool)).filter(lambda key: key not in taken))


@st.composite
def _edit(draw: st.DrawFn, data: Any, block: frozenset[tuple[str, ...]]) -> Edit:
    """One valid edit for ``data``; comments only where the original file has block style."""
    nodes = _nodes(data)
    maps = [(path, node) for path, node in nodes if isinstance(node, dict)]
    lists = [(path, node) for path, node in nodes if isinstance(node, list)]
    scalars = [path for path, node in nodes if path and not isinstance(node, dict | list)]
    kinds = ["set", "insert_key", "ensure"] + (
        ["insert_items", "append", "remove"] if lists else []
    )
    kind = draw(st.sampled_from(kinds if scalars else kinds[1:]))
    if kind == "set":
        return SetScalar(draw(st.sampled_from(scalars)), draw(_scalars))
    if kind == "insert_key":
        path, mapping = draw(st.sampled_from(maps))
        keys = [key for key in mapping if isinstance(key, str)]
        after = draw(st.none() | st.sampled_from(keys)) if keys else None
        comment = draw(_comments) if path in block else None
        return InsertKey(path, _new_key(draw, mapping), draw(_values), after, comment)
    if kind == "ensure":
        path, mapping = draw(st.sampled_from(maps))
        first = _new_key(draw, mapping)
        rest = draw(st.lists(_words, max_size=2))
        return EnsurePath((*path, first, *rest), draw(_values))
    path, items = draw(st.sampled_from(lists))
    if kind == "insert_items":
        index = draw(st.integers(0, len(items)))
        return InsertItems(path, index, draw(st.lists(_values, min_size=1, max_size=3)))
    if kind == "append" or not items:
        comment = draw(_comments) if path in block else None
        return AppendItems(path, draw(st.lists(_values, min_size=1, max_size=3)), comment)
    index = draw(st.integers(0, len(items) - 1))
    return RemoveItems(path, index, draw(st.integers(1, len(items) - index)))


# --- the property --------------------------------------------------------------------------


def _check_ranges(old: list[str], new: list[str], ranges: tuple[ChangedRange, ...]) -> None:
    previous_old, previous_new = 1, 1
    for changed in ranges:
        assert previous_old <= changed.old_start <= changed.old_end <= len(old) + 1
        assert previous_new <= changed.new_start <= changed.new_end <= len(new) + 1
        # the unchanged stretch before this range is identical, line for line
        assert (
            old[previous_old - 1 : changed.old_start - 1]
            == new[previous_new - 1 : changed.new_start - 1]
        )
        assert changed.old_lines or changed.new_lines
        previous_old, previous_new = changed.old_end, changed.new_end
    assert old[previous_old - 1 :] == new[previous_new - 1 :]


def _run(data_strategy: st.DataObject, max_edits: int = 3) -> None:
    file = data_strategy.draw(st.sampled_from(FILES), label="recipe")
    text, original, block = _recipe(file)
    crlf = data_strategy.draw(st.booleans(), label="CRLF line ends")
    if crlf:
        text = text.replace("\n", "\r\n")
    if data_strategy.draw(st.booleans(), label="no final newline"):
        text = text.rstrip("\r\n")
        original = _YAML.load(text)  # a final block scalar loses its line break too
    model = copy.deepcopy(original)
    edits: list[Edit] = []
    for _ in range(data_strategy.draw(st.integers(1, max_edits), label="edit count")):
        edit = data_strategy.draw(_edit(model, block), label="edit")
        _model_apply(model, edit)
        edits.append(edit)
    result = apply_edits(text, edits, file=file)
    old, new = text.splitlines(keepends=True), result.text.splitlines(keepends=True)
    _check_ranges(old, new, result.changed)
    if all(isinstance(edit, InsertKey | EnsurePath | InsertItems | AppendItems) for edit in edits):
        # Insertions add lines; an old line changes only to open an empty `{}`/`[]`, or to
        # give the last line a newline (plus a `|` header turning `|-` when that line ends a
        # block scalar).
        assert sum(len(r.old_lines) for r in result.changed) <= 2 * len(edits)
    assert _canonical(_YAML.load(result.text)) == _canonical(model)
    assert (result.text.count("\n") == result.text.count("\r\n")) == crlf
    assert result.text.endswith("\n") == text.endswith("\n")


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_random_edits_keep_untouched_bytes(data: st.DataObject) -> None:
    _run(data)


@pytest.mark.slow
@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_random_edits_keep_untouched_bytes_many(data: st.DataObject) -> None:
    _run(data)
