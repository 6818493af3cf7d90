"""Shared fixtures: the real recipes corpus (read in place) and small synthetic checkouts."""

from __future__ import annotations

import gzip
import json
import shutil
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from bot.recipes import RecipesRepo, build_api, load_recipes
from bot.sources import DirectorySource
from tests.shared import corpus_dir


@pytest.fixture(scope="session")
def corpus() -> Path:
    return corpus_dir()


@pytest.fixture(scope="session")
def corpus_repo(corpus: Path) -> RecipesRepo:
    return load_recipes(DirectorySource(corpus))


@pytest.fixture(scope="session")
def corpus_api(corpus_repo: RecipesRepo) -> dict[str, Mapping[str, Any]]:
    return build_api(corpus_repo)


@pytest.fixture(scope="session")
def reference(corpus: Path) -> dict[str, Any]:
    """path → rendering, as the upstream builder wrote them (order of keys preserved)."""
    found = {}
    with gzip.open(corpus / "renderings.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            found[row["path"]] = row["rendering"]
    return found


MakeRepo = Callable[..., RecipesRepo]


@pytest.fixture()
def make_repo(tmp_path: Path, corpus: Path) -> MakeRepo:
    """A checkout with the real taxonomy/strategies/kv_store and the given recipe files."""

    def make(recipes: Mapping[str, str], root: Path | None = None) -> RecipesRepo:
        root = root or tmp_path / "recipes"
        if not (root / "taxonomy.yaml").exists():
            root.mkdir(parents=True, exist_ok=True)
            shutil.copy(corpus / "taxonomy.yaml", root / "taxonomy.yaml")
            shutil.copytree(corpus / "strategies", root / "strategies")
            shutil.copytree(corpus / "kv_store", root / "kv_store")
        for relative, text in recipes.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return load_recipes(DirectorySource(root))

    return make
