"""A cached evaluation reused across a library edit that moved its lines: every library line
it cites moves with its statement, and an evaluation whose result depends on positions is
never moved (it is evaluated again)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from bot.benchmarks.extractor import evaluate_script
from bot.shell import EvaluationCache
from bot.shell.result import Alternative, ScriptResult, SourceSpan, Unresolved
from bot.shell.shift import shift_result
from bot.sources import DirectorySource

SCRIPT = "benchmarks/case.sh"
LIB = "benchmarks/benchmark_lib.sh"  # the registered library (bot.benchmarks.library)
USES_LIB = """#!/bin/bash
source "$(dirname "$0")/benchmark_lib.sh"
serve
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _library(helper: str, serve: str, top: str = "") -> str:
    """A helper the evaluation never reads, then what it runs."""
    return f"helper() {{\n  {helper}\n}}\n{top}serve() {{\n  {serve}\n}}\n"


def _evaluate(root: Path, cache: EvaluationCache | None) -> tuple[object, ...]:
    found = evaluate_script(DirectorySource(root), SCRIPT, {"MODEL": "m"}, cache=cache)
    return tuple(getattr(found, f.name) for f in fields(found))


def _moved_or_evaluated(tmp_path: Path, serve: str, top: str = "") -> EvaluationCache:
    """The evaluation before and after the helper grows by two lines, through one cache;
    each time equal to a fresh evaluation."""
    _write(tmp_path, {SCRIPT: USES_LIB, LIB: _library("echo a", serve, top)})
    cache = EvaluationCache()
    assert _evaluate(tmp_path, cache) == _evaluate(tmp_path, None)
    _write(tmp_path, {LIB: _library("echo a\n  echo b\n  echo c", serve, top)})
    assert _evaluate(tmp_path, cache) == _evaluate(tmp_path, None)
    return cache


def test_the_lines_a_result_cites_move_with_their_statements(tmp_path: Path) -> None:
    # an argv source, an assumption (the download) and an unresolved value, all in the library
    serve = 'hf download "$MODEL"\n  vllm serve "$MODEL" --port "$(shuf -i 8000-9000 -n 1)"'
    cache = _moved_or_evaluated(tmp_path, serve)
    assert (cache.hits, cache.moved_hits, cache.misses) == (1, 1, 1)
    found = evaluate_script(DirectorySource(tmp_path), SCRIPT, {"MODEL": "m"}, cache=cache)
    assert {span.line for span in found.argv_sources} == {8}  # `vllm serve`, was line 6
    assert found.unresolved and all(item.line == 8 for item in found.unresolved)


def test_a_line_number_used_as_a_value_is_evaluated_again(tmp_path: Path) -> None:
    cache = _moved_or_evaluated(tmp_path, 'vllm serve "$MODEL" --seed "$LINENO"')
    assert (cache.hits, cache.misses) == (0, 2)


def test_an_exit_message_found_by_distance_is_evaluated_again(tmp_path: Path) -> None:
    # the run-time condition forks; its exiting path takes the message echoed before `exit`
    top = 'if [[ "$(hostname)" == login* ]]; then\n  echo "not on a login node"\n  exit 1\nfi\n'
    cache = _moved_or_evaluated(tmp_path, 'vllm serve "$MODEL"', top)
    assert (cache.hits, cache.misses) == (0, 2)


LAYOUT_THEN = ((0, 2), (5, 7))  # two statements the digest counts
LAYOUT_NOW = ((0, 2), (8, 10))  # the second three lines lower


def _result(**changes: object) -> ScriptResult:
    fields_ = {
        "script": "benchmarks/case.sh",
        "status": "launched",
        "argv": ("vllm", "serve", "m"),
        "argv_sources": (SourceSpan(LIB, 7), SourceSpan(SCRIPT, 3)),
        "launch": SourceSpan(LIB, 7),
        **changes,
    }
    return ScriptResult(**fields_)  # type: ignore[arg-type]


def test_every_kind_of_line_moves() -> None:
    item = Unresolved("$PORT", f"set by the condition at {LIB}:6", LIB, 6)
    result = _result(
        unresolved=(item,),
        assumptions=(Unresolved("hf download", "skipped", LIB, 2),),
        reach={item: ("argv:3",)},
        alternatives=(Alternative(("vllm",), {}, (), (f"`[[ x ]]` ({LIB}:7) holds",)),),
        reason=f"exit at {LIB}:8",
    )
    moved = shift_result(result, {LIB: (LAYOUT_THEN, LAYOUT_NOW)})
    assert moved is not None
    assert [s.line for s in moved.argv_sources] == [10, 3]  # the script's line stays
    assert moved.launch == SourceSpan(LIB, 10)
    assert moved.unresolved == (Unresolved("$PORT", f"set by the condition at {LIB}:9", LIB, 9),)
    assert moved.assumptions[0].line == 2  # in the first statement, which did not move
    assert moved.reach == {moved.unresolved[0]: ("argv:3",)}
    assert moved.alternatives[0].conditions == (f"`[[ x ]]` ({LIB}:10) holds",)
    assert moved.reason == f"exit at {LIB}:11"


def test_no_moves_leave_the_result_as_it_is() -> None:
    result = _result(reason="exit at benchmarks/case.sh:3")
    assert shift_result(result, {}) is result


def test_a_line_it_cannot_place_is_evaluated_again() -> None:
    moves = {LIB: (LAYOUT_THEN, LAYOUT_NOW)}
    outside = Unresolved("x", "y", LIB, 4)  # between the two statements: not counted
    assert shift_result(_result(unresolved=(outside,)), moves) is None
    case_arm = Unresolved("x", "`case $X` (lib) matches the pattern at line 7", SCRIPT, 3)
    assert shift_result(_result(assumptions=(case_arm,)), moves) is None
    assert shift_result(_result(argv=("vllm", f"{LIB}:7")), moves) is None


def test_shift_result_decides_for_every_field_of_a_result() -> None:
    # a field added to ScriptResult may hold a line: shift_result must decide for it
    assert {f.name for f in fields(ScriptResult)} == {
        "script", "status", "argv", "argv_sources", "env", "env_unset", "unresolved",
        "assumptions", "invalid", "reason", "files", "launch", "steps", "alternatives",
        "paths", "reach",
    }  # fmt: skip
