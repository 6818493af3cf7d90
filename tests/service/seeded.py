"""The seed scenario served by a fake GitHub: benchmark PR #3058's fixture repositories (the
PR from the author's fork, as the real one was), the recipes repository and the saved CI runs
behind the Actions API. Shared by the end-to-end service test and the deployment smokes."""

from __future__ import annotations

from pathlib import Path

from bot.fixtures import SeedFixtures
from tests.service.conftest import MAINTAINER
from tests.service.fakegithub import FakeGitHub, FakeRepo, git

BENCH = "SemiAnalysisAI/InferenceX"
FORK = "chunfangamd/InferenceX"  # PR #3058 comes from the author's fork, as the saved runs say
RECIPES = "vllm-project/recipes"


def import_repo(fake: FakeGitHub, full_name: str, source: Path) -> None:
    """Serve a fixture repository (all its branches) as ``full_name``."""
    path = fake.root / f"{full_name}.git"
    path.parent.mkdir(parents=True, exist_ok=True)
    git(fake.root, "clone", "-q", "--bare", "--template=", str(source), str(path))
    fake.repos[full_name] = FakeRepo(full_name, path, "main", len(fake.repos) + 1)
    fake.pulls.setdefault(full_name, {})
    fake.labels.setdefault(full_name, {})


def serve_seed(fake: FakeGitHub, built: SeedFixtures) -> None:
    """The seed's repositories, fork, maintainer and saved runs on ``fake``."""
    import_repo(fake, BENCH, built.bench_repo)
    import_repo(fake, RECIPES, built.recipes_repo)
    fake.fork(BENCH, FORK)
    fake.set_permission(BENCH, MAINTAINER, "write", "maintain")
    assert built.evidence_dir is not None
    fake.load_saved_runs(BENCH, built.evidence_dir)


def open_seed_pull(fake: FakeGitHub, built: SeedFixtures) -> int:
    """Benchmark PR #3058, open from the fork at its head."""
    number = fake.open_pull(
        BENCH,
        head_ref=built.bench_pr_branch,
        head_repo=FORK,
        user="chunfangamd",
        number=built.bench_pr_number,
    )
    return number


SEED_PR_TITLE = "[DeepSeek-V4.1-Flash][MI355X] Align image and MoE backend with InferenceX #3058"
