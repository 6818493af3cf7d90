"""The runtime-evidence section of an alignment PR body / verification comment (Markdown).

Everything stated is read from the :class:`EvidenceReport`: the cited run and job, whether
its launch line equals the extracted argv, the eval figures and their verdicts, which arms
used synthetic acceptance (throughput context only), the perf-changelog entry quoted as the
benchmark's own measurement, and whether the script blob at the run's head is the one the PR
ships now. Untrusted text goes through :mod:`bot.markdown`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot import markdown as md
from bot.evidence.launch import speculative_config
from bot.evidence.model import EvalFigure, Evidence, EvidenceReport, RunSummary, outcome
from bot.words import count


class QuotedEntry(Protocol):
    """A perf-changelog entry as the section quotes it (what it reads of
    :class:`bot.benchmarks.changelog.ChangelogEntry`)."""

    @property
    def description(self) -> tuple[str, ...]: ...
    @property
    def pr_link(self) -> str: ...
    @property
    def pr_number(self) -> int | None: ...


MAX_LISTED = 20  # bullets under "Not cited" before summarising the rest
MAX_FIGURE_LINES = 12  # eval figure lines per cited job (a batched eval has a few)
MAX_FIGURES_PER_LINE = 8  # filters/metrics per figure line (gsm8k has two)
MAX_EXCERPT_LINES = 20  # score-check lines quoted per cited job

_KIND_PHRASE = {
    "printf-q": "the script's `printf %q` line in the job log",
    "xtrace": "the `set -x` trace of `vllm serve` in the job log",
}


def _num(value: float) -> str:
    return f"{value:.4f}"


def _threshold(value: float) -> str:
    return f"{value:.2f}"


def _verdict_word(figure: EvalFigure) -> str:
    return {True: "PASS", False: "FAIL", None: "UNJUDGED"}[figure.passed]


def _figure_text(figure: EvalFigure, with_verdict: bool) -> str:
    name = md.text(figure.filter or figure.metric)
    value = _num(figure.value)
    if figure.stderr is not None:
        value += f" ± {_num(figure.stderr)}"
    if not with_verdict:
        return f"{name} {value}"
    word = _verdict_word(figure)
    if figure.passed is False and figure.threshold is not None and not figure.policy_passed:
        word += f" (< {_threshold(figure.threshold)})"
    return f"{name} {value} {word}"


def _figure_order(figure: EvalFigure) -> tuple[int, str]:
    # the seed's order: strict-match (what the verdict hinges on) before flexible-extract
    order = {"strict-match": 0, "flexible-extract": 1}
    return (order.get(figure.filter or "", 2), figure.filter or figure.metric)


def figures_sentence(figures: Sequence[EvalFigure]) -> list[str]:
    """``gsm8k 5-shot — strict-match 0.9689 ± 0.0048, flexible-extract …, both PASS.`` lines,
    one per (task, n-shot, concurrency)."""
    groups: dict[tuple[str, int | None, int | None], list[EvalFigure]] = {}
    for figure in figures:
        groups.setdefault((figure.task, figure.n_shot, figure.conc), []).append(figure)
    concs = {conc for _, _, conc in groups}
    lines = []
    for (task, shots, conc), members in groups.items():
        members.sort(key=_figure_order)
        head = md.text(task) + (f" {shots}-shot" if shots is not None else "")
        if len(concs) > 1 and conc is not None:
            head += f" at concurrency {conc}"
        verdicts = {figure.passed for figure in members}
        shown = members[:MAX_FIGURES_PER_LINE]
        more = f", and {len(members) - len(shown)} more" if len(members) > len(shown) else ""
        if len(verdicts) == 1 and len(members) > 1:
            word = _verdict_word(members[0])
            quantifier = "both" if len(members) == 2 else "all"
            body = ", ".join(_figure_text(f, with_verdict=False) for f in shown)
            lines.append(f"{head} — {body}{more}, {quantifier} {word}.")
        else:
            body = ", ".join(_figure_text(f, with_verdict=True) for f in shown)
            lines.append(f"{head} — {body}{more}.")
    return lines


def _thresholds_sentence(figures: Sequence[EvalFigure]) -> str:
    policy = sorted({f.threshold for f in figures if f.threshold is not None})
    job = sorted(
        {(f.job_verdict.threshold, f.job_verdict.source) for f in figures if f.job_verdict}
    )
    parts = []
    if policy:
        parts.append("recipe-sync policy ≥ " + " / ".join(_threshold(t) for t in policy))
    if job:
        words = {f.job_verdict.passed for f in figures if f.job_verdict}
        printed = "PASS" if words == {True} else "FAIL" if words == {False} else "PASS/FAIL"
        against = ", ".join(f"≥ {t:g} from {md.text(src)}" for t, src in job)
        parts.append(f"the job's own score check printed {printed} ({against})")
    return ("Thresholds: " + "; ".join(parts) + ".") if parts else ""


def _job_link(item: Evidence) -> str:
    return md.link(md.code(item.job_name), item.job_html_url)


def _run_link(run_id: int, url: str | None) -> str:
    return md.link(str(run_id), url)


def _pr_ref(report: EvidenceReport, pr_ref: str | None) -> str:
    if pr_ref is not None:
        return pr_ref
    if report.pr_number is None:
        return "the PR"
    prefix = md.text(report.repo) if report.repo else ""
    return f"{prefix}#{report.pr_number}"


def _bench_name(report: EvidenceReport) -> str:
    return md.text(report.repo.rsplit("/", 1)[-1]) if report.repo else "Benchmark"


def _launch_sentence(item: Evidence) -> str:
    assert item.launch is not None
    where = _KIND_PHRASE[item.launch.kind]
    script = item.blob.script_path or item.context.script_path
    source = f" from {md.code(script)}" if script else ""
    if item.launch_check.matches:
        return (
            f"Its launch line ({where}) equals the argv extracted{source}, all "
            f"{len(item.launch.argv)} tokens."
        )
    ran = f" (script {md.code(script)})" if script else ""
    return (
        f"Its launch line was read from {where}{ran}; no extracted argv was given to compare "
        "it with, so it is not claimed to match."
    )


def _blob_problem(item: Evidence, pr: str) -> str | None:
    """Why the script blob keeps a job from describing the PR's head (None: it does)."""
    blob = item.blob
    run8, pr8 = md.sha8(blob.run_head), md.sha8(blob.pr_head)
    where = f" ({md.code(blob.script_path)})" if blob.script_path else ""
    if blob.state == "differs":
        return (
            f"stale: the benchmark script blob{where} differs between the run's head ({run8}, "
            f"blob {md.sha8(blob.run_blob or '')}) and {pr}'s current head ({pr8}, blob "
            f"{md.sha8(blob.pr_blob or '')})"
        )
    if blob.state == "missing-at-pr-head":
        return f"stale: the benchmark script{where} no longer exists at {pr}'s current head ({pr8})"
    if blob.state == "unknown":
        return (
            f"it ran on an older head ({run8}) than {pr}'s ({pr8}); its script blob could not "
            f"be compared: {md.text(blob.reason)}"
        )
    return None


