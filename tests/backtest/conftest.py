"""Small real git repositories for the history walk, and the seed scenario as merged history."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.fixtures import SeedFixtures


def git(cwd: Path, *args: str, when: str | None = None) -> str:
    env = dict(os.environ)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return done.stdout.strip()


def commit(repo: Path, message: str, when: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, "--allow-empty", when=when)
    return git(repo, "rev-parse", "HEAD")


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return path


@pytest.fixture(scope="module")
def seed_history(seed: SeedFixtures, tmp_path_factory: pytest.TempPathFactory) -> SeedFixtures:
    """The seed benchmark repo with PR #3058 squash-merged on main (after a docs-only PR),
    and the seed recipes repo (all of its commits older than the merges)."""
    root = tmp_path_factory.mktemp("history")
    bench = root / "bench"
    shutil.copytree(seed.bench_repo, bench)
    git(bench, "checkout", "-q", "main")
    commit(bench, "Fix a typo in the docs (#3001)", "2030-01-01T00:00:00Z", {"NOTES.md": "x\n"})
    git(bench, "checkout", "-q", seed.bench_pr_head, "--", ".")
    commit(bench, "Tune the MI355X agentic arm (#3058)", "2030-01-02T00:00:00Z", {})
    return SeedFixtures(**{**seed.__dict__, "bench_repo": bench})
