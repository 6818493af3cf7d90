"""The classification memo of the engine caches: reuse by (tree, rules, line value), bounded
in entries and in trees, so a recipes tree the process stopped using is released."""

from __future__ import annotations

import gc
import weakref
from functools import partial
from typing import cast

from bot.align.caches import LineMemo
from bot.recipes import RecipesRepo
from bot.rules import Rules


class _Tree:  # a stand-in: the memo only holds and compares the object
    pass


def _tree() -> RecipesRepo:
    return cast(RecipesRepo, _Tree())


RULES = cast(Rules, object())


def test_a_line_is_classified_once_per_tree_and_rules() -> None:
    memo: LineMemo[str] = LineMemo()
    tree, calls = _tree(), []

    def make() -> str:
        calls.append(1)
        return "represents"

    assert memo.get(tree, RULES, ("line", 1), make) == "represents"
    assert memo.get(tree, RULES, ("line", 1), make) == "represents"
    assert len(calls) == 1 and memo.hits == 1
    memo.get(_tree(), RULES, ("line", 1), make)  # another tree: classified again
    assert len(calls) == 2


def test_a_tree_no_longer_used_is_released_with_its_entries() -> None:
    memo: LineMemo[str] = LineMemo(max_trees=2)
    first = _tree()
    released = weakref.ref(first)
    memo.get(first, RULES, "a", lambda: "x")
    memo.get(first, RULES, "b", lambda: "x")
    memo.get(_tree(), RULES, "a", lambda: "y")
    memo.get(_tree(), RULES, "a", lambda: "z")  # a third tree: the first group goes
    del first
    gc.collect()
    assert released() is None
    assert len(memo) == 2


def test_entries_are_bounded_across_trees() -> None:
    memo: LineMemo[int] = LineMemo(max_entries=3, max_trees=2)
    old, new = _tree(), _tree()
    for index in range(3):
        memo.get(old, RULES, index, partial(int, index))
    memo.get(new, RULES, "x", lambda: 9)  # the fourth entry: the least recently used goes
    assert len(memo) == 3
    assert memo.get(new, RULES, "x", lambda: -1) == 9
    assert memo.get(old, RULES, 2, lambda: -1) == 2
    assert memo.get(old, RULES, 0, lambda: -1) == -1  # it was old's first entry
