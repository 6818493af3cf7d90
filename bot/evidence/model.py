"""What the collector found, as frozen values the renderer and the service read."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from bot.evidence.jobname import JobName
from bot.evidence.launch import ArgvDifference, LaunchContext, LoggedLaunch
from bot.evidence.lmeval import EvalVerdict

BlobState = Literal["same-head", "identical", "differs", "missing-at-pr-head", "unknown"]
RunMatch = Literal["pull_request", "head_sha", "head_branch"]


@dataclass(frozen=True)
class BlobCheck:
    """The benchmark script's git blob at the run's head vs at the PR's current head."""

    script_path: str | None
    run_head: str
    pr_head: str
    run_blob: str | None
    pr_blob: str | None
    state: BlobState
    reason: str = ""  # why the state is "unknown"

    @property
    def stale(self) -> bool:
        """The run executed a different script than the PR ships now."""
        return self.state in ("differs", "missing-at-pr-head")


@dataclass(frozen=True)
class LaunchCheck:
    """The found launch line against the statically extracted argv for the job."""

    expected: tuple[str, ...] | None  # None: the caller had no extraction for this job
    difference: ArgvDifference | None  # first differing token; None when equal

    @property
    def compared(self) -> bool:
        return self.expected is not None

    @property
    def matches(self) -> bool:
        return self.expected is not None and self.difference is None


@dataclass(frozen=True)
class EvalFigure:
    task: str
    metric: str  # "exact_match"
    filter: str | None  # "strict-match"
    n_shot: int | None
    value: float
    stderr: float | None
    conc: int | None
    threshold: float | None  # from rules/policy.yaml; None: policy has no threshold
    job_verdict: EvalVerdict | None  # the job's own PASS/FAIL line for this figure

    @property
    def policy_passed(self) -> bool | None:
        return None if self.threshold is None else self.value >= self.threshold

    @property
    def passed(self) -> bool | None:
        """PASS only if neither the policy nor the job's own check fails it and one of them
        passes it; None when neither judged it."""
        judged = [
            verdict
            for verdict in (
                self.policy_passed,
                None if self.job_verdict is None else self.job_verdict.passed,
            )
            if verdict is not None
        ]
        return all(judged) if judged else None


@dataclass(frozen=True)
class Evidence:
    """One benchmark job of one run attempt, and what its log proves."""

    run_id: int
    attempt: int
    run_html_url: str | None
    head_sha: str  # the run's head
    is_current_head: bool  # run head == the PR's current head
    job_id: int
    job_html_url: str | None
    job_name: str  # raw display name
    job: JobName  # parsed matrix point
    status: str | None
    conclusion: str | None
    runner_name: str | None  # concrete node, e.g. "mi355x-amds_03"
    log_available: bool  # False: 404/410, missing or expired
    launch: LoggedLaunch | None  # the preferred launch line found in the log
    other_launches: tuple[LoggedLaunch, ...]  # further (different) launch lines: restarts
    launch_check: LaunchCheck
    context: LaunchContext  # script path and image from the launcher line
    server_ready: bool
    figures: tuple[EvalFigure, ...]
    verdicts: tuple[EvalVerdict, ...]  # every PASS/FAIL line of the job
    synthetic_acceptance: bool
    blob: BlobCheck
    superseded_by: int | None = None  # a later attempt of the same run re-ran this job

    @property
    def stale(self) -> bool:
        return self.blob.stale

    @property
    def is_eval_arm(self) -> bool:
        return self.job.is_eval

    def blockers(self) -> tuple[str, ...]:
        """Why this job cannot be cited as verification (empty: it can)."""
        reasons: list[str] = []
        if self.superseded_by is not None:
            reasons.append(f"superseded by attempt {self.superseded_by}")
        if not self.is_eval_arm:
            reasons.append("a throughput arm, not an eval")
        if self.conclusion != "success":
            reasons.append(f"the job {_outcome(self.status, self.conclusion)}")
        if not self.log_available:
            reasons.append("its log is missing or expired")
        elif self.launch is None:
            reasons.append("no launch line in its log")
        if self.synthetic_acceptance:
            reasons.append("it used synthetic acceptance (throughput context only)")
        if self.launch is not None and self.launch_check.difference is not None:
            diff = self.launch_check.difference
            reasons.append(f"its launch line differs from the extracted one at token {diff.index}")
        if self.log_available and self.is_eval_arm and not self.figures:
            reasons.append("no lm-eval results in its log")
        for figure in self.figures:
            if figure.passed is False:
                reasons.append(f"{figure.task} {figure.filter or figure.metric} failed")
            elif figure.passed is None:
                reasons.append(f"no threshold for {figure.task} {figure.filter or figure.metric}")
        if self.blob.stale:
            reasons.append("the benchmark script changed since the run's head")
        elif self.blob.state == "unknown":
            reasons.append(f"the script blob could not be compared ({self.blob.reason})")
        return tuple(reasons)

    @property
    def verifies(self) -> bool:
        return not self.blockers()


