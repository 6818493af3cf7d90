"""One recipe change, one alignment PR: a replay whose YAML edits of a recipe file equal an
earlier replay's (whose proposal its recipes main still lacks) is a duplicate, left out of
the volume, as the App opens no second PR for it (bot/service/pulls.py)."""

from __future__ import annotations

import json

from bot.backtest.formats import to_json, to_markdown
from bot.backtest.model import (
    BacktestReport,
    EditRow,
    GuideSection,
    PRRow,
    Volume,
    mark_duplicates,
)

M3 = "models/MiniMaxAI/MiniMax-M3.yaml"
R1 = "models/deepseek-ai/DeepSeek-R1.yaml"
VARIANT = EditRow(M3, "variant", "nvfp4", "variants.nvfp4", None, "{quant: nvfp4}", ("b200",))
TRUST = EditRow(M3, "flag-new", "--trust-remote-code", "variants.nvfp4.args", None, "true")
ENV = EditRow(M3, "env-new", "VLLM_FLOAT32_MATMUL_PRECISION", "env.X", None, "high")
OTHER = EditRow(R1, "flag", "--max-num-seqs", "extra_args[3]", "128", "256")


def _row(number: int, edits: tuple[EditRow, ...], lines: int, **extra: object) -> PRRow:
    files = tuple(dict.fromkeys(e.recipe for e in edits))
    base = PRRow(number, "s", "b", "2026-06-26", "t", "r", "alignment PR", "why", files=files)
    return PRRow(**{**base.__dict__, "edits": edits, "added_lines": lines, **extra})  # type: ignore[arg-type]


def test_equal_edits_of_a_later_pr_are_counted_once() -> None:
    section = GuideSection(M3, "b200", "inserted", 30)
    rows = mark_duplicates(
        (
            _row(1928, (VARIANT, TRUST, ENV), 40, guide=(section,)),
            # the same set in another order, another guide section: the same recipe change
            _row(1929, (ENV, VARIANT, TRUST), 45, guide=(section,)),
            _row(1932, (VARIANT, TRUST), 20),  # fewer edits: another change, its own PR
            _row(1933, (VARIANT, TRUST, ENV, OTHER), 50),  # R1's change is new
        )
    )
    assert [r.duplicate_of for r in rows] == [(), ((M3, 1928),), (), ((M3, 1928),)]
    assert [r.duplicate for r in rows] == [False, True, False, False]

    volume = Volume.of(rows)
    assert (volume.prs, volume.duplicates, volume.edits, volume.sections) == (3, 1, 6, 1)
    assert volume.added_lines == 40 + 20 + 50  # #1929 not counted
    assert volume.text().startswith(
        "3 alignment PRs (0 guide-only; 1 more repeat an open one's recipe change, not "
        "counted), 6 YAML edits"
    )
    # an older report (rows without the mark) counts every row, as before
    unmarked = [PRRow.from_json({**r.to_json(), "duplicate_of": {}}) for r in rows]
    assert Volume.of(unmarked).prs == 4 and Volume.of(unmarked).duplicates == 0


def test_the_mark_is_an_optional_json_field() -> None:
    first, second = mark_duplicates((_row(1, (OTHER,), 1), _row(2, (OTHER,), 1)))
    assert "duplicate_of" not in first.to_json()  # rows without it read as before
    assert second.to_json()["duplicate_of"] == {R1: 1}
    assert PRRow.from_json(json.loads(json.dumps(second.to_json()))) == second
    report = BacktestReport("bench", "recipes", (first, second))
    assert json.loads(to_json(report))["volume"]["duplicates"] == 1
    assert f"  - duplicate: `{R1}` already proposed by #1's open alignment PR" in to_markdown(
        report
    )


def test_rows_that_open_no_pr_and_guide_only_changes_are_never_duplicates() -> None:
    aligned = PRRow(3, "s", "b", "d", "t", "r", "aligned", "why", edits=(OTHER,))
    guide_only = _row(4, (), 9, files=(R1,))
    rows = mark_duplicates((_row(1, (OTHER,), 1), aligned, guide_only, _row(5, (), 9, files=(R1,))))
    assert [r.duplicate_of for r in rows] == [(), (), (), ()]
