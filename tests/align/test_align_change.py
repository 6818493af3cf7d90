"""BenchmarkChange: which master-config keys a PR affects, and why (docs/alignment.md §1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.align.change import benchmark_change, settle_unchanged
from bot.align.overlay import OverlaySource
from bot.benchmarks import BenchRepo, load_bench_repo
from bot.errors import InputError
from bot.fixtures import SeedFixtures
from bot.sources import GitTreeSource
from tests.seed_cli import git

KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"


def _repo(path: Path, ref: str) -> BenchRepo:
    return load_bench_repo(GitTreeSource(path, ref))


def test_seed_pr_affects_its_key_for_every_reason(seed: SeedFixtures) -> None:
    change = benchmark_change(
        _repo(seed.bench_repo, seed.bench_base), _repo(seed.bench_repo, seed.bench_pr_head)
    )
    assert [k.key for k in change.keys] == [KEY]
    (key,) = change.keys
    assert key.reasons == (
        "config entry changed in configs/amd-master.yaml",
        "script benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh changed",
        "new perf-changelog entry names it (line 19)",
    )
    assert key.framework == "vllm" and key.out_of_scope is None
    assert change.changed_files == (
        "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh",
        "configs/amd-master.yaml",
    )


def test_no_change_affects_nothing(seed: SeedFixtures) -> None:
    head = _repo(seed.bench_repo, seed.bench_pr_head)
    assert benchmark_change(head, head).keys == ()


def test_requested_keys_restrict_and_unknown_keys_fail(seed: SeedFixtures) -> None:
    base, head = _repo(seed.bench_repo, seed.bench_base), _repo(seed.bench_repo, seed.bench_pr_head)
    only = benchmark_change(base, head, ["dsr1-fp8-mi355x-sglang"])
    (key,) = only.keys
    assert key.reasons == ("requested with --config-key (the PR does not change it)",)
    assert key.out_of_scope == "framework sglang is not rendered by vLLM recipes"
    with pytest.raises(InputError, match="no such master-config key"):
        benchmark_change(base, head, ["nope"])


@pytest.fixture()
def lib_change(seed: SeedFixtures, tmp_path: Path) -> Path:
    clone = tmp_path / "bench"
    subprocess.run(["git", "clone", "-q", str(seed.bench_repo), str(clone)], check=True)
    script = clone / "benchmarks/single_node/fixed_seq_len/gptoss_fp4_h200.sh"
    script.write_text(
        script.read_text().replace('source "$(dirname "$0")/../../benchmark_lib.sh"', "")
    )
    git(clone, "commit", "-qam", "one script stops sourcing the library")
    lib = clone / "benchmarks/benchmark_lib.sh"
    lib.write_text(lib.read_text() + "\n# a library change\n")
    git(clone, "commit", "-qam", "touch the library")
    return clone


def test_a_library_change_affects_the_keys_whose_scripts_source_it(lib_change: Path) -> None:
    change = benchmark_change(_repo(lib_change, "HEAD~1"), _repo(lib_change, "HEAD"))
    affected = {k.key: k.reasons for k in change.keys}
    sourcing = [
        key
        for key, reasons in affected.items()
        if all("benchmark_lib.sh changed and" in r for r in reasons)
    ]
    assert sourcing and set(sourcing) == set(affected)
    assert "gptoss-fp4-h200-vllm" not in affected  # its script no longer sources the library
    for key in affected:
        script = next(r.split(" and ")[1].removesuffix(" sources it") for r in affected[key])
        assert "benchmark_lib.sh" in (lib_change / script).read_text()


def test_a_library_change_that_moves_no_launch_line_leaves_the_keys_unchanged(
    lib_change: Path,
) -> None:
    """InferenceX #2388 (an AIPerf timing preset in benchmark_lib.sh) reached every key
    sourcing the library and proposed guide PRs: the launch lines are the same, so no key is
    in scope and each says why."""
    base, head = _repo(lib_change, "HEAD~1"), _repo(lib_change, "HEAD")
    change = settle_unchanged(base, head, benchmark_change(base, head))
    vllm = [k for k in change.keys if k.framework == "vllm" and k.out_of_scope is None]
    assert vllm and change.in_scope == ()
    for key in vllm:
        assert key.unchanged is not None and key.unchanged.endswith(
            "sources it, but none of its launch lines did"
        ), key


def test_a_library_change_that_moves_a_launch_line_keeps_the_keys_affected(
    lib_change: Path,
) -> None:
    lib = lib_change / "benchmarks/benchmark_lib.sh"
    lib.write_text(lib.read_text() + "export VLLM_FROM_THE_LIBRARY=1\n")
    git(lib_change, "commit", "-qam", "the library exports a serving variable")
    base, head = _repo(lib_change, "HEAD~1"), _repo(lib_change, "HEAD")
    change = settle_unchanged(base, head, benchmark_change(base, head))
    assert change.in_scope and change.unchanged == ()
    assert "dsv41flash-fp4-mi355x-vllm-agentic-mtp" in {k.key for k in change.in_scope}


def test_a_changed_config_entry_is_never_settled_as_unchanged(seed: SeedFixtures) -> None:
    base, head = _repo(seed.bench_repo, seed.bench_base), _repo(seed.bench_repo, seed.bench_pr_head)
    change = settle_unchanged(base, head, benchmark_change(base, head))
    assert [k.key for k in change.in_scope] == [KEY]


def test_a_malformed_head_changelog_is_a_note_not_an_error(seed: SeedFixtures) -> None:
    """InferenceX main carried a perf-changelog that does not parse (2026-06-17, an entry
    indented one level too deep); the PR's keys still come from its configs and scripts."""
    head = GitTreeSource(seed.bench_repo, seed.bench_pr_head)
    text = head.read_bytes("perf-changelog.yaml") + b"  \n  - config-keys:\n    - x\n"
    broken = load_bench_repo(OverlaySource(head, {"perf-changelog.yaml": text}))
    change = benchmark_change(_repo(seed.bench_repo, seed.bench_base), broken)
    (key,) = change.keys
    assert key.key == KEY and "new perf-changelog entry names it" not in " ".join(key.reasons)
    (note,) = change.notes
    assert note.startswith("the PR's perf-changelog is not read (perf-changelog.yaml:")
