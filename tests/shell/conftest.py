"""Helpers for evaluating small synthetic scripts inside a throwaway repository."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from bot.benchmarks.extractor import evaluate_script
from bot.shell import ScriptResult
from bot.sources import DirectorySource

SCRIPT = "benchmarks/single_node/fixed_seq_len/case.sh"
LIBRARY = (
    Path(__file__).resolve().parent.parent / "data" / "bench" / "benchmarks" / "benchmark_lib.sh"
)

Runner = Callable[..., ScriptResult]


@pytest.fixture()
def run_script(tmp_path: Path) -> Runner:
    """Write ``text`` as a benchmark script (plus optional files) and evaluate it."""

    def run(
        text: str,
        env: Mapping[str, str] | None = None,
        *,
        files: Mapping[str, str] | None = None,
        library: bool = False,
        path: str = SCRIPT,
        workdir: str | None = None,
    ) -> ScriptResult:
        script = tmp_path / path
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(text)
        if library:
            lib = tmp_path / "benchmarks" / "benchmark_lib.sh"
            lib.write_text(LIBRARY.read_text())
        for name, content in (files or {}).items():
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        return evaluate_script(DirectorySource(tmp_path), path, dict(env or {}), workdir=workdir)

    return run
