"""Benchmark repository model (InferenceX shape): configs → points → scripts → launch lines.

>>> repo = load_bench_repo(DirectorySource(Path("bench-repo")))
>>> for point, arm in points(repo, "foo-fp8-mi999-vllm"):
...     line = extract(repo, "foo-fp8-mi999-vllm", point, arm)
"""

from __future__ import annotations

from bot.benchmarks.changelog import ChangelogEntry
from bot.benchmarks.configs import MasterEntry
from bot.benchmarks.model import LaunchLine, Point
from bot.benchmarks.repo import BenchRepo, extract, extract_script, load_bench_repo, points
from bot.shell import ExtractionError, ScriptResult
from bot.shell.result import SourceSpan, Unresolved

__all__ = [
    "BenchRepo",
    "ChangelogEntry",
    "ExtractionError",
    "LaunchLine",
    "MasterEntry",
    "Point",
    "ScriptResult",
    "SourceSpan",
    "Unresolved",
    "extract",
    "extract_script",
    "load_bench_repo",
    "points",
]
