"""The fixture helper builds both seed repositories as real git repos, deterministically."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from bot.fixtures import SEED_RECIPE, build_seed_fixtures
from bot.sources import GitTreeSource

SCRIPT = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_builds_real_repos_with_pr_branch(tmp_path: Path) -> None:
    built = build_seed_fixtures(tmp_path / "a")
    assert _git(built.bench_repo, "rev-parse", "main") == built.bench_base
    assert _git(built.bench_repo, "rev-parse", built.bench_pr_branch) == built.bench_pr_head
    assert _git(built.bench_repo, "rev-parse", "refs/pull/3058/head") == built.bench_pr_head
    assert _git(built.bench_repo, "rev-parse", f"{built.bench_pr_head}~1") == built.bench_run_head
    assert _git(built.bench_repo, "merge-base", "main", built.bench_pr_head) == built.bench_base
    assert _git(built.recipes_repo, "rev-parse", "HEAD") == built.recipes_base
    assert "(#963)" in _git(built.recipes_repo, "log", "-1", "--format=%s")
    # the script blob is identical at the run's head and at the PR head; it changed vs main
    run = GitTreeSource(built.bench_repo, built.bench_run_head)
    head = GitTreeSource(built.bench_repo, built.bench_pr_head)
    base = GitTreeSource(built.bench_repo, built.bench_base)
    assert run.blob_sha(SCRIPT) == head.blob_sha(SCRIPT) != base.blob_sha(SCRIPT)
    assert _git(built.bench_repo, "ls-tree", "HEAD", SCRIPT).startswith("100755")


def test_build_is_deterministic(tmp_path: Path) -> None:
    first = build_seed_fixtures(tmp_path / "a")
    second = build_seed_fixtures(tmp_path / "b")
    assert (first.bench_pr_head, first.recipes_base) == (second.bench_pr_head, second.recipes_base)


def test_seed_before_state(tmp_path: Path) -> None:
    built = build_seed_fixtures(tmp_path / "a")
    recipes = GitTreeSource(built.recipes_repo, "HEAD")
    recipe = yaml.safe_load(recipes.read_bytes(SEED_RECIPE))
    assert recipe["model"]["docker_image"] == {
        "nvidia": "vllm/vllm-openai:deepseekv41-flash-0909",
        "amd": "vllm/vllm-openai-rocm:deepseekv41-flash-0909",
    }
    amd = recipe["hardware_overrides"]["amd"]
    assert amd["extra_args"][-2:] == ["--moe-backend", "aiter_triton_mxfp4_bf16"]
    assert "AITER_TRITON_LOG_LEVEL" not in amd["extra_env"]
    assert "mi355x" not in recipe["meta"]["hardware"]
    dspark = recipe["features"]["spec_decoding"]["modes"]["dspark"]
    assert '"enable_adaptive_verification":true' in dspark["args"][1]
    assert '"enable_adaptive_verification":false' in dspark["hardware_overrides"]["amd"]["args"][1]
    taxonomy = yaml.safe_load(recipes.read_bytes("taxonomy.yaml"))
    assert taxonomy["hardware_profiles"]["mi350x"]["generation"] == "amd"

    bench = GitTreeSource(built.bench_repo, built.bench_pr_head)
    config = yaml.safe_load(bench.read_bytes("configs/amd-master.yaml"))
    seed = config[built.config_key]
    assert seed["image"] == (
        "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"
    )
    script = bench.read_bytes(SCRIPT).decode()
    assert "MOE_BACKEND=aiter\n" in script and "MAX_NUM_SEQS=128" in script
    assert "export AITER_TRITON_LOG_LEVEL=ERROR" in script
