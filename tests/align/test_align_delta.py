"""A benchmark PR's delta: the settings it changed in each lane (docs/alignment.md §1b)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from bot.align.delta import KeyDelta, key_delta
from bot.benchmarks import BenchRepo, extract, load_bench_repo, points
from bot.fixtures import SeedFixtures
from bot.sources import GitTreeSource
from tests.seed_cli import git

KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"


def _repo(path: Path, ref: str) -> BenchRepo:
    return load_bench_repo(GitTreeSource(path, ref))


def _delta(base: BenchRepo | None, head: BenchRepo, key: str = KEY) -> KeyDelta:
    lines = [(p, a, extract(head, key, p, a)) for p, a in points(head, key)]
    return key_delta(base, head, key, lines)


def _only(delta: KeyDelta) -> frozenset[tuple[str, str]]:
    (changed,) = {s for s in delta.changed.values() if s}
    return changed


def test_the_seed_pr_changes_its_backend_env_and_image_and_nothing_else(
    seed: SeedFixtures,
) -> None:
    base = _repo(seed.bench_repo, seed.bench_base)
    head = _repo(seed.bench_repo, seed.bench_pr_head)
    delta = _delta(base, head)
    assert not delta.new_key and not delta.new_topologies
    changed = _only(delta)
    assert ("flag", "--moe-backend") in changed
    assert ("env", "AITER_TRITON_LOG_LEVEL") in changed
    assert ("image", "image") in changed
    assert ("flag", "--block-size") not in changed
    point, arm = points(head, KEY)[0]
    assert delta.touches(point, arm, "flag", "--moe-backend")
    assert not delta.touches(point, arm, "flag", "--tensor-parallel-size")


def test_without_a_base_everything_is_the_prs(seed: SeedFixtures) -> None:
    head = _repo(seed.bench_repo, seed.bench_pr_head)
    delta = _delta(None, head)
    point, arm = points(head, KEY)[0]
    assert delta.subjects(point, arm) is None
    assert delta.touches(point, arm, "flag", "--block-size")


def _edit_config(repo: Path, old: str, new: str, message: str) -> None:
    config = repo / "configs/amd-master.yaml"
    text = config.read_text()
    assert old in text, old
    config.write_text(text.replace(old, new, 1))
    git(repo, "commit", "-qam", message)


def test_dropping_points_changes_no_setting_and_a_new_key_is_compared_with_its_siblings(
    seed: SeedFixtures, tmp_path: Path
) -> None:
    clone = tmp_path / "bench"
    subprocess.run(["git", "clone", "-q", str(seed.bench_repo), str(clone)], check=True)
    git(clone, "checkout", "-q", seed.bench_pr_head)
    text = (clone / "configs/amd-master.yaml").read_text()
    entry = text.split(f"{KEY}:\n", 1)[1].split("\n\n", 1)[0]
    concurrency = next(line for line in entry.splitlines() if "conc-list" in line)
    fewer = re.sub(r", \d+\]", "]", concurrency, count=1)
    assert fewer != concurrency, concurrency
    _edit_config(clone, concurrency, fewer, "a narrower sweep")
    base, head = _repo(clone, "HEAD~1"), _repo(clone, "HEAD")
    assert all(not s for s in _delta(base, head).changed.values())

    # the same lane under a new key: only what the sibling never ran is the PR's
    twin = f"{KEY}-twin"
    _edit_config(clone, f"{KEY}:\n", f"{twin}:\n{entry}\n\n{KEY}:\n", "a twin key")
    base, head = _repo(clone, "HEAD~1"), _repo(clone, "HEAD")
    delta = _delta(base, head, twin)
    assert delta.new_key and KEY in delta.reference
    assert all(not s for s in delta.changed.values()), delta.changed
