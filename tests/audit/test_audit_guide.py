"""Guide-command drift in the audit: the rows, the Markdown summary, the HTML column and
filter, on the Widget fixture (a hand-written reproduction section whose command drifted)."""

from __future__ import annotations

from pathlib import Path

from bot.audit import AuditReport, render_html, render_markdown
from bot.audit.run import run_audit
from bot.rules import load_rules
from bot.sources import DirectorySource
from tests.align.reproduction_fixture import (
    TP4_KEY,
    WIDGET,
    build,
    guide_with_hand_written_section,
)


def _report(tmp: Path) -> AuditReport:
    bench, recipes = build(tmp, guide_with_hand_written_section())
    return run_audit(DirectorySource(bench), DirectorySource(recipes), load_rules()).report


def test_rows_of_the_documented_profile_carry_the_guide_drift(tmp_path: Path) -> None:
    report = _report(tmp_path)
    rows = [r for r in report.rows if r.config_key == TP4_KEY]
    assert rows and all(r.guide_status == "drifted" for r in rows)
    guide = rows[0].guide[0]
    assert guide.recipe == WIDGET and guide.cites_benchmark and not guide.managed
    assert guide.heading.endswith("Benchmark reproduction (InferenceX MI355X sweep)")
    assert {f.flag for f in guide.drift} >= {"--kv-cache-dtype", "--max-num-seqs"}
    assert set(guide.not_compared) == {"--port", "--max-model-len"}
    # the agentic lane runs DP8 / TP8: the TP4 guide command does not document it, and the
    # TP8 command's heading names MI355X but no TP8 point of the fixed lane exists
    others = [r for r in report.rows if r.config_key != TP4_KEY and r.profile]
    assert all(not g.cites_benchmark for r in others for g in r.guide)
    assert report.guide_commands()["drifted_citing_benchmark"] == 1
    assert report.to_json()["summary"]["guide_commands"]["drifted_citing_benchmark"] == 1


def test_markdown_and_html_show_guide_drift_with_a_filter(tmp_path: Path) -> None:
    report = _report(tmp_path)
    text = render_markdown(report)
    assert "### Guide commands" in text
    assert "1 of them in hand-written sections that cite the benchmark" in text
    line = next(x for x in text.splitlines() if x.startswith(f"| `{WIDGET}:"))
    assert "(cites the benchmark)" in line and "`--kv-cache-dtype`: `fp8` (benchmark)" in line
    page = render_html(report)
    # the drifted guide command sits with its launch line's entry, with what differs
    assert "cites the benchmark" in page and " vs guide " in page
    assert "<select id=filter-guide>" in page
    assert "data-guide='drifted'" in page and "data-guide='none'" in page
    assert "id=guide-summary" in page


def test_a_guide_command_may_offer_chat_clients_parsers(tmp_path: Path) -> None:
    """A recipe-only reasoning/tool-call parser in a guide command is not guide drift
    (rules/knobs.yaml recipe_features); the section's other differences still are."""
    section = guide_with_hand_written_section().replace(
        "    --moe-backend aiter \\\n    --max-num-seqs 256",
        "    --moe-backend aiter \\\n    --reasoning-parser widget \\\n"
        "    --tool-call-parser widget \\\n    --enable-auto-tool-choice \\\n"
        "    --max-num-seqs 256",
    )
    assert "--reasoning-parser widget" in section
    bench, recipes = build(tmp_path, section)
    report = run_audit(DirectorySource(bench), DirectorySource(recipes), load_rules()).report
    guide = next(r for r in report.rows if r.config_key == TP4_KEY).guide[0]
    flags = {f.flag for f in guide.drift}
    assert {"--kv-cache-dtype", "--max-num-seqs"} <= flags
    assert not flags & {"--reasoning-parser", "--tool-call-parser", "--enable-auto-tool-choice"}
