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

T = TypeVar("T")


class LineMemo(Generic[T]):
    """What a launch line is for one recipes tree under one set of rules, by the line's value
    (its ``repr``: plain data, every field shown), bounded, least recently used out. After a
    benchmark-library change every point is evaluated again, but most lines come out as
    before, and so does their classification."""

    def __init__(self, max_entries: int = 4_096) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[int, int, str], tuple[RecipesRepo, Rules, T]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, recipes: RecipesRepo, rules: Rules, line: object, make: Callable[[], T]) -> T:
        key = (id(recipes), id(rules), repr(line))
        with self._lock:
            found = self._entries.get(key)
            # the objects are kept with the entry: an id is never reused while it is stored
            if found is not None and found[0] is recipes and found[1] is rules:
                self._entries.move_to_end(key)
                self.hits += 1
                return found[2]
        value = make()
        with self._lock:
            self._entries[key] = (recipes, rules, value)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return value


@dataclass
class EngineCaches:
    evaluations: EvaluationCache = field(default_factory=EvaluationCache)
    recipes: RecipesCache = field(default_factory=RecipesCache)
    points: LineMemo[object] = field(default_factory=LineMemo)
