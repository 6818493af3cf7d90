from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.commands.evidence import git_blob_sha_at
from bot.evidence.collect import collect_evidence
from bot.evidence.fixtures import materialise
from bot.evidence.jobname import JobName
from bot.evidence.launch import ArgvDifference
from bot.evidence.model import EvidenceReport
from bot.evidence.source import DirRunSource
from bot.rules import default_rules
from tests.evidence.conftest import (
    EVAL_JOB,
    FOO_ARGV,
    SCRIPT,
    SEED,
    SEED_TEMPLATE_DIR,
    MemoryRunSource,
    build_bench_repo,
    eval_log,
    rest_job,
    rest_run,
)

RUN, OLD = 34710937012, 34688120455
EVAL_NAME = "agentic eval / p40 | dsv41flash fp4 cluster:mi355x-amds vllm TP4 mtp c32 | eval-only"


def seed_report(
    tmp_path: Path,
    expected: Callable[[JobName], tuple[str, ...] | None],
    *,
    script_changes_after_run: bool,
) -> EvidenceReport:
    values = build_bench_repo(tmp_path / "bench", script_changes_after_run=script_changes_after_run)
    saved = materialise(SEED_TEMPLATE_DIR, tmp_path / "saved", values)
    return collect_evidence(
        DirRunSource(saved),
        pr_head_sha=values["PR_HEAD_SHA"],
        head_branch=SEED["PR_BRANCH"],
        pr_number=3058,
        head_repo="chunfangamd/InferenceX",
        repo="SemiAnalysisAI/InferenceX",
        expected_argv=expected,
        blob_sha_at=git_blob_sha_at(tmp_path / "bench"),
    )


def test_seed_runs_attempts_and_jobs(
    tmp_path: Path, seed_expected: Callable[[JobName], tuple[str, ...] | None]
) -> None:
    report = seed_report(tmp_path, seed_expected, script_changes_after_run=False)
    # fork PR: pull_requests is empty, so both runs match by the PR's head branch
    assert [(r.run_id, r.matched_by, r.is_current_head) for r in report.runs] == [
        (RUN, "head_branch", False),
        (OLD, "head_branch", False),
    ]
    current = report.runs[0]
    assert [(a.attempt, a.conclusion, a.benchmark_jobs, a.found) for a in current.attempts] == [
        (1, "cancelled", 7, True),
        (2, "success", 7, True),
    ]
    assert current.attempts[0].html_url == (
        "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/34710937012/attempts/1"
    )
    assert current.other_jobs == 1  # collect-evals
    assert len(report.evidence) == 7 + 7 + 1


def test_seed_eval_arm_is_cited(
    tmp_path: Path, seed_expected: Callable[[JobName], tuple[str, ...] | None]
) -> None:
    report = seed_report(tmp_path, seed_expected, script_changes_after_run=False)
    (cited,) = report.cited()
    assert (cited.run_id, cited.attempt, cited.job_name, cited.job_id) == (
        RUN,
        2,
        EVAL_NAME,
        97311840107,
    )
    assert cited.job_html_url == (
        "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/34710937012/job/97311840107"
    )
    assert (cited.conclusion, cited.runner_name, cited.server_ready) == (
        "success",
        "mi355x-amds_03",
        True,
    )
    assert cited.launch is not None and cited.launch.kind == "printf-q"
    assert cited.launch_check.matches and cited.launch_check.difference is None
    assert not cited.synthetic_acceptance
    figures = {(f.filter, f.value, f.stderr, f.n_shot, f.conc, f.threshold) for f in cited.figures}
    assert figures == {
        ("strict-match", 0.9689, 0.0048, 5, 32, 0.90),
        ("flexible-extract", 0.9682, 0.0048, 5, 32, 0.90),
    }
    assert all(f.passed and f.policy_passed and f.job_verdict for f in cited.figures)
    assert cited.blob.state == "identical" and cited.blob.script_path == SCRIPT
    assert cited.blob.run_blob == cited.blob.pr_blob is not None
    assert cited.blockers() == ()


