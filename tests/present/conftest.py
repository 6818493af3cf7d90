"""The presentation tests share the evidence fixtures (the seed runs, materialised) and
the seed's alignment run."""

import pytest

from bot.align.result import AlignInputs, AlignRun
from bot.align.run import align
from bot.evidence.source import DirRunSource
from bot.fixtures import BENCH_REPO_NAME, SeedFixtures
from bot.rules import default_rules
from bot.sources import GitTreeSource, git_blob_sha_at
from tests.evidence.conftest import seed_dir, seed_expected

__all__ = ["seed_dir", "seed_expected", "seed_run"]


@pytest.fixture(scope="module")
def seed_run(seed: SeedFixtures) -> AlignRun:
    assert seed.evidence_dir is not None
    inputs = AlignInputs(
        bench=GitTreeSource(seed.bench_repo, seed.bench_pr_head),
        bench_base=GitTreeSource(seed.bench_repo, seed.bench_base),
        recipes=GitTreeSource(seed.recipes_repo, seed.recipes_base),
        rules=default_rules(),
        runs=DirRunSource(seed.evidence_dir),
        bench_repo=BENCH_REPO_NAME,
        pr_number=seed.bench_pr_number,
        head_sha=seed.bench_pr_head,
        head_branch=seed.bench_pr_branch,
        blob_sha_at=git_blob_sha_at(seed.bench_repo),
    )
    return align(inputs)
