"""A hand-written guide command that differs from the benchmark's launch: its bullet names a few
differences inline and folds a long list under it (bot/present/guide.py)."""

from __future__ import annotations

from bot.align.reproduction import GuideDrift
from bot.present.guide import DRIFT_INLINE, drift_lines
from bot.vllm import FlagDiff, Verdict


def _diff(n: int) -> FlagDiff:
    flag = f"--knob-{n}"
    return FlagDiff(
        "flag", f"k{n}", flag, Verdict.DIFFERS, n, None, (flag, str(n)), (), "", "engine"
    )


def _drift(settings: int) -> GuideDrift:
    diffs = tuple(_diff(n) for n in range(settings))
    return GuideDrift("models/x/M.yaml", "Reproduction", 12, "mi355x", "m-fp8-mi355x-vllm",
                      "tp=8", diffs, ("--port",), managed=False, cites_benchmark=True)  # fmt: skip


def test_a_few_differences_are_named_inline() -> None:
    [line] = drift_lines([_drift(DRIFT_INLINE)], "report")
    assert "`--knob-0`: the benchmark `--knob-0 0`, the guide omits it; `--knob-1`" in line
    assert line.endswith("Not compared (shell variables in the guide): `--port`.")


def test_many_differences_are_counted_and_folded_under_the_bullet() -> None:
    lines = drift_lines([_drift(DRIFT_INLINE + 7)], "report")
    assert (
        "10 settings differ; not rewritten (hand-written; policy guide_sections: report)"
        in (lines[0])
    )
    assert "--knob-0 0" not in lines[0]
    assert "<details><summary>The 10 settings the guide command at line 12 differs in" in lines[2]
    assert "- `--knob-9`: the benchmark `--knob-9 9`, the guide omits it" in lines
    assert lines[-1] == "</details>"
