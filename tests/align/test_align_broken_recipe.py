"""One recipe file that does not load must not stop the alignment of the others (issue #13).

Shape: a feature with both ``args`` and ``modes`` (upstream main carried one for days)."""

from __future__ import annotations

import json
from pathlib import Path

from bot.fixtures import SeedFixtures
from tests.seed_cli import SEED_RECIPE, AlignCli, git

BROKEN = """model:
  hf_id: acme/Broken-1B
features:
  spec_decoding:
    args: ["--speculative-config", "{}"]
    modes:
      mtp:
        args: ["--speculative-config", "{}"]
"""


def test_a_broken_recipe_elsewhere_is_a_note(
    seed: SeedFixtures, align_cli: AlignCli, recipes_clone: Path
) -> None:
    path = recipes_clone / "models" / "acme" / "Broken-1B.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(BROKEN, encoding="utf-8")
    git(recipes_clone, "add", "-A")
    git(recipes_clone, "commit", "-qm", "a recipe that does not validate")
    status, out = align_cli(recipes=recipes_clone, recipes_ref="HEAD")
    assert status == 1 and (out / "recipe.patch").exists()  # the seed recipe is still aligned
    plan = json.loads((out / "plan.json").read_text())
    assert [p["recipe"] for p in plan["plans"]] == [SEED_RECIPE]
    broken = plan["recipes"]["broken"]
    assert [b["path"] for b in broken] == ["models/acme/Broken-1B.yaml"]
    comment = (out / "comment.md").read_text()
    assert "Recipe files that do not load" in comment and "models/acme/Broken-1B.yaml" in comment
