"""A candidate that would undo a maintainer's recent change is not proposed (issue #31 item 5):
the seed PR sets ``--moe-backend aiter``; a maintainer who changed it away from ``aiter`` in
the last 30 days keeps their choice, unless someone asks for it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from bot.recipes.withdrawals import recent_withdrawals
from bot.sources import GitTreeSource
from tests.seed_cli import SEED_RECIPE, AlignCli

TRITON = '"aiter_triton_mxfp4_bf16"'
PLAIN = '"aiter"'


# the day the tests' history ends (2027-01-15): after every commit of the seed fixtures
END = 1_800_000_000
DAY = 86_400


def _commit(clone: Path, old: str, new: str, *, days_ago: int = 0, author: str = "Ana") -> None:
    """Replace ``old`` by ``new`` in the seed recipe and commit it ``days_ago`` days before
    END, as ``author``."""
    file = clone / SEED_RECIPE
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new, 1))
    when = f"{END - days_ago * DAY} +0000"
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    _git(clone, "-c", f"user.name={author}", "-c", "user.email=a@example.org",
         "commit", "-qam", f"{author}: {old} -> {new}", env=env)  # fmt: skip


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()


def _plan(out: Path) -> dict[str, Any]:
    plans = json.loads((out / "plan.json").read_text())["plans"]
    return next(p for p in plans if p["recipe"] == SEED_RECIPE)


def _subjects(plan: dict[str, Any]) -> set[str]:
    return {e["subject"] for e in plan["edits"]}


def _changed_back(clone: Path, days_ago: int = 3, author: str = "Ana") -> None:
    """The history: the recipe ran ``aiter``; a maintainer changed it to the Triton kernel."""
    _commit(clone, TRITON, PLAIN, days_ago=days_ago + 1, author=author)
    _commit(clone, PLAIN, TRITON, days_ago=days_ago, author=author)


def test_the_seed_proposes_the_backend_without_such_history(
    align_cli: AlignCli, recipes_clone: Path
) -> None:
    _, out = align_cli(recipes=recipes_clone, recipes_ref="HEAD")
    assert "--moe-backend" in _subjects(_plan(out))


def test_a_value_a_maintainer_changed_away_from_is_not_proposed_again(
    align_cli: AlignCli, recipes_clone: Path
) -> None:
    _changed_back(recipes_clone)
    _, out = align_cli(recipes=recipes_clone, recipes_ref="HEAD")
    plan = _plan(out)
    assert "--moe-backend" not in _subjects(plan)
    [line] = [s for s in plan["skipped"] if s.startswith("--moe-backend")]
    assert "would undo a recent change" in line
    assert "a maintainer changed it from 'aiter' to 'aiter_triton_mxfp4_bf16' at " in line
    assert f"Ana: {PLAIN} -> {TRITON}" in line
    # a maintainer can still ask for it
    _, asked = align_cli(recipes=recipes_clone, recipes_ref="HEAD",
                         extra=["--include=--moe-backend"])  # fmt: skip
    assert "--moe-backend" in _subjects(_plan(asked))


def test_older_changes_bots_and_settings_put_back_do_not_count(recipes_clone: Path) -> None:
    source = lambda: GitTreeSource(recipes_clone, "HEAD")  # noqa: E731 (re-read each time)
    _changed_back(recipes_clone, days_ago=40)
    _commit(recipes_clone, "\nvariants:", "\n# reviewed\nvariants:")  # the window's end: END
    assert recent_withdrawals(source(), SEED_RECIPE).withdrawals == ()
    _changed_back(recipes_clone, author="recipe-sync[bot]")
    assert recent_withdrawals(source(), SEED_RECIPE).withdrawals == ()
    _changed_back(recipes_clone)
    [found] = recent_withdrawals(source(), SEED_RECIPE).withdrawals
    assert (found.leaf.subject, found.leaf.value, found.now) == (
        "--moe-backend",
        "aiter",
        "aiter_triton_mxfp4_bf16",
    )
    _commit(recipes_clone, TRITON, PLAIN)  # put back: the maintainer's own later choice
    assert [w.leaf.value for w in recent_withdrawals(source(), SEED_RECIPE).withdrawals] == [
        "aiter_triton_mxfp4_bf16"  # … which withdraws the Triton kernel in turn
    ]


def test_a_plain_directory_says_the_history_was_not_checked(align_cli: AlignCli) -> None:
    _, out = align_cli(recipes_ref="WORKTREE")
    notes = _plan(out)["notes"]
    assert any(
        "removed in the last 30 days were not checked" in n and "a directory" in n for n in notes
    )
