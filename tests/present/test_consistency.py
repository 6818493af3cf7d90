"""One statement, one truth: each consistency check finds the contradiction it names in the
seed's alignment PR, the seed's own texts pass, and a finding is never a silent PR."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.align.result import AlignRun, RecipeOutcome
from bot.commands.main import main
from bot.fixtures import SeedFixtures
from bot.present import consistency, present
from bot.present.consistency import NOTE_HEAD, check_texts, generated_command
from bot.present.sections.matrix import moved_summary
from tests.seed_cli import align_args


@pytest.fixture(scope="module")
def seed_pr(seed_run: AlignRun) -> tuple[RecipeOutcome, str]:
    (outcome,) = seed_run.patches
    return outcome, present(seed_run).prs[outcome.recipe_path].body


def _checks(run: AlignRun, outcome: RecipeOutcome, body: str, console: list[str] = []) -> set[str]:  # noqa: B006
    return {f.check for f in check_texts(run, outcome, body, console)}


def test_the_seed_pr_says_nothing_twice_differently(
    seed_run: AlignRun, seed_pr: tuple[RecipeOutcome, str]
) -> None:
    outcome, body = seed_pr
    assert check_texts(seed_run, outcome, body) == ()
    assert not body.startswith(NOTE_HEAD)


def test_a_benchmark_only_setting_the_generated_command_sets_is_found(
    seed_run: AlignRun, seed_pr: tuple[RecipeOutcome, str]
) -> None:
    outcome, body = seed_pr
    command = generated_command(body)
    assert command is not None and command.env["VLLM_USE_RUST_FRONTEND"] == "1"
    said = body + "\n**Benchmark-only** (never copied into a recipe): `VLLM_USE_RUST_FRONTEND=1`.\n"
    assert _checks(seed_run, outcome, said) == {"benchmark_only_absent"}
    other = (
        body + "\n**Benchmark-only** (never copied into a recipe): `VLLM_USE_RUST_FRONTEND=0`.\n"
    )
    assert _checks(seed_run, outcome, other) == set()  # another value: not the command's


def test_counts_and_all_expected_follow_the_matrix(
    seed_run: AlignRun, seed_pr: tuple[RecipeOutcome, str]
) -> None:
    outcome, body = seed_pr
    matrix = outcome.matrix
    assert matrix is not None
    moved = len(matrix.moved)
    wrong = body.replace(f"before and after: {moved} moved", f"before and after: {moved + 1} moved")
    assert wrong != body and _checks(seed_run, outcome, wrong) == {"counts_agree"}
    assert moved_summary(matrix).endswith(", all expected")
    # an expected rendering that did not move: no text may say "all expected"
    stale = replace(outcome, matrix=replace(matrix, ineffective=("MI300X single_node_tp",)))
    assert "all expected" not in moved_summary(stale.matrix)  # type: ignore[arg-type]
    console = [f"  regression matrix: {moved} of {len(matrix.rows)} renderings moved, all expected"]
    found = check_texts(seed_run, stale, body, console)
    assert [f.check for f in found] == ["counts_agree", "counts_agree"]
    assert "omits it" in found[0].message and "'all expected'" in found[1].message


def test_verification_words_follow_the_marks(
    seed_run: AlignRun, seed_pr: tuple[RecipeOutcome, str]
) -> None:
    outcome, body = seed_pr
    (verification,) = outcome.plan.verifications
    assert verification.state == "verified"
    denied = body + "\n- Not marked verified on MI355X: no run.\n"
    assert _checks(seed_run, outcome, denied) == {"verified_wording"}
    unverified = replace(verification, state="missing", reason="no run")
    plan = replace(outcome.plan, verifications=(unverified,))
    claimed = (
        body + "\n- kernel: without it the recipe runs a different kernel than the one verified\n"
    )
    assert "verified_wording" in _checks(seed_run, replace(outcome, plan=plan), claimed)


@pytest.mark.parametrize(
    ("check", "said", "near_miss"),
    [
        (  # vLLM would reject what the generated command passes
            "no_rejected_value_passed",
            "- the recipe's `--tensor-parallel-size 4`: vLLM would reject it.",
            "- the benchmark's `--tensor-parallel-size 3`: vLLM would reject it.",
        ),
        (  # a run-time value printed as the evaluator's placeholder, not as the variable
            "no_placeholder_shown",
            "- `URL=http://localhost:<PORT:opaque:runner-node>/metrics`",
            "- `URL=http://localhost:$PORT/metrics`",
        ),
    ],
)
def test_a_check_finds_its_contradiction_and_not_a_near_miss(
    seed_run: AlignRun, seed_pr: tuple[RecipeOutcome, str], check: str, said: str, near_miss: str
) -> None:
    outcome, body = seed_pr
    assert _checks(seed_run, outcome, f"{body}\n{said}\n") == {check}
    assert _checks(seed_run, outcome, f"{body}\n{near_miss}\n") == set()


def test_a_failed_check_is_a_visible_note_and_a_nonzero_status(
    monkeypatch: pytest.MonkeyPatch, seed: SeedFixtures, seed_run: AlignRun, tmp_path: Path
) -> None:
    def always(run: AlignRun, outcome: RecipeOutcome, texts: consistency.Texts) -> list[str]:
        return ["the body says 1 and 2"]

    monkeypatch.setattr(consistency, "CHECKS", (always,))
    texts = present(seed_run)
    (path,) = texts.prs
    assert [f.check for f in texts.findings[path]] == ["always"]
    assert texts.prs[path].body.startswith(NOTE_HEAD)
    assert "`always`: the body says 1 and 2" in texts.prs[path].body
    assert main(align_args(seed, tmp_path)) == 3
    assert (tmp_path / "pr-body.md").read_text().count("recipe-sync bug:") == 1
