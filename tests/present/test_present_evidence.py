from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bot import markdown as md
from bot.benchmarks.changelog import ChangelogEntry, entries_for, parse_changelog
from bot.evidence.collect import collect_evidence
from bot.evidence.fixtures import materialise
from bot.evidence.jobname import JobName
from bot.evidence.model import EvidenceReport
from bot.evidence.source import DirRunSource
from bot.present.evidence import render_evidence_section
from bot.rules import default_rules
from bot.sources import git_blob_sha, git_blob_sha_at
from tests.evidence.conftest import (
    EVAL_JOB,
    SCRIPT,
    SEED,
    SEED_TEMPLATE_DIR,
    MemoryRunSource,
    build_bench_repo,
    eval_log,
    rest_job,
    rest_run,
)
from tests.golden import assert_golden

GOLDEN = Path(__file__).parent / "golden" / "seed-evidence-section.md"
KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"
SERVING = (
    "Its launch line matches the serving subset above — same nightly image, MI355X, TP4, "
    "`--moe-backend aiter`, `--max-num-seqs 128`."
)


def seed_changelog() -> tuple[ChangelogEntry, ...]:
    text = (SEED_TEMPLATE_DIR / "perf-changelog.yaml").read_text()
    return entries_for(parse_changelog(text), KEY, 3058)


def seed_report_with_defaults(
    seed_dir: Path, expected: Callable[[JobName], tuple[str, ...] | None]
) -> EvidenceReport:
    # the seed's own SHAs; the script is unchanged between the run head and the PR head
    blobs = {
        SEED["RUN_HEAD_SHA"]: git_blob_sha(b"MAX_NUM_SEQS=128\n"),
        SEED["PR_HEAD_SHA"]: git_blob_sha(b"MAX_NUM_SEQS=128\n"),
        SEED["OLD_HEAD_SHA"]: git_blob_sha(b"MAX_NUM_SEQS=256\n"),
    }
    return collect_evidence(
        DirRunSource(seed_dir),
        pr_head_sha=SEED["PR_HEAD_SHA"],
        head_branch=SEED["PR_BRANCH"],
        pr_number=3058,
        head_repo="chunfangamd/InferenceX",
        repo="SemiAnalysisAI/InferenceX",
        expected_argv=expected,
        blob_sha_at=lambda commit, path: blobs.get(commit) if path == SCRIPT else None,
        policy=default_rules().policy,
    )


def test_seed_section_golden(
    seed_dir: Path, seed_expected: Callable[[JobName], tuple[str, ...] | None]
) -> None:
    report = seed_report_with_defaults(seed_dir, seed_expected)
    section = render_evidence_section(
        report,
        hardware_label="MI355X",
        serving_match=SERVING,
        changelog=seed_changelog(),
        changelog_key=KEY,
        pr_ref="#3058",
    )
    assert_golden(GOLDEN, section)


def test_seed_section_states_what_the_seed_states(
    seed_dir: Path, seed_expected: Callable[[JobName], tuple[str, ...] | None]
) -> None:
    section = render_evidence_section(
        seed_report_with_defaults(seed_dir, seed_expected),
        hardware_label="MI355X",
        changelog=seed_changelog(),
        changelog_key=KEY,
        pr_ref="#3058",
    )
    base = "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/34710937012"
    expected_fragments = [
        "### MI355X runtime evidence",
        f"InferenceX run [34710937012]({base}) (attempt 2), job "
        "[`agentic eval / p40 | dsv41flash fp4 cluster:mi355x-amds vllm TP4 mtp c32 | eval-only`]"
        f"({base}/job/97311840107) on `mi355x-amds_03`.",
        f"equals the argv extracted from `{SCRIPT}`, all 28 tokens.",
        "The server reached ready and served the eval:",
        "gsm8k 5-shot — strict-match 0.9689 ± 0.0048, flexible-extract 0.9682 ± 0.0048, both PASS.",
        "The agentic arms at concurrency 1/2/4/8/16/32 also completed on the same image and "
        "hardware, with `rejection_sample_method: synthetic` (fixed acceptance length 3.8): "
        "throughput context, not verification.",
        "The cited arm uses real `block` rejection.",
        "#3058's `perf-changelog.yaml` entry for `dsv41flash-fp4-mi355x-vllm-agentic-mtp` records:",
        "> - MoE GEMM 2.72 -> 2.30 ms/step at conc 1, 4.91 -> 4.27 at conc 4, 9.06 -> 7.18 at "
        "conc 16 (whole-step gains 4.2% / 5.3% / 8.7%)",
        "Quoted from InferenceX, not re-derived",
        "The script blob is identical at the run's head (ab76c131) and #3058's current head "
        "(559ef756), so this evidence describes what #3058 ships today",
        f"Attempt 1 of run [34710937012]({base}/attempts/1) was cancelled; attempt 2 re-ran",
        "succeeded on an older head (3f1c9a7e) than #3058's (559ef756)",
        "its launch line differs from the extracted argv at token 14 (log `256`, extraction "
        "`128`); stale: the benchmark script blob",
    ]
    for fragment in expected_fragments:
        assert fragment in section, fragment


