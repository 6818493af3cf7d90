"""Workflow-run evidence for the targets of an alignment (through ``bot.evidence``).

The benchmark jobs of the PR's runs are matched to (config key, point) by their names; each
job's expected argv is the static extraction at the PR head for that point and arm, with the
runner node that ran the job (its PORT and paths depend on it). A target's evidence is the
cited (verifying) eval job of its key on its hardware, or the reason there is none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from bot.align.profile import Profile
from bot.benchmarks import BenchRepo, Point, extract
from bot.errors import RecipeSyncError
from bot.evidence.collect import BlobShaAt, collect_evidence
from bot.evidence.jobname import JobName
from bot.evidence.model import Evidence, EvidenceReport
from bot.evidence.source import RunSource
from bot.rules import Rules


class RunnerNames:
    """A RunSource that remembers each job's runner name (the job JSON has it; the parsed
    job name the collector hands to ``expected_argv`` does not)."""

    def __init__(self, source: RunSource) -> None:
        self.source = source
        self.runner: dict[str, str | None] = {}

    def workflow_runs(self, head_sha: str, head_branch: str | None) -> list[dict[str, Any]]:
        return self.source.workflow_runs(head_sha, head_branch)

    def run_attempt(self, run_id: int, attempt: int) -> dict[str, Any] | None:
        return self.source.run_attempt(run_id, attempt)

    def jobs(self, run_id: int, attempt: int) -> list[dict[str, Any]]:
        jobs = self.source.jobs(run_id, attempt)
        for job in jobs:
            name, runner = job.get("name"), job.get("runner_name")
            if isinstance(name, str):
                self.runner[name] = runner if isinstance(runner, str) else None
        return jobs

    def job_log(self, job_id: int) -> str | None:
        return self.source.job_log(job_id)


def job_point(head: BenchRepo, keys: Sequence[str], job: JobName) -> tuple[str, Point] | None:
    """The (config key, point) a benchmark job ran, among ``keys``."""
    for key in keys:
        try:
            entry = head.entry(key)
            rows = head.rows(key)
        except RecipeSyncError:
            continue
        same_config = (entry.model_prefix, entry.precision, entry.framework) == (
            job.model_prefix,
            job.precision,
            job.framework,
        )
        if not same_config or entry.runner.removeprefix("cluster:") != job.runner.removeprefix(
            "cluster:"
        ):
            continue
        for row in rows:
            point = row.point
            if (point.tp, point.ep, point.dp_attn, point.conc) != (
                job.tp,
                job.ep,
                job.dpa,
                job.conc,
            ):
                continue
            if job.spec is not None and point.spec_decoding not in (job.spec, "none"):
                continue
            return key, point
    return None


def collect(
    runs: RunSource,
    head: BenchRepo,
    keys: Sequence[str],
    *,
    head_sha: str,
    head_branch: str | None,
    pr_number: int | None,
    head_repo: str | None,
    repo: str | None,
    blob_sha_at: BlobShaAt | None,
    earlier_heads: Sequence[str],
    rules: Rules,
) -> EvidenceReport:
    """Every benchmark job of ``keys`` in the PR's runs, with its expected argv."""
    source = RunnerNames(runs)
    cache: dict[tuple[str, Point, str, str | None], tuple[str, ...] | None] = {}

    def expected(job: JobName) -> tuple[str, ...] | None:
        found = job_point(head, keys, job)
        if found is None:
            return None
        key, point = found
        arm = "eval" if job.is_eval else "throughput"
        node = source.runner.get(job.raw)
        slot = (key, point, arm, node)
        if slot not in cache:
            try:
                cache[slot] = extract(head, key, point, arm, runner_node=node).argv or None
            except RecipeSyncError:
                cache[slot] = None
        return cache[slot]

    return collect_evidence(
        source,
        pr_head_sha=head_sha,
        head_branch=head_branch,
        pr_number=pr_number,
        head_repo=head_repo,
        repo=repo,
        expected_argv=expected,
        blob_sha_at=blob_sha_at,
        policy=rules.policy,
        job_filter=lambda job: job_point(head, keys, job) is not None,
        earlier_heads=tuple(earlier_heads),
    )


def evidence_for(
    report: EvidenceReport | None, head: BenchRepo, key: str, profile: Profile, rules: Rules
) -> tuple[Evidence | None, str, EvidenceReport | None]:
    """(the verifying eval job of this profile, why there is none, the report narrowed to
    this profile's jobs)."""
    if report is None:
        return None, "no workflow-run evidence was given", None

    def ours(item: Evidence) -> bool:
        found = job_point(head, [key], item.job)
        hardware = rules.hardware.hardware_for_runner(item.job.runner)
        return found is not None and hardware == profile.hardware

    narrowed = replace(report, evidence=tuple(e for e in report.evidence if ours(e)))
    cited = [e for e in narrowed.cited() if e.is_eval_arm]
    if cited:
        return cited[0], "", narrowed
    if not report.runs:
        return None, "no workflow runs were found for the PR head", narrowed
    evals = [e for e in narrowed.evidence if e.is_eval_arm and e.superseded_by is None]
    if not evals:
        return None, "no eval job of this configuration ran", narrowed
    item = evals[0]
    blockers = "; ".join(item.blockers())
    return None, f"run {item.run_id} job {item.job_name!r} does not verify it: {blockers}", narrowed
