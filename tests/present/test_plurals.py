"""What people read says "1 model", "2 edits": never "model(s)" or "1 models" (issue #35
item 5). The seed's texts carried "1 models", "1 offered setting and their history" and
"3 run(s) or job(s)"; the guide-only PR's CLI line said "0 edits"."""

from __future__ import annotations

import re
from pathlib import Path

from bot.align.result import RecipeOutcome
from bot.present.pr_text import pr_contents
from tests.align.reproduction_fixture import TP4_KEY, WIDGET, build, run

# "1 <noun>s": a plural after one (the words of the texts that end in s but are singular
# are listed: "1 represents" is a status count, "1 class" a knob class)
ONE_PLURAL = re.compile(r"(?<![\d.,])\b1 ((?!represents\b|class\b|process\b)[a-z-]+s)\b")


def _defects(text: str) -> list[str]:
    return re.findall(r"\w+\(s\)", text) + ONE_PLURAL.findall(text)


def test_the_rule_finds_the_old_defects() -> None:
    old = "1 models (1 with x); 1 offered setting; Not cited: 3 run(s) or job(s); 1 affected key(s)"
    assert _defects(old) == ["run(s)", "job(s)", "key(s)", "models"]


def test_the_seed_texts_have_real_plurals(seed_out: Path) -> None:
    for name in ("pr-body.md", "comment.md"):
        text = (seed_out / name).read_text(encoding="utf-8")
        assert _defects(text) == [], name
    body = (seed_out / "pr-body.md").read_text(encoding="utf-8")
    assert "1 model (1 with `recommended_command`" in body
    assert "1 offered setting and its history" in body
    assert "Not cited: 3 runs or jobs" in body


def _only(outcomes: tuple[RecipeOutcome, ...]) -> RecipeOutcome:
    assert [o.recipe_path for o in outcomes] == [WIDGET]
    return outcomes[0]


def test_a_guide_only_pr_says_so_instead_of_0_edits(tmp_path: Path) -> None:
    bench, recipes = build(tmp_path)
    outcome = _only(run(bench, recipes, (TP4_KEY,)).outcomes)
    assert outcome.guide_only
    assert pr_contents(outcome) == "no YAML edit, 1 guide section"