def test_stale_evidence_is_stated(
    tmp_path: Path, seed_expected: Callable[[JobName], tuple[str, ...] | None]
) -> None:
    values = build_bench_repo(tmp_path / "bench", script_changes_after_run=True)
    saved = materialise(SEED_TEMPLATE_DIR, tmp_path / "saved", values)
    report = collect_evidence(
        DirRunSource(saved),
        pr_head_sha=values["PR_HEAD_SHA"],
        head_branch=SEED["PR_BRANCH"],
        pr_number=3058,
        repo="SemiAnalysisAI/InferenceX",
        expected_argv=seed_expected,
        blob_sha_at=git_blob_sha_at(tmp_path / "bench"),
        policy=default_rules().policy,
    )
    section = render_evidence_section(report, hardware_label="MI355X", pr_ref="#3058")
    run8, pr8 = values["RUN_HEAD_SHA"][:8], values["PR_HEAD_SHA"][:8]
    assert "No run of #3058 verifies this configuration on MI355X yet." in section
    assert (
        f"stale: the benchmark script blob (`{SCRIPT}`) differs between the run's head ({run8}, "
        in section
    )
    assert f"and #3058's current head ({pr8}, blob " in section
    assert "both PASS" not in section
    # no eval is cited, so the synthetic arms are not "also" anything
    assert "The agentic arms at concurrency 1/2/4/8/16/32 completed on" not in section
    assert "The agentic arms at concurrency 1/2/4/8/16/32 completed, with" in section


def test_current_head_and_missing_things_are_stated() -> None:
    jobs = {
        (1, 1): [rest_job(11, EVAL_JOB)],
        (2, 1): [
            rest_job(21, EVAL_JOB.replace("c64", "c32")),
            rest_job(22, EVAL_JOB.replace("c64", "c8"), "failure"),
        ],
        (3, 1): [rest_job(31, EVAL_JOB, "cancelled")],
    }
    runs = [
        rest_run(1, "head"),
        rest_run(2, "head", conclusion="failure"),
        rest_run(3, "head", conclusion="cancelled"),
    ]
    logs = {11: eval_log(), 22: eval_log("0.5000", "0.5100", "FAIL"), 31: ""}
    report = collect_evidence(
        MemoryRunSource(runs, jobs, logs),
        pr_head_sha="head",
        pr_number=7,
        repo="acme/bench",
        policy=default_rules().policy,
    )
    section = render_evidence_section(report, hardware_label="MI999")
    assert "bench run [1](https://github.com/acme/bench/actions/runs/1), job" in section
    assert (
        "no extracted argv was given to compare it with, so it is not claimed to match" in section
    )
    assert "The run is on acme/bench#7's current head (head), so this evidence describes" in section
    assert "its log is missing or expired (GitHub answers 404/410)" in section
    assert "the job failed; " in section and "strict-match 0.5000 ± 0.0066 FAIL (< 0.90)" in section
    assert (
        "Run [3](https://github.com/acme/bench/actions/runs/3) (attempt 1) was cancelled."
        in section
    )
    assert "the job was cancelled; no launch line in its log" in section


def test_no_runs_statement() -> None:
    report = collect_evidence(
        MemoryRunSource([], {}, {}),
        pr_head_sha="0123456789abcdef",
        head_branch="feature",
        pr_number=7,
        policy=default_rules().policy,
    )
    section = render_evidence_section(report, hardware_label="H200", pr_ref="#7")
    assert section == (
        "### H200 runtime evidence\n\nNo workflow runs were found for #7's head (01234567) or "
        "branch `feature`, so nothing verifies this configuration yet.\n"
    )


def _outside_code(section: str) -> str:
    """The section without fenced blocks and code spans (where Markdown is inert)."""
    section = re.sub(r"(?ms)^(`{3,})\n.*?^\1$", "", section)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", section)