def blob_sentence(item: Evidence, pr: str) -> str:
    """Whether the job's run still describes what the PR ships, as one sentence."""
    pr8 = md.sha8(item.blob.pr_head)
    if item.blob.state == "same-head":
        return (
            f"The run is on {pr}'s current head ({pr8}), so this evidence describes what {pr} "
            "ships today."
        )
    if item.blob.state == "identical":
        return (
            f"The script blob is identical at the run's head ({md.sha8(item.blob.run_head)}) "
            f"and {pr}'s current head ({pr8}), so this evidence describes what {pr} ships today."
        )
    problem = _blob_problem(item, pr) or ""
    if problem.startswith("stale: "):
        return f"**Stale:** {problem.removeprefix('stale: ')}."
    return problem[:1].upper() + problem[1:] + "."


def _cited_block(
    item: Evidence, report: EvidenceReport, pr: str, serving_match: str | None
) -> list[str]:
    attempt = f" (attempt {item.attempt})" if item.attempt > 1 else ""
    node = f" on {md.code(item.runner_name)}" if item.runner_name else ""
    opening = (
        f"{_bench_name(report)} run {_run_link(item.run_id, item.run_html_url)}{attempt}, "
        f"job {_job_link(item)}{node}. {_launch_sentence(item)}"
    )
    if serving_match:
        opening += f" {serving_match.strip()}"  # computed by the caller: trusted Markdown
    if item.other_launches:
        count = len(item.other_launches)
        numbers = ", ".join(str(launch.line_number) for launch in item.other_launches[:10])
        opening += (
            f" The log shows {count} other launch line{'s' if count > 1 else ''} (lines "
            f"{numbers}{', …' if count > 10 else ''}); the one compared is on line "
            f"{item.launch.line_number if item.launch else '?'}."
        )
    opening += (
        " The server reached ready and served the eval:"
        if item.server_ready
        else " The eval results in the job log:"
    )
    figure_lines = figures_sentence(item.figures)
    if len(figure_lines) > MAX_FIGURE_LINES:
        hidden = len(figure_lines) - MAX_FIGURE_LINES
        figure_lines = [*figure_lines[:MAX_FIGURE_LINES], f"… and {hidden} more, all PASS."]
    block = [opening, "", *figure_lines]
    if thresholds := _thresholds_sentence(item.figures):
        block += ["", thresholds]
    return block


