"""Conformance: the whole shared corpus renders exactly as the upstream builder wrote it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.recipes import RecipesRepo, write_api


def first_difference(mine: Any, theirs: Any, where: str = "") -> str | None:
    """Where two JSON values differ, key order included (None when identical)."""
    if isinstance(theirs, dict):
        if not isinstance(mine, dict):
            return f"{where}: expected an object, got {mine!r:.200}"
        if list(mine) != list(theirs):
            return f"{where}: keys {list(mine)} != {list(theirs)}"
        for key in theirs:
            found = first_difference(mine[key], theirs[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(theirs, list):
        if not isinstance(mine, list) or len(mine) != len(theirs):
            return f"{where}: {mine!r:.300} != {theirs!r:.300}"
        for index, (left, right) in enumerate(zip(mine, theirs, strict=True)):
            found = first_difference(left, right, f"{where}[{index}]")
            if found:
                return found
        return None
    if type(mine) is not type(theirs) and not (
        isinstance(mine, int | float) and isinstance(theirs, int | float)
    ):
        return f"{where}: {type(mine).__name__} {mine!r:.200} != {type(theirs).__name__}"
    if mine != theirs:
        return f"{where}: {mine!r:.500} != {theirs!r:.500}"
    return None


def test_first_difference_sees_key_order_and_values() -> None:
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2]}) is None
    assert "keys" in (first_difference({"b": 1, "a": 1}, {"a": 1, "b": 1}) or "")
    assert ".b[1]" in (first_difference({"b": [1, 3]}, {"b": [1, 2]}) or "")
    assert first_difference({"x": "1"}, {"x": 1}) is not None


def test_every_upstream_rendering_matches_field_for_field(
    corpus_api: dict[str, Any], reference: dict[str, Any]
) -> None:
    assert len(reference) == 13_764
    missing = sorted(set(reference) - set(corpus_api))
    extra = sorted(set(corpus_api) - set(reference))
    mismatches = []
    for path, expected in reference.items():
        if path in corpus_api:
            found = first_difference(corpus_api[path], expected)
            if found:
                mismatches.append(f"{path}{found}")
    assert not missing, f"{len(missing)} files not rendered, first: {missing[0]}"
    assert not extra, f"{len(extra)} files upstream does not write, first: {extra[0]}"
    assert len(mismatches) == 0, f"{len(mismatches)} mismatches, first: {mismatches[0]}"


def test_only_recipes_renders_that_recipe_and_its_promotions(
    corpus_repo: RecipesRepo, corpus_api: dict[str, Any]
) -> None:
    from bot.recipes import build_api

    subset = build_api(corpus_repo, only_recipes={"models/deepseek-ai/DeepSeek-V4-Flash.yaml"})
    bases = {path.split("/hw/")[0] for path in subset}
    assert bases == {
        "deepseek-ai/DeepSeek-V4-Flash",
        "deepseek-ai/DeepSeek-V4-Flash-0731",
        "deepseek-ai/DeepSeek-V4-Flash-DSpark",
        "nvidia/DeepSeek-V4-Flash-NVFP4",
    }
    assert all(subset[path] == corpus_api[path] for path in subset)


def test_write_api_writes_the_builders_file_set(
    corpus_repo: RecipesRepo, reference: dict[str, Any], tmp_path: Path
) -> None:
    summary = write_api(corpus_repo, tmp_path, workers=2)
    # the builder's own summary line and file count (spec §5.5)
    assert (summary.models, summary.with_recommended) == (173, 148)
    assert (summary.default_alternatives, summary.per_hw) == (729, 1392)
    assert summary.promoted == 158
    assert summary.renderings == 13_764
    assert summary.files == 15_727
    assert summary.dropped == ()
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")}
    assert len(written) == 15_727
    hw_files = {path for path in written if "/hw/" in path}
    assert hw_files == set(reference)
    sample = "deepseek-ai/DeepSeek-V4-Flash/hw/mi355x.json"
    on_disk = json.loads((tmp_path / sample).read_text(encoding="utf-8"))
    assert first_difference(on_disk, reference[sample]) is None
    # default-hardware alternatives live beside hw/, not under it (T6)
    assert "deepseek-ai/DeepSeek-V4-Flash/strategies/single_node_tp.json" in written
