"""The committed practice file (rules/practice.yaml, which the engine's adoption estimates
read): computed by `recipe-sync score --practice` from the first half of July only, with the
recipes history read to that day and every candidate scored (propose_above 0)."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.rules.practice import PracticeRules

FILE = Path(__file__).resolve().parents[2] / "rules" / "practice.yaml"


def test_the_practice_file_says_how_it_was_made_and_loads_as_rules() -> None:
    text = FILE.read_text(encoding="utf-8")
    header = [line for line in text.splitlines() if line.startswith("#")]
    command = header[-1].removeprefix("#").strip()
    assert command.startswith("recipe-sync score ")
    for part in ("--since 2026-07-01", "--until 2026-07-15", "--history-until 2026-07-15",
                 "--rules RULES (propose_above: 0)", "--practice rules/practice.yaml"):  # fmt: skip
        assert part in command, part
    assert "--loose" not in command and "--split" not in command
    assert any("never edited by hand" in line for line in header)
    rules = PracticeRules.model_validate(yaml.safe_load(text))
    assert rules.source.startswith("benchmark PRs merged 2026-07-01 … 2026-07-15")
    assert "recipes main to 2026-07-15" in rules.source
    assert rules.classes and all(c.adopted <= c.proposed for c in rules.classes.values())
    assert rules.kinds and all(k.adopted <= k.proposed for k in rules.kinds.values())
