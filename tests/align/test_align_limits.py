"""A change too large to analyse is one line, not minutes of evaluation."""

from __future__ import annotations

import re

import pytest

import bot.align.run
from bot.errors import InputError, Location
from tests.seed_cli import AlignCli


def test_too_many_points_is_too_large_to_analyse(
    align_cli: AlignCli, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bot.align.run, "MAX_POINTS", 2)
    status, _ = align_cli(evidence=False)
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("recipe-sync: error: too large to analyse: ")
    assert "launch points (limit 2)" in err[0]


def test_the_job_step_budget_covers_all_points(
    align_cli: AlignCli, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bot.align.run, "JOB_STEPS", 1_000)  # less than the seed's points need
    status, _ = align_cli(evidence=False)
    assert status == 2
    err = capsys.readouterr().err
    assert "too large to analyse: more than 1,000 evaluation steps" in err


def test_launch_lines_that_cannot_be_extracted_fail_the_command(
    align_cli: AlignCli, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unreadable(*args: object) -> None:
        raise InputError(Location("benchmarks/x.sh", line=3), "cannot evaluate this line")

    monkeypatch.setattr(bot.align.run, "extract", unreadable)
    status, _ = align_cli(evidence=False)
    captured = capsys.readouterr()
    assert "check: failure:" in captured.out and "could not be extracted" in captured.out
    assert status == 2  # was 0: the check run says failure, the command said "done"
    err = captured.err.strip().splitlines()
    assert err[-1].startswith("recipe-sync: error: check failure: ")
    assert re.search(r"\b(1 launch line|[02-9]\d* launch lines) could not be extracted", err[-1])
