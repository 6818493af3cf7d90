"""What one process's alignment runs share: script evaluations (valid while the files they
read are unchanged) and loaded recipes trees with their renderings (by content). Owned by a
long-lived caller (the backtest's :class:`~bot.backtest.run.Backtester`, the App's engine),
never module state, so two owners (or two tests) never see each other's entries."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.recipes.tolerant import RecipesCache
from bot.shell import EvaluationCache


@dataclass
class EngineCaches:
    evaluations: EvaluationCache = field(default_factory=EvaluationCache)
    recipes: RecipesCache = field(default_factory=RecipesCache)
