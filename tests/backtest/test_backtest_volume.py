"""What an alignment PR would write, recorded per row: lines added, reproduction sections and
their length, candidates offered as checkboxes; and the volume a backtest reports."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from bot.align.result import AlignRun
from bot.backtest.formats import to_json, to_markdown
from bot.backtest.launches import added_lines, guide_sections
from bot.backtest.model import BacktestReport, EditRow, GuideSection, PRRow, Volume

PATCH = """--- a/models/x/M.yaml
+++ b/models/x/M.yaml
@@ -1,3 +1,4 @@
 model:
-  a: 1
+  a: 2
+  b: 3
"""
RECIPE = """model:
  hf_id: org/M
guide: |
  ## Serving
  <!-- recipe-sync:reproduction mxfp8.mi355x.agentic -->
  ### Benchmark reproduction
  vllm serve org/M
  <!-- /recipe-sync -->
  ## Troubleshooting
"""


def _outcome(status: str, action: str) -> SimpleNamespace:
    section = SimpleNamespace(block_id="mxfp8.mi355x.agentic")
    return SimpleNamespace(
        status=status,
        recipe_path="models/x/M.yaml",
        new_text=RECIPE.encode(),
        guide=(SimpleNamespace(section=section, action=action),),
    )


def test_a_patch_counts_its_added_lines_not_its_file_headers() -> None:
    assert added_lines(PATCH) == 2
    assert added_lines("") == 0


def test_a_written_section_records_its_block_length_markers_included() -> None:
    run = cast(AlignRun, SimpleNamespace(outcomes=(_outcome("patch", "inserted"),)))
    assert guide_sections(run) == (
        GuideSection("models/x/M.yaml", "mxfp8.mi355x.agentic", "inserted", 4),
    )
    # a section the PR leaves as it is, or a recipe with no patch, writes nothing
    kept = cast(AlignRun, SimpleNamespace(outcomes=(_outcome("patch", "unchanged"),)))
    assert guide_sections(kept)[0].lines == 0
    aligned = cast(AlignRun, SimpleNamespace(outcomes=(_outcome("aligned", "inserted"),)))
    assert guide_sections(aligned)[0].lines == 0


def _row(number: int, outcome: str, **extra: object) -> PRRow:
    base = PRRow(number, "s", "b", "2030-01-02", "t", "r", outcome, "why")
    return PRRow(**{**base.__dict__, **extra})  # type: ignore[arg-type]


def test_volume_counts_prs_guide_only_prs_sections_and_lines() -> None:
    edit = EditRow("models/x/M.yaml", "env-new", "X", "a.extra_env.X", None, "1", ("mi355x",))
    section = GuideSection("models/x/M.yaml", "mxfp8.mi355x.agentic", "inserted", 40)
    rows = (
        _row(1, "alignment PR", edits=(edit,), added_lines=12),
        _row(2, "alignment PR", guide=(section, section), added_lines=90),  # guide-only
        _row(3, "aligned", guide=(section,), added_lines=0),  # opens no PR: not counted
        _row(4, "alignment PR", edits=(edit,), offered=(edit, edit), added_lines=5),
    )
    volume = Volume.of(rows)
    assert volume == Volume(
        prs=3,
        guide_only=1,
        edits=2,
        offered=2,
        sections=2,
        guide_lines=80,
        added_lines=107,
        max_added=90,
        max_pr=2,
    )
    report = BacktestReport("bench", "recipes", rows)
    # the summary keeps its start (older parsers read it) and ends with the volume
    assert report.summary() == (
        "4 merged PRs: 3 alignment PR, 1 aligned; 0 errors; 0 with notes; volume: "
        "3 alignment PRs (1 guide-only), 2 YAML edits, 2 offered, 2 reproduction sections "
        "(80 lines), 107 lines added (max 90, #2)"
    )
    assert '"guide_only": 1' in to_json(report)
    assert "  - adds 90 lines; reproduction sections:" in to_markdown(report)


def test_rows_round_trip_through_json_with_the_new_fields() -> None:
    edit = EditRow("m.yaml", "env-new", "X", "a.extra_env.X", None, "1", ("b200",), ("fp8",))
    row = _row(1, "alignment PR", edits=(edit,), offered=(edit,), added_lines=3,
               guide=(GuideSection("m.yaml", "fp8.b200.x", "inserted", 9),))  # fmt: skip
    assert PRRow.from_json(row.to_json()) == row
    # a row from an older cache reads with empty lanes
    old = row.to_json()
    for data in old["edits"]:
        del data["hardware"], data["variants"], data["strategies"]
    assert PRRow.from_json(old).edits[0].hardware == ()
