"""Shared fixtures for the evidence tests: the seed runs materialised, and a tiny benchmark
git repository whose commits stand for the PR's heads."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.evidence.fixtures import SEED_DEFAULTS, SEED_TEMPLATE_DIR, materialise
from bot.evidence.jobname import JobName

SCRIPT = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"
FIXTURE_LOGS = SEED_TEMPLATE_DIR.parent / "logs"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def commit(root: Path, files: dict[str, str], message: str) -> str:
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD")


def build_bench_repo(root: Path, *, script_changes_after_run: bool) -> dict[str, str]:
    """old head (max-num-seqs 256) → run head (128) → PR head (README only, or the script
    too when ``script_changes_after_run``). Returns the placeholder values."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    changelog = (SEED_TEMPLATE_DIR / "perf-changelog.yaml").read_text()
    old = commit(root, {SCRIPT: "MAX_NUM_SEQS=256\n", "README.md": "bench\n"}, "old head")
    run = commit(root, {SCRIPT: "MAX_NUM_SEQS=128\n", "perf-changelog.yaml": changelog}, "run")
    later = {"README.md": "bench, later\n"}
    if script_changes_after_run:
        later[SCRIPT] = "MAX_NUM_SEQS=128\nexport AITER_TRITON_LOG_LEVEL=ERROR\n"
    head = commit(root, later, "PR head")
    return {"OLD_HEAD_SHA": old, "RUN_HEAD_SHA": run, "PR_HEAD_SHA": head}


@pytest.fixture()
def seed_dir(tmp_path: Path) -> Path:
    return materialise(SEED_TEMPLATE_DIR, tmp_path / "seed", {})


@pytest.fixture()
def seed_expected(seed_dir: Path) -> Callable[[JobName], tuple[str, ...] | None]:
    table: dict[str, list[str]] = json.loads((seed_dir / "expected-argv.json").read_text())
    eval_argv = tuple(table["agentic eval / * | eval-only"])
    throughput_argv = tuple(table["agentic / *"])

    def expected(job: JobName) -> tuple[str, ...] | None:
        return eval_argv if job.is_eval else throughput_argv

    return expected


SEED = dict(SEED_DEFAULTS)


class MemoryRunSource:
    """A RunSource over REST-shaped dicts held in memory (for edge cases)."""

    def __init__(
        self,
        runs: list[dict[str, object]],
        jobs: dict[tuple[int, int], list[dict[str, object]]],
        logs: dict[int, str],
        attempts: dict[tuple[int, int], dict[str, object]] | None = None,
    ) -> None:
        self.runs = runs
        self._jobs = jobs
        self.logs = logs
        self.attempts = attempts or {}
        self.log_requests: list[int] = []

    def workflow_runs(self, head_sha: str, head_branch: str | None) -> list[dict[str, object]]:
        return [
            r
            for r in self.runs
            if r["head_sha"] == head_sha or (head_branch and r.get("head_branch") == head_branch)
        ]

    def run_attempt(self, run_id: int, attempt: int) -> dict[str, object] | None:
        return self.attempts.get((run_id, attempt))

    def jobs(self, run_id: int, attempt: int) -> list[dict[str, object]]:
        return self._jobs.get((run_id, attempt), [])

    def job_log(self, job_id: int) -> str | None:
        self.log_requests.append(job_id)
        return self.logs.get(job_id)


def rest_run(
    run_id: int,
    head_sha: str,
    *,
    attempt: int = 1,
    conclusion: str | None = "success",
    status: str = "completed",
    branch: str = "feature",
    prs: tuple[int, ...] = (),
    head_repo: str = "fork/bench",
) -> dict[str, object]:
    return {
        "id": run_id,
        "name": "Run Sweep",
        "path": ".github/workflows/run-sweep.yml",
        "event": "pull_request",
        "head_sha": head_sha,
        "head_branch": branch,
        "run_attempt": attempt,
        "status": status,
        "conclusion": conclusion,
        "html_url": f"https://github.com/acme/bench/actions/runs/{run_id}",
        "pull_requests": [{"number": n, "head": {}, "base": {}} for n in prs],
        "head_repository": {"full_name": head_repo},
        "created_at": "2026-09-12T09:58:41Z",
    }


def rest_job(job_id: int, name: str, conclusion: str | None = "success") -> dict[str, object]:
    return {
        "id": job_id,
        "name": name,
        "status": "completed" if conclusion else "in_progress",
        "conclusion": conclusion,
        "html_url": f"https://github.com/acme/bench/actions/runs/1/job/{job_id}",
        "runner_name": "mi999-xyz_01",
    }


EVAL_JOB = "eval / p10 | foo fp8 cluster:mi999-xyz vllm TP8 c64 | eval-only"
FOO_ARGV = ("vllm", "serve", "acme/Foo", "--tensor-parallel-size", "8")


def eval_log(strict: str = "0.9412", flexible: str = "0.9386", verdict: str = "PASS") -> str:
    """A small eval-arm log: xtrace launcher and server lines, lm-eval table, score check."""
    op = ">=" if verdict == "PASS" else "<"
    script = "benchmarks/single_node/fixed_seq_len/foo_fp8_mi999.sh"
    lines = [
        f"+ srun --container-image=img.sqsh bash {script}",
        "+ vllm serve acme/Foo --tensor-parallel-size 8",
        "INFO:     Application startup complete.",
        "|Tasks|Version|     Filter     |n-shot|  Metric   |   |Value |   |Stderr|",
        "|-----|------:|----------------|-----:|-----------|---|-----:|---|-----:|",
        f"|gsm8k|      3|flexible-extract|     5|exact_match|↑  |{flexible}|±  |0.0065|",
        f"|     |       |strict-match    |     5|exact_match|↑  |{strict}|±  |0.0066|",
        f"{verdict}: [conc=64] gsm8k exact_match,strict-match = {strict} ({op} 0.9 from default)",
        f"{verdict}: [conc=64] gsm8k exact_match,flexible-extract = {flexible} "
        f"({op} 0.9 from default)",
    ]
    return "\n".join(f"2026-09-12T10:00:0{i % 10}.0000000Z {line}" for i, line in enumerate(lines))
