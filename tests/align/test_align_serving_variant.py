"""A recipe whose default variant names a newer checkpoint than its hf_id (real corpus shape)."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.align.profile import find_recipe
from bot.recipes import load_recipes
from bot.rules import default_rules
from bot.sources import DirectorySource
from tests.shared import corpus_dir

RECIPE = """\
meta:
  title: Foo 7B
model:
  model_id: "acme/Foo-7B"
variants:
  default:
    model_id: "acme/Foo-7B-0813"
    precision: fp8
  preview:
    precision: fp8
  nvfp4:
    model_id: "acme/Foo-7B-NVFP4"
    precision: nvfp4
"""


def recipes_with(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "models" / "acme" / "Foo-7B.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    shutil.copy(corpus_dir() / "taxonomy.yaml", tmp_path / "taxonomy.yaml")
    return load_recipes(DirectorySource(tmp_path))


def test_the_variant_inheriting_the_hf_id_serves_it(tmp_path: Path) -> None:
    recipes = recipes_with(tmp_path, RECIPE)
    found = find_recipe(recipes, default_rules(), "acme/Foo-7B", "fp8")
    assert isinstance(found, tuple)
    assert found[1] == "preview"
    assert find_recipe(recipes, default_rules(), "acme/Foo-7B-0813", "fp8")[1] == "default"  # type: ignore[index]
    assert find_recipe(recipes, default_rules(), "acme/Foo-7B-NVFP4", "fp4")[1] == "nvfp4"  # type: ignore[index]


def test_default_stays_when_it_serves_the_hf_id(tmp_path: Path) -> None:
    text = RECIPE.replace('    model_id: "acme/Foo-7B-0813"\n', "")
    found = find_recipe(recipes_with(tmp_path, text), default_rules(), "acme/Foo-7B", "fp8")
    assert isinstance(found, tuple) and found[1] == "default"


def test_bare_staged_kimi_name_maps_to_the_nvfp4_variant() -> None:
    recipes = load_recipes(DirectorySource(corpus_dir()))
    found = find_recipe(recipes, default_rules(), "Kimi-K2.6-NVFP4", "fp4")
    assert isinstance(found, tuple)
    assert (found[0].path, found[1]) == ("models/moonshotai/Kimi-K2.6.yaml", "nvfp4")