def _outcome(status: str | None, conclusion: str | None) -> str:
    if conclusion in ("failure", "startup_failure"):
        return "failed"
    if conclusion in ("cancelled", "skipped", "timed_out"):
        return "was " + conclusion.replace("_", " ")
    if conclusion:
        return f"ended {conclusion}"
    return f"is still {status or 'pending'}"


def outcome(status: str | None, conclusion: str | None) -> str:
    """A job's or run's end state as a verb phrase: "failed", "was cancelled", …"""
    if conclusion == "success":
        return "succeeded"
    return _outcome(status, conclusion)


@dataclass(frozen=True)
class AttemptSummary:
    attempt: int
    status: str | None
    conclusion: str | None
    html_url: str | None
    found: bool  # False: GitHub had no record of this attempt (the run's latest is used)
    benchmark_jobs: int


@dataclass(frozen=True)
class RunSummary:
    run_id: int
    name: str | None  # workflow name, "Run Sweep"
    path: str | None  # ".github/workflows/run-sweep.yml"
    event: str | None
    html_url: str | None
    head_sha: str
    head_branch: str | None
    created_at: str | None
    latest_attempt: int
    status: str | None
    conclusion: str | None
    is_current_head: bool
    matched_by: RunMatch
    attempts: tuple[AttemptSummary, ...]
    other_jobs: int  # jobs whose names are not benchmark jobs (collect-evals, setup, …)


@dataclass(frozen=True)
class EvidenceReport:
    repo: str | None
    pr_number: int | None
    pr_head_sha: str
    head_branch: str | None
    runs: tuple[RunSummary, ...]  # newest first
    evidence: tuple[Evidence, ...]  # in run order, then attempt, then job order

    def cited(self) -> tuple[Evidence, ...]:
        """The evidence to cite as verification: per job template the best verifying job
        (current head first, then the newest run, then the latest attempt)."""
        best: dict[str, Evidence] = {}
        for item in sorted(self.evidence, key=_citation_rank):
            if item.verifies:
                best.setdefault(item.job.template, item)
        return tuple(sorted(best.values(), key=_citation_rank))

    def run(self, run_id: int) -> RunSummary | None:
        return next((run for run in self.runs if run.run_id == run_id), None)


def _citation_rank(item: Evidence) -> tuple[bool, int, int, int]:
    return (not item.is_current_head, -item.run_id, -item.attempt, item.job_id)


def report_as_json(report: EvidenceReport) -> dict[str, object]:
    """The report as plain JSON data, with each job's verdict and blockers spelled out."""
    data = asdict(report)
    for item, plain in zip(report.evidence, data["evidence"], strict=True):
        plain["verifies"] = item.verifies
        plain["blockers"] = list(item.blockers())
        plain["stale"] = item.stale
    data["cited"] = [
        {"run_id": item.run_id, "attempt": item.attempt, "job_id": item.job_id}
        for item in report.cited()
    ]
    return data