def _synthetic_block(report: EvidenceReport, cited: Sequence[Evidence]) -> list[str]:
    cited_runs = {item.run_id for item in cited}
    arms = [
        item
        for item in report.evidence
        if item.synthetic_acceptance
        and item.superseded_by is None
        and (not cited_runs or item.run_id in cited_runs)
    ]
    if not arms:
        return []
    blocks: list[str] = []
    buckets: dict[str, list[Evidence]] = {}
    for item in arms:
        buckets.setdefault(item.job.bucket, []).append(item)
    reference = cited[0] if cited else None
    for bucket, items in buckets.items():
        concs = sorted({c for item in items for c in item.job.concurrency})
        outcomes = [item.conclusion for item in items]
        also = "also " if cited else ""
        done = f"{also}completed" if all(c == "success" for c in outcomes) else f"{also}ran"
        failed = sum(1 for c in outcomes if c != "success")
        where = ""
        if reference is not None:
            same_hw = all(item.job.runner == reference.job.runner for item in items)
            same_image = reference.context.image is not None and all(
                item.context.image == reference.context.image for item in items
            )
            where = (
                " on the same image and hardware"
                if same_hw and same_image
                else " on the same hardware"
                if same_hw
                else ""
            )
        lengths = sorted(
            {
                str(config.get("synthetic_acceptance_length"))
                for item in items
                if item.launch is not None
                and (config := speculative_config(item.launch.argv))
                and config.get("synthetic_acceptance_length") is not None
            }
        )
        fixed = (
            f" (fixed acceptance length {md.text(', '.join(lengths))})"
            if lengths
            else " (fixed acceptance rate)"
        )
        sentence = (
            f"The {md.text(bucket)} arms at concurrency {'/'.join(map(str, concs))} {done}"
            f"{where}"
            + (f" ({failed} of {len(items)} did not succeed)" if failed else "")
            + f", with `rejection_sample_method: synthetic`{fixed}: throughput context, not "
            "verification."
        )
        method = (
            (speculative_config(reference.launch.argv) or {}).get("rejection_sample_method")
            if reference is not None and reference.launch is not None
            else None
        )
        if isinstance(method, str):
            sentence += f" The cited arm uses real {md.code(method)} rejection."
        blocks += [sentence, ""]
    return blocks[:-1]


