"""The backtest over the real InferenceX and recipes histories (bundles in ../shared)."""

from __future__ import annotations

import pytest

from bot.backtest.run import run_backtest, settings_for
from tests.shared import clone_histories

pytestmark = pytest.mark.slow

# a docs PR, a non-vLLM framework, a multi-node vLLM key, a vLLM single-node key
PRS = (2544, 2600, 2567, 2621)


def test_real_prs_have_outcomes_with_reasons(tmp_path_factory: pytest.TempPathFactory) -> None:
    repos = clone_histories(tmp_path_factory.mktemp("real"), "recipes-main-upto-2026-07-02.bundle")
    report = run_backtest(settings_for(*repos), only=PRS)
    assert sorted(r.number for r in report.rows) == sorted(PRS)
    for row in report.rows:
        assert row.outcome not in ("error", "bad input"), (row.number, row.reason)
        assert row.reason, row.number
    outcomes = {r.number: r.outcome for r in report.rows}
    assert outcomes[2544] == "no vLLM change" and outcomes[2600] == "out of scope"