def test_untrusted_text_cannot_inject_markdown_or_html() -> None:
    evil = "agentic eval <!-- x --> @admin `x` [a](http://e) / p1 | m fp8 r vllm TP1 c1 | eval-only"
    log = eval_log().replace(
        "+ vllm serve acme/Foo --tensor-parallel-size 8",
        "+ vllm serve acme/Foo --tensor-parallel-size 8 --x '```\n</details><img src=x>'",
    )
    source = MemoryRunSource([rest_run(1, "head")], {(1, 1): [rest_job(11, evil)]}, {11: log})
    report = collect_evidence(source, pr_head_sha="head", policy=default_rules().policy)
    changelog = (
        ChangelogEntry(
            index=0,
            config_keys=("k",),
            description=("<!-- hide --> @team *bold* [x](javascript:alert(1)) # h", "- nested"),
            pr_link="javascript:alert(1)",
            evals_only=False,
            line=1,
        ),
    )
    section = render_evidence_section(
        report, hardware_label="<b>MI</b> @x", changelog=changelog, changelog_key="k`"
    )
    assert "<!--" not in section and "-->" not in section
    prose = _outside_code(section)
    for tag in ("<details>", "<summary>", "</summary>", "</details>"):
        prose = prose.replace(tag, "", 1)  # the renderer's own excerpt wrapper
    assert "<" not in prose and "@admin" not in prose
    assert "@\u200bteam" in prose and "@\u200bx" in prose
    assert re.search(r"(?<!\\)\]\(javascript", section) is None and "\\*bold\\*" in section
    assert "> - \\- nested" in section
    # the job name sits in a code span whose fence is longer than its backtick run
    assert "[``agentic eval <!-\u200b- x -\u200b-> @admin `x` [a](http://e) / p1" in section
    # the log excerpt's fence is longer than the ``` inside it, and the </details> in the log
    # stays inside that fence
    fence = section.index("\n````\n")
    assert section.index("</details><img", fence) < section.index("\n````\n", fence + 1)


def test_markdown_helpers() -> None:
    assert md.text("a_b*c [d] <e> | ~f #g !h & @i") == (
        "a\\_b\\*c \\[d\\] &lt;e> \\| \\~f \\#g \\!h &amp; @\u200bi"
    )
    assert md.text("<!-- m -->") == "&lt;\\!-\u200b- m -\u200b->"
    assert md.code("<!--x-->") == "`<!-\u200b-x-\u200b->`"
    assert md.text("- item", line_start=True) == "\\- item"
    assert md.text("1. item", line_start=True) == "\\1. item"
    assert md.text("- item") == "- item"
    assert md.text("a\nb\x00c") == "a b c"
    assert md.code("a`b") == "``a`b``"
    assert md.code("`x`") == "`` `x` ``"
    assert md.code("") == "`(empty)`"
    assert md.fenced("x\n```\ny") == "````\nx\n```\ny\n````"
    assert md.safe_url("https://github.com/o/r/actions/runs/1") is not None
    for bad in ("http://x", "javascript:alert(1)", "https://x/a b", "https://x/(y)", None):
        assert md.safe_url(bad) is None
    assert md.link("l", "https://e.com/x") == "[l](https://e.com/x)"
    assert md.link("l", "ftp://e.com") == "l"


def test_restarts_are_mentioned_and_missing_script_is_stale() -> None:
    log = (
        eval_log() + "\n2026-09-12T10:00:09.0000000Z + vllm serve acme/Foo --tensor-parallel-size 4"
    )
    jobs = {(1, 1): [rest_job(11, EVAL_JOB)], (2, 1): [rest_job(21, EVAL_JOB)]}
    runs = [rest_run(1, "head"), rest_run(2, "older")]
    report = collect_evidence(
        MemoryRunSource(runs, jobs, {11: log, 21: eval_log()}),
        pr_head_sha="head",
        head_branch="feature",
        blob_sha_at=lambda commit, path: "b1" if commit == "older" else None,
        policy=default_rules().policy,
    )
    (cited,) = report.cited()
    assert [launch.line_number for launch in cited.other_launches] == [10]
    (old,) = [e for e in report.evidence if e.run_id == 2]
    assert old.blob.state == "missing-at-pr-head" and old.stale
    section = render_evidence_section(report, hardware_label="MI999", pr_ref="#7")
    assert "The log shows 1 other launch line (lines 10); the one compared is on line 2." in section
    assert (
        "stale: the benchmark script (`benchmarks/single_node/fixed_seq_len/foo_fp8_mi999.sh`) "
        "no longer exists at #7's current head (head)."
    ) in section


def test_a_huge_eval_log_gives_a_bounded_section() -> None:
    header = "|Tasks|Version|Filter|n-shot|Metric|Value|Stderr|\n|---|---|---|---|---|---|---|\n"
    rows = "\n".join(f"|t{i % 50}|3|f{i}|5|exact_match|0.95|0.01|" for i in range(2000))
    passes = "\n".join(
        f"PASS: [conc=1] t{i % 50} exact_match,f{i} = 0.95 (>= 0.9 from default)"
        for i in range(2000)
    )
    log = "+ vllm serve m\n" * 30 + "+ vllm serve n\n" * 30 + header + rows + "\n" + passes
    source = MemoryRunSource([rest_run(1, "head")], {(1, 1): [rest_job(11, EVAL_JOB)]}, {11: log})
    report = collect_evidence(source, pr_head_sha="head", policy=default_rules().policy)
    (cited,) = report.cited()
    assert len(cited.figures) == 2000 and len(cited.other_launches) == 30
    section = render_evidence_section(report, hardware_label="X")
    assert len(section) < 8000
    assert "… and 38 more, all PASS." in section  # 50 task lines, 12 shown
    assert ", and 32 more, all PASS." in section  # 40 filters per task line, 8 shown
    assert "(lines 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, …)" in section
    assert "… 1980 more lines" in section
