"""Build the bundled fixture repositories (``fixtures/``) into real git repositories.

The fixtures are a small benchmark repository in InferenceX shape and a small recipes
repository in vllm-project/recipes shape, holding the seed scenario
(``../shared/seed/alignment-pr-example.txt``): the recipes repo at the state just before the
seed's alignment PR, and the benchmark repo with PR #3058 as a branch of two commits (the
commit the CI run tested, then a perf-changelog link fix), so the script blob is identical
at the run's head and at the PR head.

Commits use fixed identities and dates, so the SHAs depend only on the fixture content.
The demo, the tests and ``recipe-sync fixtures`` all build through :func:`build_seed_fixtures`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot import gitcli
from bot.errors import InputError, Location

BENCH_REPO_NAME = "SemiAnalysisAI/InferenceX"
RECIPES_REPO_NAME = "vllm-project/recipes"
BENCH_PR_NUMBER = 3058
BENCH_PR_BRANCH = "dsv41flash-mi355x-ck-moe"
SEED_CONFIG_KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"
SEED_RECIPE = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"


@dataclass(frozen=True)
class Commit:
    """One fixture commit: copy ``overlays`` (directories under a fixture repo) onto the tree."""

    overlays: tuple[str, ...]
    message: str
    date: str  # ISO 8601 with offset
    author: tuple[str, str]


BOT_LIKE_AUTHOR = ("InferenceX Maintainers", "maintainers@inferencex.example")
AMD_AUTHOR = ("chunfangamd", "chunfangamd@users.noreply.github.com")
RECIPES_AUTHOR = ("vLLM Recipes", "recipes@vllm.example")

RECIPES_MAIN = (
    Commit(
        ("base", "v41-initial"),
        "Add recipes: gpt-oss-120b, DeepSeek-R1, DeepSeek-V4.1-Flash",
        "2026-09-09T10:00:00+00:00",
        RECIPES_AUTHOR,
    ),
    Commit(
        ("pr-963",),
        "[DeepSeek] V4.1-Flash: AMD DSpark without adaptive verification (#963)",
        "2026-09-12T09:30:00+00:00",
        RECIPES_AUTHOR,
    ),
)
BENCH_MAIN = (
    Commit(
        ("base",),
        "Benchmark configs and single-node scripts",
        "2026-09-10T12:00:00+00:00",
        BOT_LIKE_AUTHOR,
    ),
)
BENCH_PR = (
    Commit(
        ("pr-3058-run",),
        "[AMD] DSV4.1-Flash MI355X: CK MoE via --moe-backend aiter on the nightly image",
        "2026-09-12T08:00:00+00:00",
        AMD_AUTHOR,
    ),
    Commit(
        ("pr-3058-head",),
        "perf-changelog: link the entry to #3058",
        "2026-09-12T16:20:00+00:00",
        AMD_AUTHOR,
    ),
)


@dataclass(frozen=True)
class SeedFixtures:
    root: Path
    bench_repo: Path  # non-bare repository, `main` checked out
    recipes_repo: Path  # non-bare repository, `main` checked out
    bench_base: str  # main head of the benchmark repo (the PR's base)
    bench_run_head: str  # the PR commit the cited CI run tested
    bench_pr_head: str  # the PR's current head
    recipes_base: str  # main head of the recipes repo (the #963 merge)
    bench_pr_branch: str = BENCH_PR_BRANCH
    bench_pr_number: int = BENCH_PR_NUMBER
    config_key: str = SEED_CONFIG_KEY
    evidence_dir: Path | None = None  # saved runs/logs with this build's SHAs


def default_fixtures_dir() -> Path:
    """The checkout's ``fixtures/`` or the copy bundled in the wheel."""
    package = Path(__file__).resolve().parent
    for candidate in (package.parent / "fixtures", package / "_bundled" / "fixtures"):
        if (candidate / "benchmark-repo").is_dir():
            return candidate
    raise InputError(Location("fixtures/"), "bundled fixtures not found")


def _git(repo: Path, args: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    base_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
    }
    return gitcli.text(repo, *args, env={**base_env, **(env or {})}, clean_env=True).strip()


def _copy_overlay(source: Path, target: Path) -> None:
    for item in sorted(source.rglob("*")):
        if item.is_dir():
            continue
        destination = target / item.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(item, destination)
        # Scripts are committed executable, as in the real repositories.
        destination.chmod(0o755 if item.suffix == ".sh" else 0o644)


def _commit(repo: Path, fixture: Path, commit: Commit) -> str:
    for overlay in commit.overlays:
        _copy_overlay(fixture / overlay, repo)
    name, email = commit.author
    identity = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": commit.date,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": commit.date,
    }
    _git(repo, ["add", "-A"])
    _git(repo, ["commit", "-q", "--no-gpg-sign", "-m", commit.message], identity)
    return _git(repo, ["rev-parse", "HEAD"])


def _init(repo: Path) -> None:
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    _git(repo, ["init", "-q", "-b", "main"])


def build_seed_fixtures(out: Path, fixtures: Path | None = None) -> SeedFixtures:
    """Create ``out/benchmark`` and ``out/recipes`` as git repositories (replacing them)."""
    source = fixtures or default_fixtures_dir()
    out.mkdir(parents=True, exist_ok=True)

    recipes = out / "recipes"
    _init(recipes)
    recipes_base = ""
    for commit in RECIPES_MAIN:
        recipes_base = _commit(recipes, source / "recipes-repo", commit)

    bench = out / "benchmark"
    _init(bench)
    bench_base = ""
    for commit in BENCH_MAIN:
        bench_base = _commit(bench, source / "benchmark-repo", commit)
    _git(bench, ["checkout", "-q", "-b", BENCH_PR_BRANCH])
    heads = [_commit(bench, source / "benchmark-repo", commit) for commit in BENCH_PR]
    _git(bench, ["checkout", "-q", "main"])
    # GitHub keeps every PR head under refs/pull/<n>/head; the App fetches that ref.
    _git(bench, ["update-ref", f"refs/pull/{BENCH_PR_NUMBER}/head", heads[-1]])

    built = SeedFixtures(
        root=out,
        bench_repo=bench,
        recipes_repo=recipes,
        bench_base=bench_base,
        bench_run_head=heads[0],
        bench_pr_head=heads[-1],
        recipes_base=recipes_base,
    )
    return _with_evidence(built, source)


def _with_evidence(built: SeedFixtures, source: Path) -> SeedFixtures:
    """Materialise the saved CI runs and logs with this build's SHAs, when present."""
    from bot.evidence.fixtures import materialise

    template = source / "evidence" / "seed"
    if not template.is_dir():
        return built
    target = built.root / "evidence"
    if target.exists():
        shutil.rmtree(target)
    values = {
        "RUN_HEAD_SHA": built.bench_run_head,
        "PR_HEAD_SHA": built.bench_pr_head,
        "PR_BRANCH": built.bench_pr_branch,
        "PR_NUMBER": str(built.bench_pr_number),
        "BENCH_REPO": BENCH_REPO_NAME,
        "BASE_SHA": built.bench_base,
    }
    materialise(template, target, values)
    return SeedFixtures(**{**built.__dict__, "evidence_dir": target})
