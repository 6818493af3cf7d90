"""Shared test fixtures: the seed-scenario repositories, built once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.fixtures import SeedFixtures, build_seed_fixtures
from tests.seed_cli import align_cli, bench_clone, recipes_clone, seed_out, seed_out_ungated

__all__ = ["align_cli", "bench_clone", "recipes_clone", "seed", "seed_out", "seed_out_ungated"]


@pytest.fixture(scope="session")
def seed(tmp_path_factory: pytest.TempPathFactory) -> SeedFixtures:
    """The bundled fixtures as git repos (read-only for tests: copy before mutating)."""
    return build_seed_fixtures(Path(tmp_path_factory.mktemp("seed")))
