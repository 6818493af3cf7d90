"""Every evaluation reused with its library lines moved, checked against a fresh one.

    python -m bench.moved_lines --bench-repo DIR --recipes DIR --since DATE [--until DATE]

Runs ``recipe-sync backtest --jobs 1`` (one process: every moved hit happens here) with
:meth:`bot.shell.cache.EvaluationCache.evaluate` wrapped: each result the cache returns with
its library lines moved (:mod:`bot.shell.shift`) is evaluated again from scratch and
compared field by field; a field that differs is printed with both values. Exit status 1
when any differs.

Measured 2026-12-07 (sixth session): ``--since 2026-07-01 --until 2026-07-31`` 3,962 moved
hits, ``--since 2026-06-01`` 5,047, all equal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from bot.commands.main import main as recipe_sync
from bot.shell.cache import EvaluationCache
from bot.shell.result import ScriptResult


def _fields(result: ScriptResult) -> tuple[object, ...]:
    return tuple(getattr(result, f.name) for f in fields(result))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench-repo", required=True)
    parser.add_argument("--recipes", required=True)
    parser.add_argument("--since", required=True)
    parser.add_argument("--until")
    args = parser.parse_args(argv)
    counts = {"moved": 0, "equal": 0, "differ": 0}
    evaluate = EvaluationCache.evaluate

    def checked(
        cache: EvaluationCache,
        source: Any,
        key: Any,
        handlers: Any,
        run: Callable[[Any], ScriptResult],
    ) -> ScriptResult:
        before = cache.moved_hits
        result = evaluate(cache, source, key, handlers, run)
        if cache.moved_hits == before:
            return result
        counts["moved"] += 1
        fresh = run(source)
        if _fields(fresh) == _fields(result):
            counts["equal"] += 1
            return result
        counts["differ"] += 1
        for field, want, got in zip(fields(fresh), _fields(fresh), _fields(result), strict=True):
            if want != got:
                print(f"{key[0]} {field.name}: fresh {want!r} | moved {got!r}", file=sys.stderr)
        return result

    EvaluationCache.evaluate = checked  # type: ignore[method-assign, assignment]
    command = ["backtest", "--bench-repo", args.bench_repo, "--recipes", args.recipes]
    command += ["--since", args.since, "--jobs", "1", "--format", "json", "--out", "/dev/null"]
    if args.until:
        command += ["--until", args.until]
    try:
        recipe_sync(command)
    finally:
        EvaluationCache.evaluate = evaluate  # type: ignore[method-assign]
    print(
        f"{counts['moved']:,} moved hits: {counts['equal']:,} equal to a fresh evaluation, "
        f"{counts['differ']:,} differ"
    )
    return 1 if counts["differ"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
