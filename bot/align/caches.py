"""What one process's alignment runs share: script evaluations (valid while the files they
read are unchanged) and loaded recipes trees with their renderings (by content). Owned by a
long-lived caller (the backtest's :class:`~bot.backtest.run.Backtester`, the App's engine),
never module state, so two owners (or two tests) never see each other's entries."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from bot.recipes import RecipesRepo
from bot.recipes.tolerant import RecipesCache
from bot.rules import Rules
from bot.shell import EvaluationCache
from bot.shell.shared import SharedEvaluations

T = TypeVar("T")


class LineMemo(Generic[T]):
    """What a launch line is for one recipes tree under one set of rules, by the line's value
    (its ``repr``: plain data, every field shown), bounded, least recently used out. After a
    benchmark-library change every point is evaluated again, but most lines come out as
    before, and so does their classification.

    Entries are grouped by (tree, rules) and only the ``max_trees`` groups used last are kept,
    as :class:`~bot.recipes.tolerant.RecipesCache` keeps trees: a tree the process no longer
    uses is not kept alive by its classifications (the App sees a new recipes commit after
    every merge)."""

    def __init__(self, max_entries: int = 4_096, max_trees: int = 2) -> None:
        self.max_entries = max_entries
        self.max_trees = max_trees
        # (id(tree), id(rules)) → (tree, rules, line → value); the objects are kept with
        # their group, so an id is never reused while it is stored
        self._groups: OrderedDict[
            tuple[int, int], tuple[RecipesRepo, Rules, OrderedDict[str, T]]
        ] = OrderedDict()
        self._count = 0
        self._lock = threading.Lock()
        self.hits = 0

    def __len__(self) -> int:
        return self._count

    def get(self, recipes: RecipesRepo, rules: Rules, line: object, make: Callable[[], T]) -> T:
        scope, key = (id(recipes), id(rules)), repr(line)
        with self._lock:
            group = self._groups.get(scope)
            if group is not None and key in group[2]:
                self._groups.move_to_end(scope)
                group[2].move_to_end(key)
                self.hits += 1
                return group[2][key]
        value = make()
        with self._lock:
            group = self._groups.get(scope)
            if group is None:
                group = self._groups[scope] = (recipes, rules, OrderedDict())
            self._groups.move_to_end(scope)
            if key not in group[2]:
                self._count += 1
            group[2][key] = value
            while len(self._groups) > self.max_trees:
                _, (_, _, dropped) = self._groups.popitem(last=False)
                self._count -= len(dropped)
            while self._count > self.max_entries:
                oldest_scope, (_, _, oldest) = next(iter(self._groups.items()))
                oldest.popitem(last=False)
                self._count -= 1
                if not oldest:
                    del self._groups[oldest_scope]
        return value


def evaluation_cache(shared: SharedEvaluations | None = None) -> EvaluationCache:
    """The evaluation cache of one process (``shared``: the directory its replay shares)."""
    # a fortnight of InferenceX history holds ~9,500 distinct (script, environment) pairs; at
    # 4,096 a third of a backtest's evaluations were of entries pushed out (07-01…07-15:
    # 138 → 106 CPU-s in one process, peak 243 → 273 MiB)
    return EvaluationCache(max_entries=16_384, shared=shared)


@dataclass
class EngineCaches:
    evaluations: EvaluationCache = field(default_factory=evaluation_cache)
    recipes: RecipesCache = field(default_factory=RecipesCache)
    points: LineMemo[object] = field(default_factory=LineMemo)
