"""The consistency check over real alignment PRs: InferenceX#2707, #2580 and #2513 replayed as
the backtest does (the recipes main current at each merge), and a sample of the since-June
backtest (`python -m bench.check_texts --since 2026-06-01` checks every PR of it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.backtest.run import Backtester, plan_jobs, settings_for
from bot.backtest.texts import CheckedPR, checked_prs, pull_texts
from tests.shared import clone_histories
from tests.ungated import ungated_rules_dir

pytestmark = pytest.mark.slow

SAMPLE = ("2026-06-01", "2026-06-07")  # the first week of the since-June backtest


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return clone_histories(tmp_path_factory.mktemp("consistency-history"))


@pytest.fixture(scope="module")
def three(histories: tuple[Path, Path]) -> dict[int, CheckedPR]:
    # the texts of every candidate and block (tests.ungated; a guide-only PR for #2707)
    settings = settings_for(
        *histories, rules_dir=ungated_rules_dir(histories[0].parent, always=True)
    )
    jobs, _ = plan_jobs(settings, only=(2707, 2580, 2513))
    tester = Backtester(settings)
    return {job.pr.number: pull_texts(tester, job) for job in jobs}


def test_the_three_prs_say_nothing_twice_differently(three: dict[int, CheckedPR]) -> None:
    assert sorted(three) == [2513, 2580, 2707]
    for number, checked in three.items():
        assert not checked.error, number
        (pr,) = checked.prs
        assert pr.findings == (), (number, pr.findings)
        assert "recipe-sync bug:" not in pr.body


def test_a_value_computed_per_concurrency_is_not_shown_as_one(
    three: dict[int, CheckedPR],
) -> None:
    # InferenceX#2707: the TP8 arm's capture sizes differ per concurrency (multiples of 1+N up
    # to 2 x CONC, then 100..500): the block names the script's variable, never one list
    (pr,) = three[2707].prs
    block = pr.patch.split("recipe-sync:reproduction", 1)[1]
    flat = " ".join(line.lstrip("+ ") for line in block.splitlines())
    shown = re.split(r"\d+ more settings? of this lane (?:is|are) not shown", flat)[0]
    if "cudagraph_capture_sizes" in shown:  # shown unless the 40-line limit left it out
        assert "one value per `CONC`" in shown
    assert "[4, 8" not in block and "CONC=14" not in block and len(block.splitlines()) <= 40


def test_an_export_the_recipe_sets_is_not_repeated(three: dict[int, CheckedPR]) -> None:
    # InferenceX#2580: the MI300X recipe command already exports both with these values: the
    # block, which carries what to change, leaves them out
    (pr,) = three[2580].prs
    block = pr.patch.split("recipe-sync:reproduction", 1)[1]
    assert "NCCL_MIN_NCHANNELS" not in block and "GPU_MAX_HW_QUEUES" not in block
    assert "`NCCL_MIN_NCHANNELS`" not in pr.body.split("### Guide", 1)[1].split("###", 1)[0]


def test_a_sample_of_the_backtest_is_consistent(histories: tuple[Path, Path]) -> None:
    rules = ungated_rules_dir(histories[0].parent, always=True)
    settings = settings_for(*histories, rules_dir=rules)
    jobs, _ = plan_jobs(settings, since=SAMPLE[0], until=SAMPLE[1])
    checked = list(checked_prs(settings, jobs, workers=2))
    prs = [(c.number, pr) for c in checked for pr in c.prs]
    assert len(prs) >= 5, len(prs)  # the week opens alignment PRs to check
    assert not [c.number for c in checked if c.error]
    assert [(n, pr.findings) for n, pr in prs if pr.findings] == []


def test_a_harness_wide_pr_gets_a_comment_read_at_a_glance(histories: tuple[Path, Path]) -> None:
    """InferenceX #2323 (power telemetry in benchmark_lib.sh) reaches every key and changes
    no launch setting: its comment was 4,267 visible words (118 table rows, 77 keys of other
    frameworks); folded, what is open fits the 800-word budget of a PR body."""
    settings = settings_for(*histories)
    jobs, _ = plan_jobs(settings, only=(2323,))
    checked = pull_texts(Backtester(settings), jobs[0])
    assert not checked.error and checked.prs == ()
    assert checked.comment_words is not None and checked.comment_words <= 800
