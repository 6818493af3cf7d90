"""The change table (issue #35 item 5): what the alignment PR changes, old → new, at the top
of the body, and the same rows in the reviewer comment, whose status counts what the PR
holds in the CLI's words."""

from __future__ import annotations

import json
from dataclasses import replace

from bot.align.result import AlignRun
from bot.align.run import empty_plan
from bot.commands.align import summary_lines
from bot.present import present
from bot.present.pr_text import body, pr_contents
from bot.present.report import comment
from bot.present.sections.changes import HEAD, _unedited_row, change_rows
from bot.present.sections.values import SummaryContext
from bot.vllm import FlagDiff, Verdict
from tests.planned import planned_edit


def _table(text: str, after: str = "") -> list[str]:
    start = text.index(HEAD[0], text.index(after) if after else 0)
    return text[start:].split("\n\n", 1)[0].splitlines()


def _context(run: AlignRun) -> SummaryContext:
    (outcome,) = run.patches
    return SummaryContext(run.names, run.inputs.rules, outcome.plan, outcome.matrix)


def test_the_body_opens_its_summary_with_old_and_new_values(seed_run: AlignRun) -> None:
    (outcome,) = seed_run.patches
    text = body(seed_run, outcome)
    summary = text.split("### Summary\n\n", 1)[1]
    assert summary.startswith(HEAD[0])  # before any bullet
    assert _table(summary)[2:] == [
        "| image | MI355X only | `deepseekv41-flash-0909` | `nightly-eed1f3d0c604` |",
        "| `--moe-backend` | MI355X + single_node_tp only | `aiter_triton_mxfp4_bf16` | `aiter` |",
    ]
    # the table says what each setting was: no bullet repeats it as "instead of …"
    bullets = [line for line in summary.split("\n\n", 2)[1].splitlines() if line.startswith("-")]
    assert bullets and not [b for b in bullets if "instead of" in b], bullets


def test_the_comment_shows_the_same_rows_and_what_the_pr_leaves(seed_run: AlignRun) -> None:
    rows = [row.line() for row in change_rows(_context(seed_run))]
    table = _table(comment(seed_run), after="####")
    assert table[2 : 2 + len(rows)] == rows  # one function: the body's rows, in its order
    # then the differences the PR does not edit: the log level is offered, not written
    assert table[2 + len(rows) :] == [
        "| `AITER_TRITON_LOG_LEVEL` | not edited: offered, not proposed | — | `ERROR` |"
    ]


def test_the_status_counts_what_the_pr_holds_as_the_cli_says_it(seed_run: AlignRun) -> None:
    """Was "3 differences: alignment PR proposed" beside 2 edited differences, 1 offered
    and 3 edits (one a verification): the status says how many differences the PR edits
    and what it holds in pr_contents' words, as the CLI's summary does."""
    (outcome,) = seed_run.patches
    texts = present(seed_run)
    holds = pr_contents(outcome)
    assert holds == "3 edits and 1 guide section"
    assert f"| 3 differences, 2 edited: alignment PR with {holds} |" in texts.comment
    edited = [row for row in _table(texts.comment, after="####")[2:] if "not edited" not in row]
    assert len(edited) == 2
    cli = "\n".join(summary_lines(seed_run, texts, []))
    assert f"{outcome.recipe_path}: alignment PR ({holds}, +" in cli


def test_a_field_offered_inside_its_flags_json_reads_offered() -> None:
    """InferenceX #2476: the offer is the whole `--attention-config {…}` for the GPU, the row
    is its field: it read "not edited" as if nothing waited to be ticked."""
    node = "strategy_overrides.single_node_tp.hardware_overrides.b300.extra_args"
    whole = '{"use_prefill_query_quantization":true,"mla_prefill_backend":"flashinfer"}'
    offer = planned_edit(
        "flag-new", "--attention-config", node, None, f"--attention-config {whole}", "t"
    )
    plan = replace(empty_plan("models/x/M.yaml"), offered=(offer,))
    field = "--attention-config.mla_prefill_backend"
    diff = FlagDiff(
        "flag", "attention_config.mla_prefill_backend", field, Verdict.DIFFERS, "flashinfer",
        None, (field, "flashinfer"), (), "", "engine",
    )  # fmt: skip
    assert _unedited_row(plan, diff).line() == (
        f"| `{field}` | not edited: offered, not proposed | — | `flashinfer` |"
    )
    other = replace(diff, flag="--attention-config.backend", bench_value="FLASHINFER")
    assert "| not edited |" in _unedited_row(plan, other).line()  # not in the offered JSON


def test_a_row_shows_the_value_a_tick_writes_without_synthetic_keys() -> None:
    """InferenceX #2522: the row's new `--speculative-config` held the throughput arms'
    synthetic acceptance keys, the offer beside it (what a tick writes) did not."""
    plan = empty_plan("models/x/M.yaml")
    ran = {"method": "mtp", "num_speculative_tokens": 3, "rejection_sample_method": "synthetic"}
    diff = FlagDiff(
        "flag", "speculative_config", "--speculative-config", Verdict.DIFFERS, ran,
        {"method": "mtp", "num_speculative_tokens": 2},
        ("--speculative-config", json.dumps(ran)),
        ("--speculative-config", '{"method":"mtp","num_speculative_tokens":2}'),
        "", "engine", benchmark_only_keys=("rejection_sample_method",),
    )  # fmt: skip
    row = _unedited_row(plan, diff).line()
    assert row.endswith('| `{"method":"mtp","num_speculative_tokens":3}` |'), row
    assert "synthetic" not in row
