"""The alignment tests' golden files (the seed's CLI fixtures are in :mod:`tests.seed_cli`)
and the seed's rules, recipes main and eval launch line, which modules may override."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.benchmarks import BenchRepo, LaunchLine, extract, load_bench_repo, points
from bot.fixtures import SeedFixtures
from bot.rules import Rules, default_rules
from bot.sources import GitTreeSource
from tests.ungated import ungated

GOLDEN = Path(__file__).parent / "golden"
SEED_KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"


@pytest.fixture(scope="module")
def rules() -> Rules:
    """The bundled rules with the judgement gate open (tests.ungated)."""
    return ungated(default_rules())


@pytest.fixture(scope="module")
def source(seed: SeedFixtures) -> GitTreeSource:
    """The seed's recipes main."""
    return GitTreeSource(seed.recipes_repo, "main")


@pytest.fixture(scope="module")
def launch(seed: SeedFixtures, rules: Rules) -> LaunchLine:
    """The seed benchmark PR's eval launch line of :data:`SEED_KEY`."""
    bench: BenchRepo = load_bench_repo(GitTreeSource(seed.bench_repo, seed.bench_pr_head), rules)
    point, arm = next(p for p in points(bench, SEED_KEY) if p[1] == "eval")
    return extract(bench, SEED_KEY, point, arm)
