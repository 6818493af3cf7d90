"""``recipe-sync score`` end to end on the seed history: PR #3058 replayed through the engine,
maintainer commits after it in a real recipes repository, strict and loose scorecards, and
windows side by side."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.commands.main import main
from bot.fixtures import SeedFixtures
from tests.backtest.conftest import commit, seed_history
from tests.ungated import ungated_rules_dir

__all__ = ["seed_history"]  # the fixture, shared with the backtest tests

RECIPE = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"


def _node(data: dict[str, Any], path: str) -> dict[str, Any]:
    for part in path.split("."):
        data = data.setdefault(part, {})
    return data


@pytest.fixture(scope="module")
def answered(seed_history: SeedFixtures, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seed recipes, then (after #3058 merged on 2030-01-02) a maintainer commit that
    writes the PR's env variable at the bot's node, puts its MoE backend behind an opt-in
    feature and adds a guide note for MI355X; 39 days after the merge another sets the PR's
    image at the bot's node (too late to answer the PR)."""
    recipes = tmp_path_factory.mktemp("answered") / "recipes"
    shutil.copytree(seed_history.recipes_repo, recipes)
    data = yaml.safe_load((recipes / RECIPE).read_text())
    gpu = _node(data, "variants.default.hardware_overrides.mi355x")
    # the recipe's only AMD lane runs it: the bot's node is the amd block (placement by domain)
    _node(data, "hardware_overrides.amd.extra_env")["AITER_TRITON_LOG_LEVEL"] = "ERROR"
    _node(data, "features.aiter_moe")["args"] = ["--moe-backend", "aiter"]
    data["guide"] = data["guide"] + "### MI355X\nThe InferenceX #3058 lane runs the AITER MoE.\n"
    commit(recipes, "DeepSeek-V4.1-Flash on MI355X (#970)", "2030-01-04T00:00:00Z",
           {RECIPE: yaml.safe_dump(data, sort_keys=False)})  # fmt: skip
    gpu["docker_image"] = "vllm/vllm-openai-rocm:nightly"
    commit(recipes, "Move MI355X to the nightly image (#990)", "2030-02-10T00:00:00Z",
           {RECIPE: yaml.safe_dump(data, sort_keys=False)})  # fmt: skip
    return recipes


def _score(seed: SeedFixtures, recipes: Path, out: Path, *extra: str) -> dict[str, Any]:
    args = ["score", "--bench-repo", str(seed.bench_repo), "--recipes", str(recipes),
            "--since", "2030-01-01", "--until", "2030-01-31", "--out", str(out),
            "--rules", str(ungated_rules_dir(out.parent)),  # every candidate in the diff
            *extra]  # fmt: skip
    assert main(args) == 0
    return json.loads(out.read_text()) if out.suffix == ".json" else {}


def test_strict_scoring_is_the_default_and_loose_is_kept_for_comparison(
    seed_history: SeedFixtures, answered: Path, tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache.jsonl")
    strict = _score(seed_history, answered, tmp_path / "s.json", "--cache", cache)
    loose = _score(seed_history, answered, tmp_path / "l.json", "--cache", cache, "--loose")
    outcomes = {
        name: {p["subject"]: p["outcome"] for p in data["proposals"]}
        for name, data in (("strict", strict), ("loose", loose))
    }
    assert outcomes["loose"] == {
        "AITER_TRITON_LOG_LEVEL": "same node",
        "--moe-backend": "same value elsewhere",
        "image": "same node",
    }
    assert outcomes["strict"] == {
        "AITER_TRITON_LOG_LEVEL": "same node",
        "--moe-backend": "other choice",  # forced in the bot's diff, opt-in for maintainers
        "image": "unlinked",  # 39 days after the merge
    }
    assert strict["scoring"] == "strict" and loose["scoring"] == "loose"
    guide = strict["guide"]
    assert (guide["sections_proposed"], guide["sections_matched"]) == (1, 1)
    assert guide["maintainer_lines"] == 2 and guide["lines_proposed"] > 2
    assert strict["volume"]["prs"] == 1 and strict["volume"]["added_lines"] > 0


def test_a_split_reports_each_window_and_the_whole_side_by_side(
    seed_history: SeedFixtures,
    answered: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache = str(tmp_path / "cache.jsonl")
    split = ("--split", "2030-01-02", "--cache", cache)
    data = _score(seed_history, answered, tmp_path / "h.json", *split)
    windows = [(w["since"], w["until"]) for w in data["windows"]]
    assert windows == [
        ("2030-01-01", "2030-01-01"),
        ("2030-01-02", "2030-01-31"),
        ("2030-01-01", "2030-01-31"),
    ]
    same_node = [w["headline"][0] for w in data["windows"]]
    assert [(m["hits"], m["of"]) for m in same_node] == [(0, 0), (1, 3), (1, 3)]
    err = capsys.readouterr().err.splitlines()
    assert [line.split(":", 1)[0] for line in err[-3:]] == [
        "strict 2030-01-01 … 2030-01-01",
        "strict 2030-01-02 … 2030-01-31",
        "strict 2030-01-01 … 2030-01-31",
    ]
    _score(seed_history, answered, tmp_path / "h.md", *split)
    text = (tmp_path / "h.md").read_text()
    assert "## Windows" in text
    assert "| adopted at the same node | ≥ 35 % | 0/0 | 1/3 (33 %) (not met) | 1/3 (33 %)" in text


def test_bad_windows_are_one_line_errors(
    seed_history: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["score", "--bench-repo", str(seed_history.bench_repo), "--recipes",
            str(seed_history.recipes_repo)]  # fmt: skip
    for extra, message in (
        (["--window", "2030-01-01"], "--window: expected SINCE..UNTIL"),
        (["--split", "2030-13-01"], "--split: not a date (YYYY-MM-DD): 2030-13-01"),
        (["--since", "2030-01-05", "--split", "2030-01-02"], "--split: 2030-01-02 does not"),
        (["--split", "2030-01-02", "--window", "..2030-01-03"], "give --split or --window"),
    ):
        assert main([*base, *extra]) == 2
        assert message in capsys.readouterr().err
