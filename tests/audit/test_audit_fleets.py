"""A runner label whose fleets' launchers run the same script differently."""

from __future__ import annotations

from pathlib import Path

from bot.audit import run_audit
from bot.fixtures import SeedFixtures
from bot.rules import default_rules
from bot.sources import DirectorySource, GitTreeSource


def export(source: GitTreeSource, target: Path) -> Path:
    for path in source.iter_files():
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(source.read_bytes(path))
    return target


def test_rows_of_a_label_spanning_fleets_note_the_other_fleets_line(
    seed: SeedFixtures, tmp_path: Path
) -> None:
    bench = export(GitTreeSource(seed.bench_repo, seed.bench_pr_head), tmp_path / "bench")
    runners = bench / "configs/runners.yaml"
    # a DGXC node joins the b200 label: its launcher passes the staged model directory
    runners.write_text(
        runners.read_text().replace(
            "b200: [b200-cw_00, b200-cw_01]", "b200: [b200-cw_00, b200-dgxc_01]"
        )
    )
    report = run_audit(
        DirectorySource(bench, label="bench"),
        GitTreeSource(seed.recipes_repo, seed.recipes_base),
        default_rules(),
    ).report
    rows = [row for row in report.rows if row.config_key == "gptoss-fp4-b200-vllm"]
    assert rows
    for row in rows:
        (note,) = [n for n in row.notes if n.startswith("runner label b200 also runs on")]
        assert "`openai/gpt-oss-120b` → `/lustre/fsw/models/gpt-oss-120b`" in note
        assert "this is the b200-cw line" in note
    # a label with a single fleet carries no such note
    others = [row for row in report.rows if row.runner == "h100-cw"]
    assert others and not any("also runs on" in n for row in others for n in row.notes)
