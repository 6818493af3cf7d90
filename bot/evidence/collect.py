"""Collect runtime evidence for a benchmark PR: runs → attempts → jobs → logs → Evidence.

Imperative shell around the pure parsers: every read goes through a :class:`RunSource` and
the caller's two callbacks, so the same code serves the GitHub API and a saved directory.
Nothing here raises for missing data: an expired log, a cancelled run or an older head all end
up as facts in the report that the renderer states.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from bot.evidence.jobname import JobName, parse_job_name
from bot.evidence.launch import (
    LaunchContext,
    find_launch_lines,
    first_difference,
    launch_context,
    preferred_launch,
    server_ready,
    uses_synthetic_acceptance,
)
from bot.evidence.lmeval import EvalRow, EvalVerdict, parse_eval_tables, parse_verdicts
from bot.evidence.logtext import log_lines
from bot.evidence.model import (
    AttemptSummary,
    BlobCheck,
    BlobState,
    EvalFigure,
    Evidence,
    EvidenceReport,
    LaunchCheck,
    RunMatch,
    RunSummary,
)
from bot.evidence.source import RunSource
from bot.rules import default_rules
from bot.rules.models import Policy

ExpectedArgv = Callable[[JobName], tuple[str, ...] | None]
BlobShaAt = Callable[[str, str], str | None]  # (commit sha, path) → blob sha or None
MAX_ATTEMPTS = 50  # GitHub allows 50 re-runs; a larger run_attempt is bad data


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _run_match(
    run: dict[str, Any],
    pr_head_sha: str,
    head_branch: str | None,
    pr_number: int | None,
    head_repo: str | None,
    heads: Sequence[str] = (),
) -> RunMatch | None:
    """Why ``run`` belongs to the PR, or None. Runs naming other PRs are never the PR's;
    fork PRs' runs name none (``pull_requests: []``), so they match by head SHA (the current
    one or a known earlier one), or by head branch (+ head repository when known)."""
    numbers = [pr.get("number") for pr in run.get("pull_requests") or [] if isinstance(pr, dict)]
    if pr_number is not None and numbers:
        return "pull_request" if pr_number in numbers else None
    if run.get("head_sha") == pr_head_sha or run.get("head_sha") in heads:
        return "head_sha"
    if head_branch is not None and run.get("head_branch") == head_branch:
        repository = run.get("head_repository")
        full_name = repository.get("full_name") if isinstance(repository, dict) else None
        if head_repo is None or full_name is None or full_name == head_repo:
            return "head_branch"
    return None


class _BlobChecker:
    def __init__(self, pr_head: str, blob_sha_at: BlobShaAt | None, script: str | None) -> None:
        self.pr_head = pr_head
        self.blob_sha_at = blob_sha_at
        self.script = script
        self._cache: dict[tuple[str, str], str | None] = {}

    def _blob(self, commit: str, path: str) -> str | None:
        assert self.blob_sha_at is not None
        key = (commit, path)
        if key not in self._cache:
            self._cache[key] = self.blob_sha_at(commit, path)
        return self._cache[key]

    def check(self, run_head: str, context: LaunchContext) -> BlobCheck:
        script = self.script or context.script_path
        if run_head == self.pr_head:
            return BlobCheck(script, run_head, self.pr_head, None, None, "same-head")
        if script is None:
            return self._unknown(script, run_head, "the script path is not known")
        if self.blob_sha_at is None:
            return self._unknown(script, run_head, "no benchmark repository to read blobs from")
        run_blob = self._blob(run_head, script)
        pr_blob = self._blob(self.pr_head, script)
        if run_blob is None:
            return self._unknown(script, run_head, "the script is not readable at the run's head")
        if pr_blob is None:
            return BlobCheck(script, run_head, self.pr_head, run_blob, None, "missing-at-pr-head")
        state: BlobState = "identical" if run_blob == pr_blob else "differs"
        return BlobCheck(script, run_head, self.pr_head, run_blob, pr_blob, state)

    def _unknown(self, script: str | None, run_head: str, reason: str) -> BlobCheck:
        return BlobCheck(script, run_head, self.pr_head, None, None, "unknown", reason)


def _figures(
    rows: Sequence[EvalRow], verdicts: Sequence[EvalVerdict], policy: Policy, model_prefix: str
) -> tuple[EvalFigure, ...]:
    # the last PASS/FAIL line per (task, filter, conc); a line without [conc=] matches any
    last: dict[tuple[str, str | None, int | None], EvalVerdict] = {}
    any_conc: dict[tuple[str, str | None], EvalVerdict] = {}
    for line in verdicts:
        last[(line.task, line.filter, line.conc)] = line
        any_conc[(line.task, line.filter)] = line

    def verdict_for(task: str, filter_name: str | None, conc: int | None) -> EvalVerdict | None:
        if conc is None:
            return any_conc.get((task, filter_name))
        found = [
            v
            for v in (last.get((task, filter_name, conc)), last.get((task, filter_name, None)))
            if v is not None
        ]
        return max(found, key=lambda v: v.line_number) if found else None

    figures: list[EvalFigure] = []
    used: set[int] = set()
    for row in rows:
        if row.value is None or row.metric.endswith("_stderr"):
            continue
        verdict = verdict_for(row.task, row.filter, row.conc)
        if verdict is not None:
            used.add(verdict.line_number)
        figures.append(
            EvalFigure(
                task=row.task,
                metric=row.metric,
                filter=row.filter,
                n_shot=row.n_shot,
                value=row.value,
                stderr=row.stderr,
                conc=row.conc if row.conc is not None else (verdict.conc if verdict else None),
                threshold=policy.threshold(row.task, row.filter or row.metric, model_prefix),
                job_verdict=verdict,
            )
        )
    for verdict in verdicts:  # a PASS/FAIL line whose table did not reach the log
        if verdict.line_number in used:
            continue
        figures.append(
            EvalFigure(
                task=verdict.task,
                metric=verdict.metric,
                filter=verdict.filter,
                n_shot=None,
                value=verdict.value,
                stderr=None,
                conc=verdict.conc,
                threshold=policy.threshold(
                    verdict.task, verdict.filter or verdict.metric, model_prefix
                ),
                job_verdict=verdict,
            )
        )
    return tuple(figures)


def _evidence(
    *,
    run: dict[str, Any],
    attempt: int,
    attempt_url: str | None,
    job: dict[str, Any],
    parsed: JobName,
    log: str | None,
    pr_head_sha: str,
    expected_argv: ExpectedArgv | None,
    blobs: _BlobChecker,
    policy: Policy,
) -> Evidence:
    head = _str(run.get("head_sha")) or ""
    lines = log_lines(log) if log is not None else []
    launches = find_launch_lines(lines)
    launch = preferred_launch(launches)
    others = tuple(item for item in launches if launch is not None and item.argv != launch.argv)
    context = launch_context(lines)
    expected = expected_argv(parsed) if expected_argv is not None else None
    difference = (
        first_difference(launch.argv, tuple(expected))
        if launch is not None and expected is not None
        else None
    )
    verdicts = parse_verdicts(lines)
    return Evidence(
        run_id=_int(run.get("id")) or 0,
        attempt=attempt,
        run_html_url=attempt_url,
        head_sha=head,
        is_current_head=head == pr_head_sha,
        job_id=_int(job.get("id")) or 0,
        job_html_url=_str(job.get("html_url")),
        job_name=parsed.raw,
        job=parsed,
        status=_str(job.get("status")),
        conclusion=_str(job.get("conclusion")),
        runner_name=_str(job.get("runner_name")),
        log_available=log is not None,
        launch=launch,
        other_launches=others,
        launch_check=LaunchCheck(tuple(expected) if expected is not None else None, difference),
        context=context,
        server_ready=server_ready(lines),
        figures=_figures(parse_eval_tables(lines), verdicts, policy, parsed.model_prefix),
        verdicts=verdicts,
        synthetic_acceptance=launch is not None and uses_synthetic_acceptance(launch.argv),
        blob=blobs.check(head, context),
    )


def collect_evidence(
    source: RunSource,
    *,
    pr_head_sha: str,
    head_branch: str | None = None,
    pr_number: int | None = None,
    head_repo: str | None = None,
    repo: str | None = None,
    expected_argv: ExpectedArgv | None = None,
    blob_sha_at: BlobShaAt | None = None,
    script_path: str | None = None,
    policy: Policy | None = None,
    job_filter: Callable[[JobName], bool] | None = None,
    earlier_heads: Sequence[str] = (),
) -> EvidenceReport:
    """Every benchmark job of every attempt of the PR's workflow runs, with what its log shows.

    ``expected_argv(job)`` gives the statically extracted argv for a job (None: not
    extracted); ``blob_sha_at(commit, path)`` the script's blob SHA at a commit (None when the
    commit or file is unknown). ``script_path`` overrides the script the launcher line names.
    ``job_filter`` limits which benchmark jobs' logs are downloaded (e.g. one hardware).
    ``earlier_heads`` are the PR's previous head SHAs (``GET /pulls/{n}/commits``): their
    runs are looked up too, for a source that returns only runs at exactly the given head.
    """
    if policy is None:
        policy = default_rules().policy
    blobs = _BlobChecker(pr_head_sha, blob_sha_at, script_path)
    seen: dict[int, tuple[dict[str, Any], RunMatch]] = {}
    heads = [pr_head_sha, *(sha for sha in dict.fromkeys(earlier_heads) if sha != pr_head_sha)]
    for head in heads:
        for run in source.workflow_runs(head, head_branch):
            run_id = _int(run.get("id"))
            match = _run_match(run, pr_head_sha, head_branch, pr_number, head_repo, heads)
            if run_id is not None and match is not None:
                seen.setdefault(run_id, (run, match))
    summaries: list[RunSummary] = []
    evidence: list[Evidence] = []
    for run_id in sorted(seen, key=lambda rid: (seen[rid][0].get("head_sha") != pr_head_sha, -rid)):
        run, match = seen[run_id]
        summary, items = _collect_run(
            source, run, match, pr_head_sha, expected_argv, blobs, policy, job_filter
        )
        summaries.append(summary)
        evidence.extend(items)
    return EvidenceReport(
        repo=repo,
        pr_number=pr_number,
        pr_head_sha=pr_head_sha,
        head_branch=head_branch,
        runs=tuple(summaries),
        evidence=tuple(evidence),
    )


def _collect_run(
    source: RunSource,
    run: dict[str, Any],
    match: RunMatch,
    pr_head_sha: str,
    expected_argv: ExpectedArgv | None,
    blobs: _BlobChecker,
    policy: Policy,
    job_filter: Callable[[JobName], bool] | None,
) -> tuple[RunSummary, list[Evidence]]:
    run_id = _int(run.get("id")) or 0
    latest = min(max(_int(run.get("run_attempt")) or 1, 1), MAX_ATTEMPTS)
    attempts: list[AttemptSummary] = []
    items: list[Evidence] = []
    other_jobs = 0
    for number in range(1, latest + 1):
        record = source.run_attempt(run_id, number)
        state = record if record is not None else (run if number == latest else {})
        url = _str(state.get("html_url")) or _str(run.get("html_url"))
        if url and record is not None and number != latest and "/attempts/" not in url:
            url = f"{url}/attempts/{number}"
        benchmark = 0
        for job in source.jobs(run_id, number):
            parsed = parse_job_name(_str(job.get("name")) or "")
            if parsed is None:
                other_jobs += number == latest
                continue
            benchmark += 1
            if job_filter is not None and not job_filter(parsed):
                continue
            job_id = _int(job.get("id"))
            log = source.job_log(job_id) if job_id is not None else None
            items.append(
                _evidence(
                    run=run,
                    attempt=number,
                    attempt_url=url,
                    job=job,
                    parsed=parsed,
                    log=log,
                    pr_head_sha=pr_head_sha,
                    expected_argv=expected_argv,
                    blobs=blobs,
                    policy=policy,
                )
            )
        attempts.append(
            AttemptSummary(
                attempt=number,
                status=_str(state.get("status")),
                conclusion=_str(state.get("conclusion")),
                html_url=url,
                found=record is not None or number == latest,
                benchmark_jobs=benchmark,
            )
        )
    items = _mark_superseded(items)
    head = _str(run.get("head_sha")) or ""
    summary = RunSummary(
        run_id=run_id,
        name=_str(run.get("name")),
        path=_str(run.get("path")),
        event=_str(run.get("event")),
        html_url=_str(run.get("html_url")),
        head_sha=head,
        head_branch=_str(run.get("head_branch")),
        created_at=_str(run.get("created_at")),
        latest_attempt=latest,
        status=_str(run.get("status")),
        conclusion=_str(run.get("conclusion")),
        is_current_head=head == pr_head_sha,
        matched_by=match,
        attempts=tuple(attempts),
        other_jobs=other_jobs,
    )
    return summary, items


def _mark_superseded(items: list[Evidence]) -> list[Evidence]:
    """A job re-run in a later attempt of the same run is superseded by it."""
    last_attempt: dict[str, int] = {}
    for item in items:
        last_attempt[item.job_name] = max(last_attempt.get(item.job_name, 0), item.attempt)
    return [
        replace(item, superseded_by=last_attempt[item.job_name])
        if last_attempt[item.job_name] > item.attempt
        else item
        for item in items
    ]
