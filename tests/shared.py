"""The read-only shared data for tests, or a skip that says why it is missing.

Tests read the real recipes corpus, histories and GitHub examples beside the checkout (see
``bot/shared_data.py``). Without them the tests that need them are skipped with the reason
(``RECIPE_SYNC_SHARED`` names another place); they never fail at collection.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from bot import shared_data
from bot.errors import InputError


def _need(find: Callable[[], Path]) -> Path:
    try:
        return find()
    except InputError as err:
        pytest.skip(f"shared data missing: {err}", allow_module_level=True)


def corpus_dir() -> Path:
    """The real vllm-project/recipes corpus (skips without it)."""
    return _need(shared_data.corpus_dir)


def github_data_dir() -> Path:
    """Real webhook payloads and REST examples (skips without them)."""
    return _need(shared_data.github_data_dir)


def shared_dir() -> Path:
    """The whole shared directory (skips without it)."""
    return _need(shared_data.shared_dir)


BENCH_BUNDLE = "InferenceX-main-upto-2026-08-21.bundle"
RECIPES_BUNDLE = "recipes-main-upto-2026-07-31.bundle"


def clone_histories(root: Path, recipes: str = RECIPES_BUNDLE) -> tuple[Path, Path]:
    """The real InferenceX and recipes histories cloned from their bundles into ``root``
    (``root/bench``, ``root/recipes``); skips without the shared data."""
    history = shared_dir() / "data" / "history"
    for name, bundle in (("bench", BENCH_BUNDLE), ("recipes", recipes)):
        subprocess.run(["git", "clone", "-q", str(history / bundle), str(root / name)], check=True)
    return root / "bench", root / "recipes"


def align_merged_pr(
    histories: tuple[Path, Path],
    pr: int,
    out: Path,
    *include: str,
    extra: Sequence[str] = (),
) -> int:
    """``recipe-sync align`` of benchmark PR ``pr`` as merged (its squash commit against its
    parent) on the recipes history's head (``extra`` may name another ref and other
    options), into ``out``, ticking ``include``; its exit status."""
    from bot.commands.main import main  # the CLI, imported when a test runs it

    bench, recipes = histories
    sha = subprocess.run(
        ["git", "-C", str(bench), "log", "--first-parent", "--format=%H", "-1",
         f"--grep=(#{pr})"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert sha, f"#{pr} is not in the benchmark history"
    return main(
        [
            "align", "--bench-repo", str(bench), "--bench-ref", sha, "--bench-base", f"{sha}^",
            "--bench-pr", str(pr), "--recipes", str(recipes), "--out", str(out),
            *[f"--include={flag}" for flag in include], *extra,
        ]
    )  # fmt: skip
