"""Extract every vLLM config point of a benchmark repository; report points/s and how much
the per-repository parse cache saves (cold: a fresh parser for every point; warm: one parser
for the whole audit, the way the App audits a repository).

    python -m bench.extract_points [--bench-repo DIR] [--copies N] [--rounds R]

Without ``--bench-repo`` it generates a repository from ``tests/data/bench``, with every
master-config key copied N times (same scripts), so the audit has a realistic point count.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.benchmarks import BenchRepo, extract, load_bench_repo, points
from bot.shell import ScriptParser
from bot.sources import DirectorySource

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "bench"


@contextmanager
def generated_repo(copies: int) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="bench-repo-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(DATA, root)
        for name in ("amd-master.yaml", "nvidia-master.yaml"):
            path = root / "configs" / name
            text = path.read_text()
            blocks = re.split(r"(?m)^(?=[A-Za-z0-9][^\s:]*:\s*$)", text)
            out = [blocks[0]]
            for block in blocks[1:]:
                out.append(block)
                key = block.split(":", 1)[0]
                for copy in range(1, copies):
                    out.append(block.replace(f"{key}:", f"{key}-copy{copy}:", 1))
            path.write_text("".join(out))
        yield root


def vllm_points(repo: BenchRepo) -> list[tuple[str, object, str]]:
    work = []
    for key in repo.keys:
        entry = repo.entry(key)
        if "vllm" not in entry.framework or entry.multinode:
            continue
        work += [(key, point, arm) for point, arm in points(repo, key)]
    return work


def audit(repo: BenchRepo, work: list[tuple[str, object, str]], *, cold: bool) -> float:
    start = time.perf_counter()
    for key, point, arm in work:
        if cold:
            repo.parser = ScriptParser()
        extract(repo, key, point, arm)  # type: ignore[arg-type]
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bench-repo", type=Path, help="benchmark repository (default: generated)")
    parser.add_argument("--copies", type=int, default=20, help="copies of each key (generated)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (median reported)")
    args = parser.parse_args(argv)

    with (
        generated_repo(args.copies)
        if args.bench_repo is None
        else _existing(args.bench_repo) as root
    ):
        load_start = time.perf_counter()
        repo = load_bench_repo(DirectorySource(root))
        work = vllm_points(repo)
        load_seconds = time.perf_counter() - load_start
        if not work:
            print("no vLLM single-node points found")
            return 1
        cold_times, warm_times = [], []
        for _ in range(args.rounds):
            cold_times.append(audit(repo, work, cold=True))
            repo.parser = ScriptParser()
            warm_times.append(audit(repo, work, cold=False))
        hits, misses = repo.parser.hits, repo.parser.misses
        statuses: dict[str, int] = {}
        resolved = 0
        for key, point, arm in work:
            line = extract(repo, key, point, arm)  # type: ignore[arg-type]
            statuses[line.status] = statuses.get(line.status, 0) + 1
            resolved += line.resolved

    cold, warm = statistics.median(cold_times), statistics.median(warm_times)
    print(
        f"repository:        {args.bench_repo or f'generated from tests/data/bench x{args.copies}'}"
    )
    print(
        f"keys (vLLM):       {len({k for k, _, _ in work})}  points (incl. eval arms): {len(work)}"
    )
    print(f"load + expand:     {load_seconds:.3f} s (YAML parse and validation, once)")
    print(f"outcomes:          {dict(sorted(statuses.items()))}, fully resolved: {resolved}")
    print(
        f"cold (reference):  {cold:.3f} s  {len(work) / cold:,.0f} points/s  "
        "(fresh parser per point)"
    )
    print(
        f"warm:              {warm:.3f} s  {len(work) / warm:,.0f} points/s  "
        f"(one parser: {misses} parses, {hits} cache hits)"
    )
    print(f"cache hit rate:    {hits / max(hits + misses, 1):.1%}")
    print(f"warm vs cold:      {cold / warm:.2f}x faster")
    return 0


@contextmanager
def _existing(path: Path) -> Iterator[Path]:
    yield path


if __name__ == "__main__":
    raise SystemExit(main())