def test_seed_synthetic_superseded_and_older_head(
    tmp_path: Path, seed_expected: Callable[[JobName], tuple[str, ...] | None]
) -> None:
    report = seed_report(tmp_path, seed_expected, script_changes_after_run=False)
    latest = [e for e in report.evidence if e.run_id == RUN and e.attempt == 2]
    synthetic = [e for e in latest if e.synthetic_acceptance]
    assert sorted(e.job.conc for e in synthetic) == [1, 2, 4, 8, 16, 32]
    assert all(e.launch_check.matches and not e.verifies for e in synthetic)
    assert "it used synthetic acceptance (throughput context only)" in synthetic[0].blockers()

    first = [e for e in report.evidence if e.run_id == RUN and e.attempt == 1]
    assert all(e.superseded_by == 2 and e.conclusion == "cancelled" for e in first)
    assert sum(e.log_available for e in first) == 1  # the other six logs expired

    (old,) = [e for e in report.evidence if e.run_id == OLD]
    assert old.launch_check.difference == ArgvDifference(14, "256", "128")
    assert old.blob.state == "differs" and old.stale
    assert old.blockers() == (
        "its launch line differs from the extracted one at token 14",
        "the benchmark script changed since the run's head",
    )


def test_seed_with_changed_script_is_stale(
    tmp_path: Path, seed_expected: Callable[[JobName], tuple[str, ...] | None]
) -> None:
    report = seed_report(tmp_path, seed_expected, script_changes_after_run=True)
    assert report.cited() == ()
    (item,) = [e for e in report.evidence if e.job_id == 97311840107]
    assert item.stale and item.blob.state == "differs"
    assert item.blob.run_blob != item.blob.pr_blob
    assert item.blockers() == ("the benchmark script changed since the run's head",)


def test_without_blob_source_an_older_head_is_not_verified(seed_dir: Path) -> None:
    report = collect_evidence(
        DirRunSource(seed_dir),
        pr_head_sha=SEED["PR_HEAD_SHA"],
        head_branch=SEED["PR_BRANCH"],
        pr_number=3058,
    )
    (item,) = [e for e in report.evidence if e.job_id == 97311840107]
    assert item.blob.state == "unknown"
    assert item.blob.reason == "no benchmark repository to read blobs from"
    assert not item.launch_check.compared and report.cited() == ()


def foo_expected(job: JobName) -> tuple[str, ...] | None:
    return FOO_ARGV


def test_fork_pr_runs_match_by_head_sha_and_branch_only() -> None:
    runs = [
        rest_run(1, "head", prs=()),  # fork PR run at the head
        rest_run(2, "older", prs=()),  # earlier push of the fork branch
        rest_run(3, "head", prs=(99,)),  # another PR's run on the same commit
        rest_run(4, "older", prs=(), head_repo="someone-else/bench"),  # same branch name elsewhere
        rest_run(5, "older2", prs=(7,)),  # the PR itself, listed by number
    ]
    report = collect_evidence(
        MemoryRunSource(runs, {}, {}),
        pr_head_sha="head",
        head_branch="feature",
        pr_number=7,
        head_repo="fork/bench",
        policy=default_rules().policy,
    )
    assert [(r.run_id, r.matched_by) for r in report.runs] == [
        (1, "head_sha"),
        (5, "pull_request"),
        (2, "head_branch"),
    ]


def test_current_head_run_is_cited_with_same_head_blob() -> None:
    source = MemoryRunSource(
        [rest_run(1, "head")], {(1, 1): [rest_job(11, EVAL_JOB)]}, {11: eval_log()}
    )
    report = collect_evidence(
        source, pr_head_sha="head", expected_argv=foo_expected, policy=default_rules().policy
    )
    (cited,) = report.cited()
    assert cited.blob.state == "same-head" and cited.is_current_head
    assert cited.launch is not None and cited.launch.kind == "xtrace"
    assert cited.context.image == "img.sqsh"


