"""Memory bounded before allocation, and `$(< file)` never silently empty."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest

from bot.benchmarks.extractor import evaluate_script
from bot.shell import BudgetExceeded, JobTooLarge, Limits, job_budget
from bot.sources import DirectorySource


@pytest.mark.parametrize(
    "line",
    [
        "printf -v X '%*s' 20000000000 ''",
        "printf '%20000000000d' 1",
        "printf -v X '%.900000000f' 1",
        "X=$(printf '%*s' 999999 '' ; printf '%*s' 999999 '')",
    ],
)
def test_printf_size_is_checked_before_allocating(tmp_path: Path, line: str) -> None:
    (tmp_path / "x.sh").write_text(f"{line}\nvllm serve m\n")
    with pytest.raises(BudgetExceeded) as caught:
        evaluate_script(DirectorySource(tmp_path), "x.sh", {})
    assert "characters" in str(caught.value) and str(caught.value).startswith("x.sh:1")


def test_small_printf_widths_still_work(tmp_path: Path) -> None:
    (tmp_path / "x.sh").write_text("printf -v X '%05d|%-3s|%.2f' 42 ab 1.5\nvllm serve m \"$X\"\n")
    result = evaluate_script(DirectorySource(tmp_path), "x.sh", {})
    assert result.argv[-1] == "00042|ab |1.50"


def test_read_substitution_of_a_repository_file(tmp_path: Path) -> None:
    (tmp_path / "args.txt").write_text("--max-num-seqs 8\n\n")
    (tmp_path / "x.sh").write_text("A=$(< args.txt)\nvllm serve m $A\n")
    result = evaluate_script(DirectorySource(tmp_path), "x.sh", {})
    assert result.argv[-2:] == ("--max-num-seqs", "8")


def test_unreadable_read_substitution_is_unresolved_not_empty(tmp_path: Path) -> None:
    (tmp_path / "x.sh").write_text('A=$(< missing.txt)\nvllm serve m --x "$A"\n')
    result = evaluate_script(DirectorySource(tmp_path), "x.sh", {})
    assert result.argv[-1] != ""
    assert any("missing.txt" in str(u) and "does not exist" in str(u) for u in result.unresolved)


def test_symlinks_are_reported_as_not_followed(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("secret\n")
    os.symlink("real.txt", tmp_path / "link.txt")
    os.symlink("/etc/hostname", tmp_path / "out.txt")
    (tmp_path / "x.sh").write_text(
        'A=$(< link.txt)\nB=$(cat out.txt)\nvllm serve m --a "$A" --b "$B"\n'
    )
    result = evaluate_script(DirectorySource(tmp_path), "x.sh", {})
    assert "secret" not in " ".join(result.argv)
    reasons = [str(u) for u in result.unresolved]
    assert sum("symlink not followed" in r for r in reasons) == 2, reasons


def test_a_job_budget_spans_every_evaluation(tmp_path: Path) -> None:
    """200 points of a script with an endless loop: one job-wide budget, not 200 budgets."""
    (tmp_path / "x.sh").write_text("while true; do X=1; done\nvllm serve m\n")
    limits = Limits(max_steps=50_000, max_loop_iterations=10**9)
    started = time.monotonic()
    evaluated = 0
    with pytest.raises(JobTooLarge) as caught, job_budget(max_steps=500_000, seconds=60):
        for _ in range(200):
            with contextlib.suppress(BudgetExceeded):  # each point alone: its own budget
                evaluate_script(DirectorySource(tmp_path), "x.sh", {}, limits=limits)
            evaluated += 1
    assert evaluated < 20 and time.monotonic() - started < 60
    assert str(caught.value).startswith("too large to analyse: more than 500,000")


def test_a_job_deadline_spans_every_evaluation(tmp_path: Path) -> None:
    (tmp_path / "x.sh").write_text("while true; do X=1; done\nvllm serve m\n")
    limits = Limits(max_steps=50_000, max_loop_iterations=10**9)
    started = time.monotonic()
    with pytest.raises(JobTooLarge, match="longer than 1 s"), job_budget(10**12, seconds=1.0):
        for _ in range(10_000):
            with contextlib.suppress(BudgetExceeded):
                evaluate_script(DirectorySource(tmp_path), "x.sh", {}, limits=limits)
    assert time.monotonic() - started < 30
