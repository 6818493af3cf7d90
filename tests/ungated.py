"""The planner's mechanics without its judgement gate.

Most alignment tests check *where* an edit goes and what its texts say, on cases built to
have one; whether maintainers would take it is ``bot.align.confidence``'s question, tested
on its own and by the seed's goldens with the bundled rules. These tests plan with policy
``propose_above: 0``: every candidate goes into the diff."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

from bot.rules import Rules, default_rules_dir


def ungated(rules: Rules) -> Rules:
    return replace(rules, policy=rules.policy.model_copy(update={"propose_above": 0.0}))


def ungated_rules_dir(target: Path, *, always: bool = False) -> Path:
    """A copy of the bundled rules with ``propose_above: 0`` (made once per directory);
    ``always``: reproduction blocks without a recipe edit too (policy ``reproduction``)."""
    rules = target / ("rules-always" if always else "rules")
    if not rules.exists():
        shutil.copytree(default_rules_dir(), rules)
        policy = rules / "policy.yaml"
        text = _setting(policy.read_text(), "propose_above", "0.0")
        if always:
            text = _setting(text, "reproduction", "always")
        policy.write_text(text)
    return rules


def _setting(text: str, key: str, value: str) -> str:
    changed, count = re.subn(rf"^{key}: \S+", f"{key}: {value}", text, flags=re.M)
    assert count == 1, f"rules/policy.yaml has no {key} line"
    return changed
