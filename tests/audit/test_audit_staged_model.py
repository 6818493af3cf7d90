"""A launcher that stages the model in a directory chosen on the node: the served model is the
config's, the model argument a staged copy of it (a note), never an unresolved row."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bot.audit import run_audit
from bot.fixtures import SeedFixtures
from bot.rules import default_rules
from bot.sources import DirectorySource, GitTreeSource
from tests.audit.test_audit_fleets import export


def test_a_launcher_staged_model_is_the_configs_model(seed: SeedFixtures, tmp_path: Path) -> None:
    bench = export(GitTreeSource(seed.bench_repo, seed.bench_pr_head), tmp_path / "bench")
    runners = bench / "configs/runners.yaml"
    runners.write_text(
        runners.read_text().replace("b200: [b200-cw_00, b200-cw_01]", "b200: [b200-dgxc_01]")
    )
    rules = default_rules()
    launchers = dict(rules.hardware.launchers)
    dgxc = launchers["b200-dgxc"]
    # the launcher probes candidate directories for this checkpoint on the node
    launchers["b200-dgxc"] = dgxc.model_copy(
        update={"model_paths": {**dgxc.model_paths, "gptoss/fp4": "opaque"}}
    )
    rules = replace(rules, hardware=rules.hardware.model_copy(update={"launchers": launchers}))
    report = run_audit(
        DirectorySource(bench, label="bench"),
        GitTreeSource(seed.recipes_repo, seed.recipes_base),
        rules,
    ).report
    rows = [row for row in report.rows if row.config_key == "gptoss-fp4-b200-vllm"]
    assert rows
    for row in rows:
        assert row.status != "unresolved", row.reason
        assert any(
            n.startswith("the model argument is the launcher's staged copy of openai/gpt-oss-120b")
            for n in row.notes
        )
        model = [f for f in row.flags if f.flag == "model"]
        assert all(f.verdict == "same" for f in model)
