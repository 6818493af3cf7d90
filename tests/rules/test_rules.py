"""rules/: every file validates, and a deliberate error names file, key, line and reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.errors import InputError
from bot.rules import RULE_FILES, load_rules

RULES = Path(__file__).resolve().parents[2] / "rules"


@pytest.fixture()
def rules_copy(tmp_path: Path) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    return target


def test_bundled_rules_load() -> None:
    rules = load_rules(RULES)
    assert rules.hardware.hardware_for_runner("cluster:mi355x-amds") == "mi355x"
    assert rules.hardware.hardware_for_runner("b200-dgxc") == "b200"
    assert rules.hardware.hardware_for_runner("h200-cw_3") == "h200"
    assert rules.hardware.hardware_for_runner("cluster:unknown-fleet") is None
    assert rules.policy.trigger_label == "recipe-sync"
    assert rules.policy.threshold("gsm8k", "strict-match") == 0.90
    assert rules.env.classify("AIPERF_FAST") is not None
    assert rules.env.classify("AIPERF_FAST")[0] == "benchmark_only"  # type: ignore[index]
    assert rules.env.classify("AITER_TRITON_LOG_LEVEL")[0] == "serving"  # type: ignore[index]
    assert rules.env.classify("SOMETHING_ELSE") is None


# (file, text to replace, replacement, expected key, expected reason fragment)
BROKEN = [
    (
        "hardware.yaml",
        "hardware: mi355x, reason",
        "hardware: mi999, reason",
        "runners.0.hardware",
        "mi999",
    ),
    (
        "hardware.yaml",
        'gpu_token: b200, framework_tagged_first: true, port: "8888"}',
        'gpu_token: b200, framework_tagged_first: true, port: "eighty"}',
        "launchers.b200-cw.port",
        "port must be",
    ),
    (
        "models.yaml",
        "recipe: deepseek-ai/DeepSeek-V4.1-Flash\n",
        "recipe: DeepSeek-V4.1-Flash\n",
        "models.0.recipe",
        "pattern",
    ),
    (
        "flags.yaml",
        'placement: profile, reason: "scheduler',
        'placement: everywhere, reason: "scheduler',
        "tuning.0.placement",
        "profile",
    ),
    (
        "env.yaml",
        '{pattern: "AIPERF_*", reason: "aiperf load generator settings"}',
        '{pattern: "AIPERF_*", reasn: "typo"}',
        "benchmark_only.0.reason",
        "missing",
    ),
    (
        "hardware.yaml",
        "    staged_models:\n      staged_dir: /scratch/models",
        "    model_paths: {acme/fp8: /x}\n    staged_models:\n      staged_dir: /scratch/models",
        "launchers.b300-nv.staged_models",
        "a launcher sets MODEL_PATH by model_paths or staged_models",
    ),
    ("policy.yaml", "max_open: 10", "max_open: 0", "pr.max_open", "greater than or equal to 1"),
    (
        "policy.yaml",
        "trigger_label: recipe-sync",
        "trigger_lable: recipe-sync",
        "trigger_lable",
        "unknown key",
    ),
]


@pytest.mark.parametrize(("name", "old", "new", "key", "reason"), BROKEN)
def test_broken_rule_file_names_file_key_line(
    rules_copy: Path, name: str, old: str, new: str, key: str, reason: str
) -> None:
    path = rules_copy / name
    text = path.read_text()
    assert old in text, f"test setup: {old!r} not in {name}"
    path.write_text(text.replace(old, new, 1))
    expected_line = text[: text.index(old)].count("\n") + 1
    with pytest.raises(InputError) as caught:
        load_rules(rules_copy)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:")
    assert reason in message
    if key:
        assert f"key '{key}'" in message
    # the reported line is where the broken value (or its parent mapping) sits
    reported = caught.value.location.line
    assert reported is not None and abs(reported - expected_line) <= 1, message


def test_malformed_yaml_names_line(rules_copy: Path) -> None:
    path = rules_copy / "policy.yaml"
    path.write_text("trigger_label: recipe-sync\npr: {draft: true\nother: 1\n")
    with pytest.raises(InputError) as caught:
        load_rules(rules_copy)
    assert str(caught.value).startswith(f"{path}:")
    assert "malformed YAML" in str(caught.value)


def test_missing_file_is_an_input_error(rules_copy: Path) -> None:
    (rules_copy / "flags.yaml").unlink()
    with pytest.raises(InputError, match=r"flags\.yaml: cannot read file"):
        load_rules(rules_copy)


def test_rule_files_listed() -> None:
    assert sorted(RULE_FILES) == sorted(
        p.name for p in RULES.glob("*.yaml") if p.name in RULE_FILES
    )


def test_rules_command_validates_every_file_including_vllm_defaults(
    rules_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.commands.main import main

    assert main(["rules", "--rules", str(rules_copy)]) == 0
    assert "vllm-defaults.yaml" in capsys.readouterr().out
    path = rules_copy / "vllm-defaults.yaml"
    text = path.read_text()
    old = 'since: "0.22", value: 0.92'
    assert old in text
    path.write_text(text.replace(old, 'sinse: "0.22", value: 0.92', 1))
    assert main(["rules", "--rules", str(rules_copy)]) == 2
    err = capsys.readouterr().err.strip()
    line = text[: text.index(old)].count("\n") + 1
    assert err.startswith(f"recipe-sync: error: {path}:{line}: key 'defaults.")
    assert err.endswith(".since': required key is missing")
