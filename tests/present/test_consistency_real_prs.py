"""The consistency check over real alignment PRs: InferenceX#2707, #2580 and #2513 replayed as
the backtest does (the recipes main current at each merge), and a sample of the since-June
backtest (`python -m bench.check_texts --since 2026-06-01` checks every PR of it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.backtest.run import Backtester, plan_jobs, settings_for
from bot.backtest.texts import CheckedPR, checked_prs, pull_texts
from tests.shared import clone_histories

pytestmark = pytest.mark.slow

SAMPLE = ("2026-06-01", "2026-06-07")  # the first week of the since-June backtest


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return clone_histories(tmp_path_factory.mktemp("consistency-history"))


@pytest.fixture(scope="module")
def three(histories: tuple[Path, Path]) -> dict[int, CheckedPR]:
    settings = settings_for(*histories)
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


def test_each_concurrency_gets_its_own_capture_sizes(three: dict[int, CheckedPR]) -> None:
    # InferenceX#2707: the TP8 arm's capture sizes are multiples of 1+N up to 2 x CONC, then
    # 100..500; the section set CONC=14 beside concurrency 1's list
    (pr,) = three[2707].prs
    arms = dict(re.findall(r"^\+\s+(\d+)\) COMPILATION_CONFIG='(\{.*\})' ;;$", pr.patch, re.M))
    assert sorted(map(int, arms)) == [1, 4, 8, 14]
    for conc, text in arms.items():
        sizes = json.loads(text)["cudagraph_capture_sizes"]
        decode = [n for n in range(4, 4 * 2 * int(conc) + 1, 4)]
        assert sizes == sorted(set(decode) | {100, 200, 300, 400, 500}), conc
    assert '--compilation-config "$COMPILATION_CONFIG"' in pr.patch
    assert "CONC=14  # the sweep ran 1, 4, 8, 14" in pr.patch


def test_an_export_the_recipe_sets_is_not_called_benchmark_only(
    three: dict[int, CheckedPR],
) -> None:
    # InferenceX#2580: the MI300X recipe command already exports both with these values
    (pr,) = three[2580].prs
    block = "+  # Already in the recipe's command (the same values).\n"
    assert block + "+  export NCCL_MIN_NCHANNELS=112\n+  export GPU_MAX_HW_QUEUES=2\n" in pr.patch
    assert "NOT part of the default command.\n+  export NCCL_MIN_NCHANNELS" not in pr.patch
    assert "`NCCL_MIN_NCHANNELS`" not in pr.body.split("### Guide", 1)[1].split("###", 1)[0]


def test_a_sample_of_the_backtest_is_consistent(histories: tuple[Path, Path]) -> None:
    settings = settings_for(*histories)
    jobs, _ = plan_jobs(settings, since=SAMPLE[0], until=SAMPLE[1])
    checked = list(checked_prs(settings, jobs, workers=2))
    prs = [(c.number, pr) for c in checked for pr in c.prs]
    assert len(prs) >= 5, len(prs)  # the week opens alignment PRs to check
    assert not [c.number for c in checked if c.error]
    assert [(n, pr.findings) for n, pr in prs if pr.findings] == []
