"""Chat-client features only the recipe sets (rules/knobs.yaml ``recipe_features``) are
listed, never counted as drift; a value the benchmark sets differently still is."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bot.align.compare import Comparison, knob_classes, recipe_feature_keys
from bot.audit.run import judge
from bot.errors import InputError
from bot.rules import default_rules, load_rules
from bot.vllm import FlagDiff, Verdict

RULES = Path(__file__).resolve().parents[2] / "rules"


def diff(flag: str, key: str, verdict: Verdict, bench: Any, recipe: Any) -> FlagDiff:
    return FlagDiff(
        kind="flag",
        key=key,
        flag=flag,
        verdict=verdict,
        bench_value=bench,
        recipe_value=recipe,
        bench_tokens=(flag, str(bench)) if bench is not None else (),
        recipe_tokens=(flag, str(recipe)) if recipe is not None else (),
        reason="only the recipe sets it" if bench is None else "the values differ",
        category="api",
    )


def comparison(*diffs: FlagDiff) -> Comparison:
    """A comparison of these differences (the launch and profile play no part in judging)."""
    rules = default_rules()
    report: Any = SimpleNamespace(diffs=diffs)
    rendering: Any = SimpleNamespace(
        image_origin="models/x.yaml", recipe_path="models/x.yaml", commands=()
    )
    return Comparison(
        launch=None,  # type: ignore[arg-type]
        profile=None,  # type: ignore[arg-type]
        rendering=rendering,
        report=report,
        classes=knob_classes(rules, report),
        features=recipe_feature_keys(rules, report),
    )


PARSER = diff(
    "--tool-call-parser", "api.tool_call_parser", Verdict.RECIPE_ONLY, None, "deepseek_v4"
)
AUTO = diff(
    "--enable-auto-tool-choice", "api.enable_auto_tool_choice", Verdict.RECIPE_ONLY, None, True
)
REASONING = diff(
    "--reasoning-parser",
    "structured_outputs.reasoning_parser",
    Verdict.RECIPE_ONLY,
    None,
    "deepseek_v4",
)
TRUST = diff("--trust-remote-code", "model.trust_remote_code", Verdict.RECIPE_ONLY, None, True)


def test_recipe_only_chat_features_are_listed_not_counted() -> None:
    compared = judge(comparison(PARSER, AUTO, REASONING))
    assert compared.status == "aligned"
    assert [(f.flag, f.drift, f.recipe_feature) for f in compared.flags] == [
        ("--tool-call-parser", False, True),
        ("--enable-auto-tool-choice", False, True),
        ("--reasoning-parser", False, True),
    ]
    assert all("recipe_features" in f.reason for f in compared.flags)


def test_a_differing_parser_and_other_recipe_only_serving_flags_still_drift() -> None:
    other = diff(
        "--tool-call-parser", "api.tool_call_parser", Verdict.DIFFERS, "hermes", "deepseek_v4"
    )
    compared = judge(comparison(other, TRUST))
    assert compared.status == "drifted"
    assert [(f.flag, f.drift, f.recipe_feature) for f in compared.flags] == [
        ("--tool-call-parser", True, False),
        ("--trust-remote-code", True, False),  # serving, but not a chat-client feature
    ]


def test_recipe_features_are_listed_in_the_canonical_spelling(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    for path in RULES.iterdir():
        text = path.read_text(encoding="utf-8")
        if path.name == "knobs.yaml":
            text = text.replace("- {flag: --reasoning-parser,", "- {flag: --no-reasoning-parser,")
        (rules / path.name).write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="--reasoning-parser"):
        load_rules(rules)
    assert default_rules().knobs.recipe_feature("--tool_call_parser=x") is not None
    assert default_rules().knobs.recipe_feature("--trust-remote-code") is None