def _changelog_block(
    entries: Sequence[QuotedEntry],
    report: EvidenceReport,
    pr: str,
    key: str | None,
    cited: bool,
) -> list[str]:
    block: list[str] = []
    named = f" for {md.code(key)}" if key else ""
    for entry in entries:
        if report.pr_number is not None and entry.pr_number == report.pr_number:
            opening = f"{pr}'s `perf-changelog.yaml` entry{named} records:"
        else:
            source = md.link("its PR", entry.pr_link) if md.safe_url(entry.pr_link) else "a PR"
            opening = f"The `perf-changelog.yaml` entry{named} from {source} records:"
        block += [
            opening,
            "",
            *[f"> - {md.text(line, line_start=True)}" for line in entry.description],
            "",
            f"Quoted from {_bench_name(report)}, not re-derived"
            + ("; the eval figures above are from the linked job log." if cited else "."),
            "",
        ]
    return block[:-1]


def _not_cited_bullet(item: Evidence, pr: str) -> str | None:
    if item.superseded_by is not None:
        return None  # stated once per attempt
    if not item.is_eval_arm and item.conclusion == "success":
        return None  # throughput context, not a problem
    where = f"run {_run_link(item.run_id, item.run_html_url)}, attempt {item.attempt}"
    clauses: list[str] = []
    if item.conclusion != "success":
        clauses.append(f"the job {outcome(item.status, item.conclusion)}")
    if not item.log_available:
        clauses.append(
            "its log is missing or expired (GitHub answers 404/410), so its launch line and "
            "eval figures cannot be read"
        )
        return f"Job {_job_link(item)} ({where}): " + "; ".join(clauses) + "."
    diff = item.launch_check.difference
    if item.launch is None:
        clauses.append("no launch line in its log")
    elif diff is not None:
        found = md.code(diff.found) if diff.found is not None else "nothing (the line ends)"
        wanted = md.code(diff.expected) if diff.expected is not None else "nothing (it ends)"
        clauses.append(
            f"its launch line differs from the extracted argv at token {diff.index} (log "
            f"{found}, extraction {wanted})"
        )
    if item.synthetic_acceptance:
        clauses.append("it used synthetic acceptance, so it is throughput context only")
    if item.is_eval_arm and not item.figures:
        clauses.append("no lm-eval results in its log")
    for figure in item.figures:
        if figure.passed is False:
            clauses.append(f"{md.text(figure.task)} {_figure_text(figure, with_verdict=True)}")
        elif figure.passed is None:
            clauses.append(
                f"no threshold for {md.text(figure.task)} {md.text(figure.filter or figure.metric)}"
            )
    if (blob := _blob_problem(item, pr)) is not None:
        clauses.append(blob)
    if not clauses:
        return None
    return f"Job {_job_link(item)} ({where}): " + "; ".join(clauses) + "."


def _run_bullets(report: EvidenceReport, pr: str, cited_runs: set[int]) -> list[str]:
    bullets: list[str] = []
    for run in report.runs:
        bullets += _attempt_bullets(run)
        if not any(a.benchmark_jobs for a in run.attempts):
            continue
        if not run.is_current_head and run.run_id not in cited_runs:
            bullets.append(
                f"Run {_run_link(run.run_id, run.html_url)} {outcome(run.status, run.conclusion)} "
                f"on an older head ({md.sha8(run.head_sha)}) than {pr}'s "
                f"({md.sha8(report.pr_head_sha)})."
            )
        elif run.conclusion not in ("success", None) and run.run_id not in cited_runs:
            bullets.append(
                f"Run {_run_link(run.run_id, run.html_url)} (attempt {run.latest_attempt}) "
                f"{outcome(run.status, run.conclusion)}."
            )
    return bullets


def _attempt_bullets(run: RunSummary) -> list[str]:
    bullets = []
    for attempt in run.attempts[:-1]:
        if not attempt.benchmark_jobs:
            continue
        state = outcome(attempt.status, attempt.conclusion) if attempt.found else "is not on record"
        bullets.append(
            f"Attempt {attempt.attempt} of run {_run_link(run.run_id, attempt.html_url)} "
            f"{state}; attempt {run.latest_attempt} re-ran its jobs and supersedes it."
        )
    return bullets


