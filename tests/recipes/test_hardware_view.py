"""GPUs that look alike share one rendering (bot/recipes/hardware_view.py): the JSON API is the
same file for file, byte for byte, with and without sharing."""

from __future__ import annotations

from typing import Any

import orjson

from bot.recipes import RecipesRepo
from bot.recipes.api import _jobs_by_recipe, _Renderer, render_variant
from bot.recipes.hardware_view import hardware_view
from tests.recipes.conftest import MakeRepo


def _api(repo: RecipesRepo, share: bool) -> tuple[dict[str, bytes], _Renderer]:
    renderer = _Renderer(repo, share_hardware=share)
    files: dict[str, Any] = {}
    for jobs in _jobs_by_recipe(repo, None):
        for job in jobs:
            out = render_variant(renderer, job)
            files.update(out.hw_files)
            files.update(out.default_alternatives)
            files[f"{job.base}.json"] = out.recipe_json
    return {path: orjson.dumps(data) for path, data in files.items()}, renderer


def test_the_corpus_renders_the_same_bytes_with_and_without_sharing(
    corpus_repo: RecipesRepo,
) -> None:
    alone, unshared = _api(corpus_repo, share=False)
    shared, renderer = _api(corpus_repo, share=True)
    assert shared == alone  # every file, its key order included
    assert not unshared.by_view
    renderings = sum(1 for found in renderer.results.values() if not isinstance(found, str))
    assert len(renderer.by_view) < renderings / 2  # most GPUs look like another one


RECIPE = """
meta: {title: Small, tasks: [text], hardware: {mi300x: verified, b200: verified}}
model: {model_id: test/Small, base_args: ["--a", "1"]}
variants:
  default:
    vram_minimum_gb: 10%s
compatible_strategies: [single_node_tp]
%s"""


def _views(make_repo: MakeRepo, variant: str = "", recipe: str = "") -> dict[str, Any]:
    repo = make_repo({"models/test/Small.yaml": RECIPE % (variant, recipe)})
    views = {hw: hardware_view(repo, repo.recipes[0], "default", repo.hardware[hw]) for hw in HW}
    assert _api(repo, share=True)[0] == _api(repo, share=False)[0]
    return views


def test_a_gpu_the_recipe_names_renders_on_its_own(make_repo: MakeRepo) -> None:
    """GPUs share a rendering until the recipe keys something by one of them (an exact-GPU
    override) or by its generation (``blackwell``); a GPU named only under ``meta`` (read
    when the API picks hardware, never by a rendering) still shares."""
    views = _views(make_repo)
    assert views["mi300x"] == views["mi325x"] == views["mi355x"]
    assert views["h200"] == views["b200"]
    exact = '\n    hardware_overrides: {mi355x: {extra_args: ["--b", "2"]}}'
    views = _views(make_repo, variant=exact)
    assert views["mi300x"] == views["mi325x"] != views["mi355x"]
    assert views["h200"] == views["b200"]
    views = _views(make_repo, recipe='hardware_overrides: {blackwell: {extra_args: ["--c"]}}\n')
    assert views["h200"] != views["b200"]
    assert views["mi300x"] == views["mi325x"] == views["mi355x"]


def test_a_shared_rendering_names_its_own_gpu(make_repo: MakeRepo) -> None:
    exact = '\n    hardware_overrides: {mi355x: {extra_args: ["--b", "2"]}}'
    repo = make_repo({"models/test/Small.yaml": RECIPE % (exact, "")})
    shared, renderer = _api(repo, share=True)
    assert b'"--b","2"' in shared["test/Small/hw/mi355x.json"]
    assert b'"--b"' not in shared["test/Small/hw/mi325x.json"]
    assert shared["test/Small/hw/mi325x.json"].startswith(b'{"hardware":"mi325x",')
    assert shared["test/Small/hw/mi300x.json"].startswith(b'{"hardware":"mi300x",')
    renderings = sum(1 for found in renderer.results.values() if not isinstance(found, str))
    assert len(renderer.by_view) < renderings


HW = ("mi300x", "mi325x", "mi355x", "h200", "b200")
