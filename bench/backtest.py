"""Backtest speed on real history: PRs per second and peak memory, with the cold reference
(every cache disabled: each PR parses its base and head master configs and changelog whole,
evaluates every script, loads its recipes tree and renders from scratch) measured in the
same run on the same machine.

    python -m bench.backtest --bench-repo DIR --recipes DIR [--since DATE] [--until DATE]
        [--limit N] [--jobs J]

Both configurations run over the same consecutive merged PRs (the first N of the range), in
this process, sequentially; no result cache.

Measured 2026-12-02 on the shared 2-CPU machine (load average ~1), ``--since 2026-06-01
--limit 40``: cold 197.8 s (0.202 PRs/s), with caches 22.7 s (1.761 PRs/s, 8.7x), peak RSS
162 MiB. The whole range (581 PRs) with ``recipe-sync backtest --since 2026-06-01 --jobs 2``
under ``/usr/bin/time -v``: 5:08 wall, 585 s user, peak RSS 601 MiB; ``--jobs 1``: 9:38 wall,
570 s user, peak RSS 725 MiB (was 20:17 in one process without the engine caches); see the
README's speed paragraph.
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import replace
from pathlib import Path

from bot import sources
from bot.backtest import run as backtest_run
from bot.backtest.history import default_branch, first_parent_log, merged_prs
from bot.benchmarks import changelog, configs, repo
from bot.recipes.edit import document
from bot.vllm.normalise import reset_normalised


def measure(args: argparse.Namespace, prs: tuple[int, ...], cached: bool) -> float:
    configs.PARSE_CACHE_SIZE = 8 if cached else 0  # 0: whole-file parses, no per-key chunks
    configs._PARSED.clear()
    configs._CHUNKS.clear()
    configs._VALID.clear()
    repo._EXPANDED.clear()
    changelog._LOADED.clear()
    document._COMPOSED.clear()
    sources._OBJECTS.clear()  # git trees and blobs read again
    reset_normalised(4_096 if cached else 0)  # launch lines classified again
    settings = backtest_run.settings_for(args.bench_repo, args.recipes)
    # engine caches: script evaluations, recipes trees and renderings, line classifications
    settings = replace(settings, engine_caches=cached)
    started = time.perf_counter()
    report = backtest_run.run_backtest(settings, only=prs, jobs=args.jobs)
    elapsed = time.perf_counter() - started
    print(f"  {'cached' if cached else 'cold'}: {report.summary()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bench-repo", type=Path, required=True)
    parser.add_argument("--recipes", type=Path, required=True)
    parser.add_argument("--since")
    parser.add_argument("--until")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    branch = default_branch(args.bench_repo)
    found = merged_prs(
        first_parent_log(args.bench_repo, branch), since=args.since, until=args.until
    )
    prs = tuple(p.number for p in found[: args.limit])
    print(f"{len(prs)} merged PRs ({found[0].day if found else '-'} …), jobs {args.jobs}")
    cold = measure(args, prs, cached=False)
    warm = measure(args, prs, cached=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"cold reference: {cold:.1f} s, {len(prs) / cold:.3f} PRs/s")
    print(f"with caches:    {warm:.1f} s, {len(prs) / warm:.3f} PRs/s ({cold / warm:.2f}x)")
    print(f"peak RSS: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
