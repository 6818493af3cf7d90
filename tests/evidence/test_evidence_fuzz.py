"""The log parsers take arbitrary text from a PR's job logs: they must never raise."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.evidence.collect import collect_evidence
from bot.evidence.jobname import parse_job_name
from bot.evidence.launch import find_launch_lines, launch_context, preferred_launch, server_ready
from bot.evidence.lmeval import parse_eval_tables, parse_verdicts
from bot.evidence.logtext import log_lines
from bot.rules import default_rules
from tests.evidence.conftest import EVAL_JOB, MemoryRunSource, rest_job, rest_run

# fragments of the formats, so the fuzzer reaches deep into each parser
_FRAGMENTS = [
    "+ vllm serve ",
    "++ env A=1 vllm serve m ",
    "vllm serve ",
    "'",
    "'\\''",
    "$'\\x4",
    "$'\\u12",
    "$'\\c",
    '"',
    "\\",
    " --speculative-config ",
    '{"rejection_sample_method":"synthetic"}',
    "|Tasks|Version|Filter|n-shot|Metric|Value|Stderr|\n|---|--:|---|--:|---|--:|--:|\n",
    "|gsm8k|3|strict-match|5|exact_match|0.9|±|",
    "|     |   |",
    "num_concurrent=",
    "PASS: [conc=",
    "FAIL: ",
    "] gsm8k exact_match,strict-match = ",
    " (>= 0.9 from default)",
    "2026-09-12T10:31:07.1234567Z ",
    "\x1b[1;36m",
    "\x1b",
    "\n",
    "\r",
    "\ufeff",
    "+ srun bash benchmarks/x.sh --container-image",
    "agentic eval / p40 | ",
    "foo fp8 cluster:x vllm TP4/EP8/DPA mtp dram KV offload c8x16",
    " | eval-only",
    "1P (TP4) x 2D",
]
_logs = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=5)), max_size=40).map("".join),
)


@settings(max_examples=300, deadline=None)
@given(_logs)
def test_log_parsers_never_raise(log: str) -> None:
    lines = log_lines(log)
    launches = find_launch_lines(lines)
    preferred_launch(launches)
    launch_context(lines)
    server_ready(lines)
    parse_eval_tables(lines)
    parse_verdicts(lines)
    parse_job_name(log)


@settings(max_examples=60, deadline=None)
@given(_logs, _logs)
def test_collecting_arbitrary_logs_and_names_never_raises(log: str, name: str) -> None:
    jobs = {(1, 1): [rest_job(11, EVAL_JOB), rest_job(12, name)]}
    source = MemoryRunSource([rest_run(1, "head")], jobs, {11: log, 12: log})
    collect_evidence(source, pr_head_sha="head", policy=default_rules().policy)


def test_malformed_rest_fields_do_not_crash() -> None:
    runs = [
        {"id": "x", "head_sha": "head"},  # no integer id: ignored
        {"id": 2, "head_sha": "head", "run_attempt": "two", "pull_requests": "bad"},
        {"id": 3, "head_sha": "head", "run_attempt": 10**9, "pull_requests": [None, 5]},
    ]
    jobs = {(2, 1): [{"name": EVAL_JOB}, {"id": 9, "name": None}, {"id": 8, "name": EVAL_JOB}]}
    source = MemoryRunSource(runs, jobs, {8: "x"})  # type: ignore[arg-type]
    report = collect_evidence(
        source, pr_head_sha="head", pr_number=7, policy=default_rules().policy
    )
    assert [run.run_id for run in report.runs] == [3, 2]
    assert report.runs[0].latest_attempt == 50  # capped
    assert [e.job_id for e in report.evidence] == [0, 8]
