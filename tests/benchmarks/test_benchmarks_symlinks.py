"""A benchmark script that is a symbolic link: followed when its target is a file of the
repository (read statically like any script), refused by name when it leaves the repository;
never reported as a missing script. Both as a git tree (what the App reads) and a directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.benchmarks import extract, load_bench_repo, points
from bot.benchmarks.model import LaunchLine
from bot.fixtures import SeedFixtures
from bot.sources import DirectorySource, FileSource, GitTreeSource
from tests.benchmarks.test_benchmarks_seed import KEY, SCRIPT

TARGET = "benchmarks/single_node/agentic/shared/dsv41flash.sh"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def clone(seed: SeedFixtures, tmp_path: Path) -> Path:
    repo = tmp_path / "bench"
    subprocess.run(["git", "clone", "-q", str(seed.bench_repo), str(repo)], check=True)
    _git(repo, "checkout", "-q", seed.bench_pr_head)
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    return repo


def _link(repo: Path, target: str) -> FileSource:
    os.unlink(repo / SCRIPT)
    os.symlink(target, repo / SCRIPT)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "link")
    return GitTreeSource(repo, "HEAD")


def _eval_launch(source: FileSource) -> LaunchLine:
    repo = load_bench_repo(source)
    (point,) = [p for p, arm in points(repo, KEY) if arm == "eval"]
    return extract(repo, KEY, point, "eval", runner_node="mi355x-amds_03")


@pytest.mark.parametrize("kind", ["git", "directory"])
def test_a_link_inside_the_repository_is_read_as_its_target(clone: Path, kind: str) -> None:
    expected = _eval_launch(GitTreeSource(clone, "HEAD"))
    (clone / TARGET).parent.mkdir()
    os.rename(clone / SCRIPT, clone / TARGET)
    os.symlink("shared/dsv41flash.sh", clone / SCRIPT)  # relative, like `ln -s`
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "link")
    source = GitTreeSource(clone, "HEAD") if kind == "git" else DirectorySource(clone)
    launch = _eval_launch(source)
    assert launch.status == "launched", launch.reason
    assert launch.script == TARGET
    assert launch.argv == expected.argv
    assert launch.env == expected.env


@pytest.mark.parametrize(
    "target", ["/etc/hostname", "../../../../etc/hostname", "../../../../../outside.sh"]
)
@pytest.mark.parametrize("kind", ["git", "directory"])
def test_a_link_leaving_the_repository_is_refused_by_name(
    clone: Path, target: str, kind: str
) -> None:
    (clone.parent / "outside.sh").write_text("vllm serve /secret --port 1\n")
    git_source = _link(clone, target)
    source = git_source if kind == "git" else DirectorySource(clone)
    launch = _eval_launch(source)
    reason = launch.reason or ""
    assert launch.status != "launched" and launch.argv == ()
    assert SCRIPT in reason and "outside the repository: refused" in reason, reason
    if kind == "git":  # the whole line, as reports show it
        assert reason.endswith(
            f"{SCRIPT}: symbolic link to {target}, outside the repository: refused (never read)"
        ), reason
    assert "does not exist" not in reason and "none of" not in reason


def test_a_dangling_link_names_the_missing_target(clone: Path) -> None:
    launch = _eval_launch(_link(clone, "gone.sh"))
    reason = launch.reason or ""
    assert SCRIPT in reason and "symbolic link to benchmarks/single_node/agentic/gone.sh" in reason
