"""Whole-corpus audit speed: wall time and launch lines (points) per second, with the cold
reference (no caches: a fresh script parser per point, every profile mapped, rendered and
compared again) and the process pool measured in the same run on the same machine.

    python -m bench.audit [--copies N] [--rounds R] [--jobs J]
    python -m bench.audit --bench-repo DIR [--bench-ref REF] --recipes DIR [--recipes-ref REF]

Without a repository pair it measures the bundled seed fixtures (benchmark PR head against the
recipes base) as they are, and scaled: every master-config key copied N times (same scripts
and profiles, so this shows what the caches save on a corpus of realistic size; a real
repository has more distinct scripts and profiles than the copies). Each configuration runs
in this process after one untimed warm-up run (imports, rule tables), median of R rounds.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.audit import run_audit
from bot.audit.run import AuditRun
from bot.fixtures import build_seed_fixtures
from bot.rules import default_rules
from bot.sources import DirectorySource, FileSource, GitTreeSource

Opener = Callable[[], tuple[FileSource, FileSource]]


def timed(opener: Opener, *, cache: bool, jobs: int) -> tuple[float, AuditRun]:
    bench, recipes = opener()
    started = time.perf_counter()
    run = run_audit(bench, recipes, default_rules(), cache=cache, jobs=jobs)
    return time.perf_counter() - started, run


def measure(where: str, opener: Opener, rounds: int, jobs: int) -> None:
    timed(opener, cache=True, jobs=1)  # warm-up: imports and process-wide tables
    configs = [
        ("cold (reference)", False, 1),
        ("warm", True, 1),
        (f"warm, {jobs} processes", True, jobs),
    ]
    times: dict[str, list[float]] = {name: [] for name, _, _ in configs}
    runs: dict[str, AuditRun] = {}
    for _ in range(rounds):
        for name, cache, workers in configs:
            seconds, run = timed(opener, cache=cache, jobs=workers)
            times[name].append(seconds)
            runs[name] = run
    cold = statistics.median(times["cold (reference)"])
    warm_run = runs["warm"]
    points = warm_run.points
    report = warm_run.report
    stats = warm_run.stats
    print(f"\n== {where}")
    print(
        f"launch lines: {points} of {report.keys_audited} vLLM keys "
        f"({len(report.out_of_scope)} keys out of scope); {report.by_status()}"
    )
    print(
        f"warm caches:  {stats.get('script_parses', 0)} script parses, "
        f"{stats.get('profiles_mapped', 0)} profiles mapped ({stats.get('profile_hits', 0)} hits), "
        f"{stats.get('renderings', 0)} renderings, {stats.get('comparisons', 0)} comparisons "
        f"({stats.get('comparison_hits', 0)} hits)"
    )
    for name, _, _ in configs:
        median = statistics.median(times[name])
        used = runs[name].workers
        print(
            f"{name:<22} {median:8.3f} s  {points / median:9,.0f} points/s  "
            f"{cold / median:5.2f}x vs cold  (processes used: {used}; "
            f"min {min(times[name]):.3f} / max {max(times[name]):.3f} s)"
        )
    same = all(runs[name].report.to_json() == report.to_json() for name in runs)
    print(f"identical reports across configurations: {same}")


def scaled_copy(source: GitTreeSource, target: Path, copies: int) -> Path:
    """The repository with every master-config key copied ``copies`` times."""
    for path in source.iter_files():
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(source.read_bytes(path))
    for name in ("amd-master.yaml", "nvidia-master.yaml"):
        path = target / "configs" / name
        text = path.read_text()
        blocks = re.split(r"(?m)^(?=[A-Za-z0-9][^\s:]*:\s*$)", text)
        out_blocks = [blocks[0]]
        for block in blocks[1:]:
            out_blocks.append(block)
            key = block.split(":", 1)[0]
            for copy in range(1, copies):
                out_blocks.append(block.replace(f"{key}:", f"{key}-copy{copy}:", 1))
        path.write_text("".join(out_blocks))
    return target


@contextmanager
def fixtures(copies: int) -> Iterator[tuple[str, Opener, str, Opener]]:
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
        seed = build_seed_fixtures(Path(tmp) / "seed")

        def plain() -> tuple[FileSource, FileSource]:
            return (
                GitTreeSource(seed.bench_repo, seed.bench_pr_head),
                GitTreeSource(seed.recipes_repo, seed.recipes_base),
            )

        root = scaled_copy(
            GitTreeSource(seed.bench_repo, seed.bench_pr_head), Path(tmp) / "scaled", copies
        )

        def scaled() -> tuple[FileSource, FileSource]:
            return DirectorySource(root), GitTreeSource(seed.recipes_repo, seed.recipes_base)

        yield (
            "bundled fixtures (PR head vs recipes base)",
            plain,
            f"bundled fixtures, keys x{copies}",
            scaled,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bench-repo", type=Path)
    parser.add_argument("--bench-ref")
    parser.add_argument("--recipes", type=Path)
    parser.add_argument("--recipes-ref")
    parser.add_argument("--copies", type=int, default=40, help="key copies (fixtures)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (median)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="pool size")
    args = parser.parse_args(argv)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    if (args.bench_repo is None) != (args.recipes is None):
        parser.error("give both --bench-repo and --recipes, or neither")
    if args.bench_repo is not None:

        def given() -> tuple[FileSource, FileSource]:
            def one(path: Path, ref: str | None) -> FileSource:
                return GitTreeSource(path, ref) if ref else DirectorySource(path)

            return one(args.bench_repo, args.bench_ref), one(args.recipes, args.recipes_ref)

        measure(f"{args.bench_repo} vs {args.recipes}", given, args.rounds, args.jobs)
        return 0
    with fixtures(args.copies) as (plain_name, plain, scaled_name, scaled):
        measure(plain_name, plain, args.rounds, args.jobs)
        measure(scaled_name, scaled, args.rounds, args.jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
