"""The audit finishes on broken input and reports each problem on the rows it affects."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from bot.audit import AuditReport, run_audit
from bot.audit import run as audit_run
from bot.audit.run import Auditor
from bot.fixtures import SeedFixtures
from bot.rules import default_rules
from bot.sources import DirectorySource, GitTreeSource

SCRIPTS = "benchmarks/single_node/fixed_seq_len"


def export(source: GitTreeSource, target: Path) -> Path:
    for path in source.iter_files():
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(source.read_bytes(path))
    return target


def entry(key: str, *, model: str, runner: str, prefix: str, extra: str = "") -> str:
    return (
        f"\n{key}:\n"
        "  image: vllm/vllm-openai:v0.33.0\n"
        f"  model: {model}\n"
        f"  model-prefix: {prefix}\n"
        f"  runner: {runner}\n"
        "  precision: fp8\n"
        "  framework: vllm\n"
        f"{extra}"
        "  multinode: false\n"
        "  scenarios:\n"
        "    fixed-seq-len:\n"
        "      - isl: 1024\n"
        "        osl: 1024\n"
        "        search-space:\n"
        "          - { tp: 8, conc-list: [4] }\n"
    )


@pytest.fixture(scope="module")
def broken(seed: SeedFixtures, tmp_path_factory: pytest.TempPathFactory) -> AuditReport:
    root = tmp_path_factory.mktemp("broken")
    bench = export(GitTreeSource(seed.bench_repo, seed.bench_pr_head), root / "bench")
    recipes = export(GitTreeSource(seed.recipes_repo, seed.recipes_base), root / "recipes")
    amd = bench / "configs/amd-master.yaml"
    amd.write_text(
        amd.read_text()
        # schema-invalid: no image
        + "\nbad-entry-vllm:\n  model: x/y\n  model-prefix: bad\n  runner: b200\n"
        "  precision: fp8\n  framework: vllm\n  scenarios: {}\n"
        # a script that bash could not parse
        + entry("syntax-fp8-b200-vllm", model="acme/Syntax", runner="b200", prefix="syntax")
        # no script for this prefix
        + entry("missing-fp8-b200-vllm", model="acme/Missing", runner="b200", prefix="missing")
        # a runner label no rule knows
        + entry("tpu-fp8-v9-vllm", model="acme/Tpu", runner="tpu-v9", prefix="tpu")
        # multi-node: not started by a single-node script
        + entry(
            "multi-fp8-gb200-vllm",
            model="acme/Multi",
            runner="gb200",
            prefix="multi",
            extra="  multinode: true\n",
        ).replace("  multinode: false\n", "", 1)
    )
    (bench / SCRIPTS / "syntax_fp8_b200_vllm.sh").write_text(
        "#!/usr/bin/env bash\n"
        'if [ "$TP" = 8 ]; then\n'
        '  vllm serve "$MODEL" --tensor-parallel-size $((\n'
    )
    nvidia = bench / "configs/nvidia-master.yaml"
    # one entry whose YAML does not parse; its neighbours must still be audited
    nvidia.write_text(
        nvidia.read_text().replace(
            "gptoss-fp4-b200-vllm:\n  image: vllm/vllm-openai:latest\n",
            "gptoss-fp4-b200-vllm:\n  image: [vllm/vllm-openai:latest\n",
        )
    )
    (recipes / "models/openai/gpt-oss-120b.yaml").write_text(
        "meta:\n  title: gpt-oss\nmodel: {model_id: [unclosed\n"
    )
    return run_audit(
        DirectorySource(bench, label="bench"),
        DirectorySource(recipes, label="recipes"),
        default_rules(),
    ).report


def statuses(report: AuditReport, key: str) -> set[str]:
    return {row.status_text for row in report.rows if row.config_key == key}


def test_malformed_master_config_entries_become_rows(broken: AuditReport) -> None:
    (text,) = statuses(broken, "bad-entry-vllm")
    assert text.startswith("unresolved (invalid master-config entry: configs/amd-master.yaml:")
    assert "bad-entry-vllm.image" in text and "required key is missing" in text
    (yaml_row,) = [row for row in broken.rows if row.config_key == "gptoss-fp4-b200-vllm"]
    assert yaml_row.status == "unresolved" and "malformed YAML" in yaml_row.reason
    assert "configs/nvidia-master.yaml:" in yaml_row.reason
    assert any("parsed one by one" in w for w in broken.warnings)
    # the other keys of the same file are still audited
    assert statuses(broken, "glm5-fp8-b200-vllm") == {
        "unmapped (no recipe for model zai-org/GLM-5-FP8)"
    }


def test_script_problems_and_unknown_runners_are_reported(broken: AuditReport) -> None:
    (syntax,) = statuses(broken, "syntax-fp8-b200-vllm")
    assert syntax.startswith("unresolved (no vllm launch found: ")
    assert f"{SCRIPTS}/syntax_fp8_b200_vllm.sh:2): shell text that could not be parsed" in syntax
    (missing,) = statuses(broken, "missing-fp8-b200-vllm")
    assert missing.startswith("unmapped (no script: ")
    assert "missing_fp8_b200_vllm.sh" in missing
    (tpu,) = statuses(broken, "tpu-fp8-v9-vllm")
    assert (
        tpu
        == "unmapped (no launcher known for runner label tpu-v9 (rules/hardware.yaml: launchers))"
    )
    multi = [item for item in broken.out_of_scope if item.config_key == "multi-fp8-gb200-vllm"]
    assert [(m.kind, m.reason) for m in multi] == [
        ("multinode", "multi-node vllm: not started by a single-node script")
    ]


def test_a_recipe_that_does_not_load_costs_only_its_rows(broken: AuditReport) -> None:
    gptoss = {row.status_text for row in broken.rows if row.model == "openai/gpt-oss-120b"}
    (h200,) = statuses(broken, "gptoss-fp4-h200-vllm")
    assert h200.startswith("unresolved (models/openai/gpt-oss-120b.yaml does not load: ")
    assert "malformed YAML" in h200
    assert all(text.startswith("unresolved (") for text in gptoss)
    assert statuses(broken, "dsv41flash-fp4-mi355x-vllm-agentic-mtp") == {"drifted (3)"}
    assert any("gpt-oss-120b.yaml does not load" in w for w in broken.warnings)
    assert broken.internal_errors == 0


def test_an_internal_error_is_a_row_and_a_logged_traceback(
    seed: SeedFixtures, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = audit_run.map_profile

    def flaky(recipes, rules, launch):  # type: ignore[no-untyped-def]
        if launch.model == "zai-org/GLM-5-FP8":
            raise ZeroDivisionError("boom")
        return real(recipes, rules, launch)

    monkeypatch.setattr(audit_run, "map_profile", flaky)
    with caplog.at_level(logging.ERROR, logger="recipe_sync.audit"):
        report = run_audit(
            GitTreeSource(seed.bench_repo, seed.bench_pr_head),
            GitTreeSource(seed.recipes_repo, seed.recipes_base),
            default_rules(),
        ).report
    assert statuses(report, "glm5-fp8-b200-vllm") == {
        "unresolved (internal error: ZeroDivisionError: boom)"
    }
    assert report.internal_errors == 2
    assert report.by_status()["drifted"] == 7  # everything else as before
    logged = [r for r in caplog.records if r.exc_info and "glm5-fp8-b200-vllm" in r.getMessage()]
    assert len(logged) == 2 and logged[0].exc_info[0] is ZeroDivisionError  # type: ignore[index]


def test_a_recipes_repository_that_does_not_load(seed: SeedFixtures, tmp_path: Path) -> None:
    recipes = export(GitTreeSource(seed.recipes_repo, seed.recipes_base), tmp_path / "recipes")
    (recipes / "taxonomy.yaml").write_text("hardware_profiles: [\n")
    report = run_audit(
        GitTreeSource(seed.bench_repo, seed.bench_pr_head),
        DirectorySource(recipes, label="recipes"),
        default_rules(),
    ).report
    compared = [row for row in report.rows if row.status in ("aligned", "drifted")]
    assert not compared
    assert any("the recipes repository does not load" in w for w in report.warnings)
    h200 = statuses(report, "gptoss-fp4-h200-vllm")
    assert {t.split(":")[0] for t in h200} == {"unresolved (the recipes repository does not load"}


def test_a_worker_that_dies_costs_no_rows(
    seed: SeedFixtures, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bench = GitTreeSource(seed.bench_repo, seed.bench_pr_head)
    recipes = GitTreeSource(seed.recipes_repo, seed.recipes_base)
    expected = run_audit(bench, recipes, default_rules()).report.to_json()
    parent = os.getpid()
    real = Auditor.audit_key

    def dying(self: Auditor, key: str, progress: object = None) -> object:
        if os.getpid() != parent and key == "glm5-fp8-b200-vllm":
            os._exit(3)  # a worker killed mid-task (out of memory, a signal)
        return real(self, key, progress)  # type: ignore[arg-type]

    monkeypatch.setattr(Auditor, "audit_key", dying)
    with caplog.at_level(logging.ERROR, logger="recipe_sync.audit"):
        run = run_audit(
            GitTreeSource(seed.bench_repo, seed.bench_pr_head), recipes, default_rules(), jobs=2
        )
    assert run.workers == 2
    assert run.report.to_json() == expected
    assert any("a worker process died" in r.getMessage() for r in caplog.records)
