"""Where the read-only shared data lives (``../shared`` beside the checkout).

Tests and benchmarks read the real recipes corpus, histories and GitHub examples from there.
Lookup: ``$RECIPE_SYNC_SHARED``, then a ``shared/`` directory beside any parent of this
checkout; nothing else (no machine path is assumed).
"""

from __future__ import annotations

import os
from pathlib import Path

from bot.errors import InputError, Location

CORPUS_NAME = "recipes-corpus-8959cf6"


def shared_dir() -> Path:
    env = os.environ.get("RECIPE_SYNC_SHARED")
    candidates = [Path(env)] if env else []
    candidates += [parent / "shared" for parent in Path(__file__).resolve().parents]
    for candidate in candidates:
        if (candidate / "data").is_dir():
            return candidate
    raise InputError(
        Location("../shared"), "shared data not found; set RECIPE_SYNC_SHARED to its directory"
    )


def corpus_dir() -> Path:
    """The real vllm-project/recipes corpus and its upstream renderings."""
    return shared_dir() / "data" / CORPUS_NAME


def github_data_dir() -> Path:
    """Real webhook payloads and REST response examples."""
    return shared_dir() / "data" / "github"
