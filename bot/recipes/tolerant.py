"""Load a recipes repository so that one broken recipe file costs only that recipe.

A maintainer's repository is never fully valid (upstream main has carried, for days, a
feature with both ``args`` and ``modes``). The audit and the alignment both load the recipes
this way: every recipe file that does not load is left out and named with its reason; the
taxonomy, the strategies or too many broken files still make the repository unusable.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.errors import InputError
from bot.recipes.repo import RecipesRepo, load_recipes
from bot.sources import FileSource, WithoutFiles

MAX_BROKEN_RECIPES = 64  # past this many bad recipe files the repository is reported unusable


@dataclass(frozen=True)
class RecipesLoad:
    """The recipes repository without its broken recipe files, or why it is unusable."""

    repo: RecipesRepo | None
    error: str | None = None  # taxonomy, strategies or too many recipes do not load
    broken: Mapping[str, str] = field(default_factory=dict)  # recipe path → why

    def broken_recipe_for(self, model: str) -> tuple[str, str] | None:
        """(path, why) when ``model`` is the hf_id of a recipe file that does not load."""
        path = f"models/{model}.yaml"
        reason = self.broken.get(path)
        return (path, reason) if reason is not None else None


def _failed_recipe(err: InputError, label: str) -> str | None:
    prefix = f"{label}:"
    file = err.location.file
    if not file.startswith(prefix):
        return None
    path = file[len(prefix) :]
    return path if path.startswith("models/") and path.endswith(".yaml") else None


def load_recipes_tolerant(source: FileSource, *, two_way: bool = False) -> RecipesLoad:
    """``load_recipes``, leaving out each recipe file that does not load (and saying why).
    ``two_way`` as in ``load_recipes``, for the first attempt (the recipes it loaded are
    memoised; a retry parses only the rest)."""
    broken: dict[str, str] = {}
    for _ in range(MAX_BROKEN_RECIPES + 1):
        try:
            if broken:
                repo = load_recipes(WithoutFiles(source, broken))
            else:
                repo = load_recipes(source, two_way=two_way)
        except InputError as err:
            path = _failed_recipe(err, source.label)
            if path is None or path in broken:
                return RecipesLoad(None, str(err), dict(broken))
            broken[path] = str(err)
            continue
        return RecipesLoad(repo, None, dict(broken))
    return RecipesLoad(
        None, f"more than {MAX_BROKEN_RECIPES} recipe files do not load", dict(broken)
    )


class RecipesCache:
    """Loaded recipes trees kept by content, so that the jobs of one process (a backtest's
    PRs, the App's runs) load a recipes commit once and share its memoised renderings.

    The key is the source's label (it appears in messages) and the blob SHA of every file:
    an edited or other tree never meets the load of another."""

    def __init__(self, max_trees: int = 2) -> None:
        self.max_trees = max_trees
        self._loads: OrderedDict[tuple[object, ...], RecipesLoad] = OrderedDict()
        self._lock = threading.Lock()  # held while loading: one load per tree

    def load(self, source: FileSource) -> RecipesLoad:
        key = (source.label, tuple((p, source.blob_sha(p)) for p in source.iter_files()))
        with self._lock:
            found = self._loads.get(key)
            if found is None:
                found = self._loads[key] = load_recipes_tolerant(source)
                while len(self._loads) > self.max_trees:
                    self._loads.popitem(last=False)
            self._loads.move_to_end(key)
            return found
