"""Edits of one node are written together; a candidate left out of the diff (offered for its
estimate, or withheld) must not ride along with a proposed one at the same node."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from bot.rules import default_rules_dir
from tests.seed_cli import AlignCli


@pytest.fixture()
def tuning_as_recipe(tmp_path: Path) -> Path:
    """The bundled rules with tuning settings carried like serving ones: the seed's
    ``--max-num-seqs 128`` becomes a candidate beside ``--moe-backend aiter``, at the same
    node, of a kind with no adoption history (so offered, not proposed)."""
    rules = tmp_path / "rules"
    shutil.copytree(default_rules_dir(), rules)
    policy = rules / "policy.yaml"
    text, count = re.subn(r"^  tuning: \S+", "  tuning: recipe", policy.read_text(), flags=re.M)
    assert count == 1
    policy.write_text(text)
    return rules


def test_an_offered_setting_is_not_written_with_a_proposed_one(
    align_cli: AlignCli, tuning_as_recipe: Path
) -> None:
    _, out = align_cli(gated=True, extra=["--rules", str(tuning_as_recipe)])
    [plan] = json.loads((out / "plan.json").read_text())["plans"]
    proposed = {(e["subject"], e["node"]) for e in plan["edits"]}
    offered = {(e["subject"], e["node"]) for e in plan["offered"]}
    node = "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args"
    assert ("--moe-backend", node) in proposed
    assert ("--max-num-seqs", node) in offered
    nodes = (out / "recipe.patch").read_text().split("<!-- recipe-sync:reproduction", 1)[0]
    added = [line for line in nodes.splitlines() if line.startswith("+")]
    assert any('"aiter"' in line for line in added)
    assert not any("--max-num-seqs" in line for line in added)  # the guide block may name it
