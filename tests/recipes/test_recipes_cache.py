"""Loaded recipes trees and their renderings, reused by content only."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.errors import RecipeSyncError
from bot.recipes import RenderRequest, render
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
