"""The seed scenario through ``recipe-sync align``, once per session, and writable clones of its
repositories: shared by the alignment, presentation and service tests."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from bot.commands.main import main
from bot.fixtures import BENCH_REPO_NAME, RECIPES_REPO_NAME, SeedFixtures
from tests.ungated import ungated_rules_dir

SEED_RECIPE = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"

AlignCli = Callable[..., tuple[int, Path]]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def align_args(
    seed: SeedFixtures,
    out: Path,
    *,
    evidence: bool = True,
    recipes: Path | None = None,
    recipes_ref: str | None = "main",
    bench: Path | None = None,
    bench_ref: str = "refs/pull/3058/head",
    extra: Sequence[str] = (),
) -> list[str]:
    args = [
        "align",
        "--bench-repo",
        str(bench or seed.bench_repo),
        "--bench-ref",
        bench_ref,
        "--recipes",
        str(recipes or seed.recipes_repo),
        "--bench-name",
        BENCH_REPO_NAME,
        "--bench-pr",
        str(seed.bench_pr_number),
        "--recipes-name",
        RECIPES_REPO_NAME,
        "--out",
        str(out),
        *extra,
    ]
    if recipes_ref is not None:
        args += ["--recipes-ref", recipes_ref]
    if evidence:
        assert seed.evidence_dir is not None
        args += ["--evidence", str(seed.evidence_dir)]
    return args


@pytest.fixture(scope="session")
def align_cli(seed: SeedFixtures, tmp_path_factory: pytest.TempPathFactory) -> AlignCli:
    """Run ``recipe-sync align`` on the seed fixtures into a fresh directory. Planning
    mechanics by default (every candidate proposed: :mod:`tests.ungated`); ``gated=True``
    runs the bundled rules as they are, judgement included."""
    ungated = ungated_rules_dir(tmp_path_factory.mktemp("ungated"))

    def run(
        *, gated: bool = False, stale_from: Path | None = None, **options: object
    ) -> tuple[int, Path]:
        out = tmp_path_factory.mktemp("align-out")
        if stale_from is not None:  # the outputs of an earlier run in the directory
            shutil.copytree(stale_from, out, dirs_exist_ok=True)
        extra = list(options.pop("extra", ()))  # type: ignore[call-overload]
        if not gated and "--rules" not in extra:
            extra += ["--rules", str(ungated)]
        status = main(align_args(seed, out, extra=extra, **options))  # type: ignore[arg-type]
        return status, out

    return run


@pytest.fixture(scope="session")
def seed_out(align_cli: AlignCli) -> Path:
    """The seed as the product aligns it: the bundled rules, judgement included."""
    status, out = align_cli(gated=True)
    assert status == 1  # a PR to open (docs/cli.md "Exit codes")
    return out


@pytest.fixture(scope="session")
def seed_out_ungated(align_cli: AlignCli) -> Path:
    """The seed with every candidate proposed: the planner's full patch (tests.ungated)."""
    status, out = align_cli()
    assert status == 1
    return out


@pytest.fixture()
def recipes_clone(seed: SeedFixtures, tmp_path: Path) -> Path:
    """A writable clone of the seed recipes repository."""
    target = tmp_path / "recipes"
    shutil.copytree(seed.recipes_repo, target)
    return target


@pytest.fixture()
def bench_clone(seed: SeedFixtures, tmp_path: Path) -> Path:
    """A writable clone of the benchmark repo with the PR head checked out as ``pr``."""
    clone = tmp_path / "bench"
    subprocess.run(["git", "clone", "-q", str(seed.bench_repo), str(clone)], check=True)
    git(clone, "fetch", "-q", "origin", f"refs/pull/{seed.bench_pr_number}/head:pr")
    git(clone, "checkout", "-q", "pr")
    return clone


def commit_edit(clone: Path, path: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in one file of ``clone`` and commit."""
    file = clone / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new))
    git(clone, "commit", "-qam", f"edit {path}")
