"""Which lanes a PR's reproduction blocks document (bot/align/reproduction/lanes.py)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

from bot.align.reproduction.lanes import documents
from bot.rules import load_rules


def _lane(hardware: str, patch: object = None) -> Any:
    return SimpleNamespace(
        profile=SimpleNamespace(label=f"M {hardware}", hardware=hardware),
        launch=SimpleNamespace(engine_patch=patch),
    )


def test_with_edits_a_block_documents_only_the_hardware_the_edit_is_for() -> None:
    """#1571: one MI355X edit brought a block for each of the recipe's six GPUs."""
    rules = load_rules()
    assert rules.policy.reproduction == "with_edits"
    plan = SimpleNamespace(
        targets=(_lane("mi355x"), _lane("b200")),
        edits=(SimpleNamespace(targets=("M mi355x",)),),
    )
    assert documents(rules, plan, _lane("mi355x"))  # type: ignore[arg-type]
    assert not documents(rules, plan, _lane("b200"))  # type: ignore[arg-type]
    always = replace(rules, policy=rules.policy.model_copy(update={"reproduction": "always"}))
    assert documents(always, plan, _lane("b200"))  # type: ignore[arg-type]
    # a lane that patched its engine is documented under neither policy
    patched = _lane("mi355x", patch="git apply -p1 x.diff")
    assert not documents(rules, plan, patched)  # type: ignore[arg-type]
    assert not documents(always, plan, patched)  # type: ignore[arg-type]