def test_expired_log_failed_job_and_cancelled_run_are_facts_not_crashes() -> None:
    jobs = {
        (1, 1): [
            rest_job(11, EVAL_JOB),  # log expired
            rest_job(12, EVAL_JOB.replace("c64", "c128"), "failure"),
            rest_job(13, "eval / p10 | foo fp8 cluster:mi999-xyz vllm TP8 c32 | eval-only", None),
        ],
        (2, 1): [rest_job(21, EVAL_JOB, "cancelled")],
    }
    logs = {12: eval_log("0.8812", "0.8870", "FAIL"), 21: "", 13: "partial"}
    runs = [
        rest_run(1, "head", conclusion="failure"),
        rest_run(2, "head", conclusion="cancelled"),
    ]
    report = collect_evidence(
        MemoryRunSource(runs, jobs, logs),
        pr_head_sha="head",
        expected_argv=foo_expected,
        policy=default_rules().policy,
    )
    assert report.cited() == ()
    by_id = {e.job_id: e for e in report.evidence}
    assert not by_id[11].log_available
    assert by_id[11].blockers() == ("its log is missing or expired",)
    assert by_id[12].blockers() == (
        "the job failed",
        "gsm8k flexible-extract failed",
        "gsm8k strict-match failed",
    )
    assert [f.passed for f in by_id[12].figures] == [False, False]
    assert by_id[13].blockers()[:2] == ("the job is still in_progress", "no launch line in its log")
    assert by_id[21].blockers() == (
        "the job was cancelled",
        "no launch line in its log",
        "no lm-eval results in its log",
    )


def test_policy_and_job_verdict_must_both_pass() -> None:
    # the job's own check passes 0.89 against a per-model 0.88; recipe-sync's policy wants 0.90
    log = eval_log("0.8900", "0.8950").replace("(>= 0.9 from default)", "(>= 0.88 from models.foo)")
    source = MemoryRunSource([rest_run(1, "head")], {(1, 1): [rest_job(11, EVAL_JOB)]}, {11: log})
    report = collect_evidence(source, pr_head_sha="head", policy=default_rules().policy)
    (item,) = report.evidence
    assert [
        (f.policy_passed, f.job_verdict.passed if f.job_verdict else None, f.passed)
        for f in item.figures
    ] == [
        (False, True, False),
        (False, True, False),
    ]
    assert report.cited() == ()


def test_missing_attempt_record_and_job_filter() -> None:
    runs = [rest_run(1, "head", attempt=2)]
    jobs = {
        (1, 1): [rest_job(11, EVAL_JOB)],
        (1, 2): [rest_job(12, EVAL_JOB), rest_job(13, "lint")],
    }
    source = MemoryRunSource(runs, jobs, {11: eval_log(), 12: eval_log()})
    report = collect_evidence(
        source,
        pr_head_sha="head",
        policy=default_rules().policy,
        job_filter=lambda job: job.runner == "cluster:mi999-xyz",
    )
    (run,) = report.runs
    assert [(a.attempt, a.found) for a in run.attempts] == [(1, False), (2, True)]
    assert [(e.job_id, e.superseded_by) for e in report.evidence] == [(11, 2), (12, None)]
    assert [c.job_id for c in report.cited()] == [12]
    skipped = collect_evidence(
        source, pr_head_sha="head", policy=default_rules().policy, job_filter=lambda job: False
    )
    assert skipped.evidence == () and source.log_requests == [11, 12]


def test_no_runs() -> None:
    report = collect_evidence(
        MemoryRunSource([], {}, {}), pr_head_sha="head", policy=default_rules().policy
    )
    assert report.runs == () and report.evidence == () and report.cited() == ()


class ExactHeadSource(MemoryRunSource):
    """A source that returns only runs at exactly the given head (branch as a filter)."""

    def workflow_runs(self, head_sha: str, head_branch: str | None) -> list[dict[str, object]]:
        return [
            r
            for r in self.runs
            if r["head_sha"] == head_sha
            and (head_branch is None or r["head_branch"] == head_branch)
        ]


def test_earlier_heads_find_runs_with_an_exact_head_source() -> None:
    runs = [rest_run(1, "old"), rest_run(2, "head"), rest_run(3, "other")]
    source = ExactHeadSource(runs, {}, {})
    only_head = collect_evidence(
        source, pr_head_sha="head", head_branch="feature", policy=default_rules().policy
    )
    assert [r.run_id for r in only_head.runs] == [2]
    report = collect_evidence(
        source,
        pr_head_sha="head",
        head_branch="feature",
        earlier_heads=("old", "head", "old"),
        policy=default_rules().policy,
    )
    assert [(r.run_id, r.matched_by, r.is_current_head) for r in report.runs] == [
        (2, "head_sha", True),
        (1, "head_sha", False),
    ]
