from __future__ import annotations

from pathlib import Path

from bot.evidence.lmeval import EvalRow, EvalVerdict, parse_eval_tables, parse_verdicts
from tests.evidence.conftest import FIXTURE_LOGS


def test_seed_eval_table_and_pass_lines(seed_dir: Path) -> None:
    log = (seed_dir / "logs" / "97311840107.txt").read_text()
    rows = parse_eval_tables(log)
    assert [
        (r.task, r.version, r.filter, r.n_shot, r.metric, r.value, r.stderr, r.conc) for r in rows
    ] == [
        ("gsm8k", "3", "flexible-extract", 5, "exact_match", 0.9682, 0.0048, 32),
        ("gsm8k", "3", "strict-match", 5, "exact_match", 0.9689, 0.0048, 32),
    ]
    verdicts = parse_verdicts(log)
    assert [
        (v.passed, v.conc, v.task, v.metric, v.filter, v.value, v.threshold, v.source)
        for v in verdicts
    ] == [
        (True, 32, "gsm8k", "exact_match", "strict-match", 0.9689, 0.9, "default"),
        (True, 32, "gsm8k", "exact_match", "flexible-extract", 0.9682, 0.9, "default"),
    ]
    assert verdicts[0].text == (
        "PASS: [conc=32] gsm8k exact_match,strict-match = 0.9689 (>= 0.9 from default)"
    )


def test_old_table_without_plus_minus_column_and_batched_concurrencies() -> None:
    log = (FIXTURE_LOGS / "xtrace-fixed-seq-len.txt").read_text()
    rows = parse_eval_tables(log)
    assert [(r.filter, r.value, r.stderr, r.conc) for r in rows] == [
        ("strict-match", 0.8812, 0.0089, 64),
        ("flexible-extract", 0.8870, 0.0087, 64),
        ("flexible-extract", 0.8901, None, 128),  # stderr N/A
        ("strict-match", 0.8855, 0.0088, 128),
    ]
    assert all(r.task == "gsm8k" and r.n_shot == 5 and r.version == "3" for r in rows)


def test_fail_lines_and_sources() -> None:
    verdicts = parse_verdicts((FIXTURE_LOGS / "xtrace-fixed-seq-len.txt").read_text())
    assert [(v.passed, v.conc, v.filter, v.value, v.threshold, v.source) for v in verdicts] == [
        (False, 64, "strict-match", 0.8812, 0.9, "models.foo"),
        (False, 64, "flexible-extract", 0.8870, 0.9, "models.foo"),
        (False, 128, "strict-match", 0.8855, 0.9, "models.foo"),
        (True, 128, "flexible-extract", 0.8901, 0.88, "min-score"),
    ]


def test_groups_tables_blank_cells_and_noise() -> None:
    log = "\n".join(
        [
            "| not | a | table |",
            "|Groups|Version|Filter|n-shot|Metric|   |Value |   |Stderr|",
            "|------|------:|------|-----:|------|---|-----:|---|-----:|",
            "|mmlu  |      2|none  |      |acc   |↑  |0.7012|±  |0.0037|",
            "| - stem|     2|none  |     0|acc   |↑  |0.6500|±  |0.0080|",
            "|      |       |none  |      |acc_norm|↑|0.6600|±  |0.0081|",
            "|broken|row|",
            "after the table",
            "PASS: gsm8k exact_match,strict-match = 0.91 (>= 0.9 from default)",
            "note: PASS: [conc=1] gsm8k exact_match,strict-match = 0.91 (>= 0.9 from default)",
            "FAIL: [conc=1] gsm8k exact_match,strict-match = nan (< 0.9 from default)",
        ]
    )
    rows = parse_eval_tables(log)
    assert rows == (
        EvalRow("mmlu", "2", "none", None, "acc", 0.7012, 0.0037, None, 4),
        EvalRow("stem", "2", "none", 0, "acc", 0.65, 0.008, None, 5),
        EvalRow("stem", "2", "none", 0, "acc_norm", 0.66, 0.0081, None, 6),
    )
    verdicts = parse_verdicts(log)
    # no [conc=] is accepted; prose prefixes and non-numbers are not
    assert verdicts == (
        EvalVerdict(
            passed=True,
            conc=None,
            task="gsm8k",
            metric="exact_match",
            filter="strict-match",
            value=0.91,
            threshold=0.9,
            source="default",
            line_number=9,
            text="PASS: gsm8k exact_match,strict-match = 0.91 (>= 0.9 from default)",
        ),
    )


def test_a_header_inside_a_table_starts_the_next_table() -> None:
    header = "|Tasks|Version|Filter|n-shot|Metric|Value|Stderr|"
    separator = "|-----|------:|------|-----:|------|----:|-----:|"
    log = "\n".join(
        [
            header,
            separator,
            "|gsm8k|3|strict-match|5|exact_match|0.91|0.01|",
            "lm-eval echo: num_concurrent=8 (ends the first table, applies to the next)",
            header,
            separator,
            "|     | |flexible-extract|5|exact_match|0.92|0.01|",  # no task above it: skipped
            "|mmlu|1|none|0|acc|0.70|0.02|",
        ]
    )
    rows = parse_eval_tables(log)
    assert [(r.task, r.filter, r.value, r.conc, r.line_number) for r in rows] == [
        ("gsm8k", "strict-match", 0.91, None, 3),
        ("mmlu", "none", 0.70, 8, 8),
    ]
