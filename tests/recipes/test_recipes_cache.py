"""Loaded recipes trees and their renderings, reused by content only."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.errors import RecipeSyncError
from bot.recipes import RenderRequest, load_recipes, render
from bot.recipes.tolerant import RecipesCache
from bot.sources import DirectorySource

BASE = Path(__file__).resolve().parents[2] / "fixtures" / "recipes-repo" / "base"
MODEL = "models/openai/gpt-oss-120b.yaml"
REQUEST = RenderRequest(model="openai/gpt-oss-120b", hardware="h200")


def test_one_load_per_content_and_an_edited_tree_renders_afresh(tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    shutil.copytree(BASE, root)
    cache = RecipesCache()
    first = cache.load(DirectorySource(root)).repo
    assert first is not None
    before = render(first, REQUEST)
    assert render(first, REQUEST) is before  # memoised on the tree
    assert cache.load(DirectorySource(root)).repo is first  # same files: the same tree
    text = (root / MODEL).read_text()
    (root / MODEL).write_text(text.replace("base_args: []", 'base_args: ["--enforce-eager"]'))
    edited = cache.load(DirectorySource(root)).repo
    assert edited is not None and edited is not first
    after = render(edited, REQUEST)
    assert "--enforce-eager" in after.commands[0].argv
    assert "--enforce-eager" not in before.commands[0].argv


def test_a_failed_rendering_is_memoised_as_the_same_error() -> None:
    repo = RecipesCache().load(DirectorySource(BASE)).repo
    assert repo is not None
    request = RenderRequest(model="no/such-model", hardware="h200")
    errors: list[RecipeSyncError] = []
    for _ in range(2):
        try:
            render(repo, request)
        except RecipeSyncError as err:
            errors.append(err)
    assert len(errors) == 2 and str(errors[0]) == str(errors[1])
    assert "no recipe or promoted variant" in str(errors[0])


def test_a_recipe_file_is_read_once_per_content_and_context(tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    shutil.copytree(BASE, root)
    first = load_recipes(DirectorySource(root))
    other = next(r.path for r in first.recipes if r.path != MODEL)
    # another tree with the same files: each recipe, with its memoised renderings, is shared
    again = load_recipes(DirectorySource(root))
    assert again is not first and again.by_path[MODEL] is first.by_path[MODEL]
    # an edited file is read afresh; the others still come from the first load
    text = (root / MODEL).read_text()
    (root / MODEL).write_text(text.replace("base_args: []", 'base_args: ["--enforce-eager"]'))
    edited = load_recipes(DirectorySource(root))
    assert edited.by_path[MODEL] is not first.by_path[MODEL]
    assert edited.by_path[other] is first.by_path[other]
    # another taxonomy is another context: renderings read it, so nothing is shared
    taxonomy = root / "taxonomy.yaml"
    taxonomy.write_text(taxonomy.read_text() + "\n# a comment changes the blob\n")
    assert load_recipes(DirectorySource(root)).by_path[other] is not first.by_path[other]
    # a broken file is never kept: the next load says why again
    (root / MODEL).write_text("variants: [")
    for _ in range(2):
        try:
            load_recipes(DirectorySource(root))
        except RecipeSyncError as err:
            assert MODEL in str(err)
        else:
            raise AssertionError("a broken recipe loaded")