def render_evidence_section(
    report: EvidenceReport,
    *,
    hardware_label: str,
    serving_match: str | None = None,
    changelog: Sequence[QuotedEntry] = (),
    changelog_key: str | None = None,
    pr_ref: str | None = None,
    heading_level: int = 3,
    excerpts: bool = True,
) -> str:
    """The "<hardware> runtime evidence" section.

    ``serving_match`` is a sentence the caller computed (e.g. "It matches the serving subset
    above — …"); it is inserted as Markdown after the exact-argv statement. ``changelog`` are
    the perf-changelog entries to quote (see :func:`bot.benchmarks.changelog.entries_for`).
    ``pr_ref`` is how to name the benchmark PR (default ``owner/repo#N``).
    """
    pr = _pr_ref(report, pr_ref)
    heading = "#" * max(1, min(heading_level, 6))
    out = [f"{heading} {md.text(hardware_label)} runtime evidence", ""]
    cited = report.cited()
    if not report.runs:
        out += [
            f"No workflow runs were found for {pr}'s head ({md.sha8(report.pr_head_sha)})"
            + (f" or branch {md.code(report.head_branch)}" if report.head_branch else "")
            + ", so nothing verifies this configuration yet.",
            "",
        ]
    elif not cited:
        out += [f"No run of {pr} verifies this configuration on {md.text(hardware_label)} yet.", ""]
    for item in cited:
        out += [*_cited_block(item, report, pr, serving_match), ""]
    if synthetic := _synthetic_block(report, cited):
        out += [*synthetic, ""]
    if changelog:
        out += [*_changelog_block(changelog, report, pr, changelog_key, bool(cited)), ""]
    for item in cited:  # last, as in the seed: does the cited run still describe the PR?
        prefix = f"For run {item.run_id}, job {md.code(item.job_name)}: " if len(cited) > 1 else ""
        out += [prefix + blob_sentence(item, pr), ""]
    if excerpts:
        out += _excerpts(cited)
    bullets = _run_bullets(report, pr, {item.run_id for item in cited})
    cited_ids = {(item.run_id, item.attempt, item.job_id) for item in cited}
    for item in report.evidence:
        if (item.run_id, item.attempt, item.job_id) in cited_ids:
            continue
        if item.verifies:
            bullets.append(
                f"Job {_job_link(item)} (run {_run_link(item.run_id, item.run_html_url)}, "
                f"attempt {item.attempt}) also verifies; the newer one is cited."
            )
        elif (bullet := _not_cited_bullet(item, pr)) is not None:
            bullets.append(bullet)
    if bullets:
        shown = bullets[:MAX_LISTED]
        out += [
            "<details><summary>Not cited: "
            f"{count(len(bullets), 'run or job', 'runs or jobs')}</summary>",
            "",
        ]
        out += [f"- {bullet}" for bullet in shown]
        if len(bullets) > MAX_LISTED:
            out.append(f"- … and {len(bullets) - MAX_LISTED} more (see `recipe-sync evidence`).")
        out += ["", "</details>", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _excerpts(cited: Sequence[Evidence]) -> list[str]:
    out: list[str] = []
    for item in cited:
        parts = []
        if item.launch is not None:
            parts.append(f"line {item.launch.line_number}: launch line\n{item.launch.text}")
        verdict_lines = "\n".join(v.text for v in item.verdicts[:MAX_EXCERPT_LINES])
        if len(item.verdicts) > MAX_EXCERPT_LINES:
            verdict_lines += f"\n… {len(item.verdicts) - MAX_EXCERPT_LINES} more lines"
        if verdict_lines:
            parts.append(f"score check\n{verdict_lines}")
        if not parts:
            continue
        out += [
            f"<details><summary>Job log excerpts (run {item.run_id}, attempt {item.attempt})"
            "</summary>",
            "",
            md.fenced("\n\n".join(parts)),
            "",
            "</details>",
            "",
        ]
    return out
