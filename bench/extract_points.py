"""Extract every vLLM config point of a benchmark repository; report points/s and how much
the per-repository parse cache saves (cold: a fresh parser for every point; warm: one parser
for the whole audit, the way the App audits a repository).

    python -m bench.extract_points [--bench-repo DIR] [--copies N] [--rounds R]

Without ``--bench-repo`` it generates a repository from ``tests/data/bench``, with every
master-config key copied N times (same scripts), so the audit has a realistic point count, and
the benchmark library padded with helper functions to the size of the real one (~130 kB).
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

from bot.benchmarks import BenchRepo, Point, extract, load_bench_repo, points
from bot.shell import ScriptParser
from bot.sources import DirectorySource

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "bench"


HELPER = """
# Synthetic side-effect helper {n}: polls a service and records what it saw.
bench_helper_{n}() {{
    local port="${{1:-8888}}" tries=0 out="${{RESULT_DIR:-/tmp}}/helper_{n}.log"
    while [[ $tries -lt 30 ]]; do
        if curl -sf "http://localhost:${{port}}/health" > /dev/null; then
            echo "helper {n}: ready after $tries tries" >> "$out"
            return 0
        fi
        tries=$(( tries + 1 ))
        sleep 2
    done
    case "${{FRAMEWORK:-}}" in
        vllm) echo "vllm not ready" >&2 ;;
        *) echo "server not ready" >&2 ;;
    esac
    return 1
}}
"""


@contextmanager
def generated_repo(copies: int, library_kb: int) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="bench-repo-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(DATA, root)
        library = root / "benchmarks" / "benchmark_lib.sh"
        text = library.read_text()
        helpers: list[str] = []
        size = len(text)
        while size < library_kb * 1024:
            helpers.append(HELPER.format(n=len(helpers)))
            size += len(helpers[-1])
        library.write_text(text + "".join(helpers))
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


Work = list[tuple[str, Point, str]]


def vllm_points(repo: BenchRepo) -> Work:
    work: Work = []
    for key in repo.keys:
        entry = repo.entry(key)
        if "vllm" not in entry.framework or entry.multinode:
            continue
        work += [(key, point, arm) for point, arm in points(repo, key)]
    return work


def audit(repo: BenchRepo, work: Work, *, cold: bool) -> float:
    start = time.perf_counter()
    for key, point, arm in work:
        if cold:
            repo.parser = ScriptParser()
        extract(repo, key, point, arm)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bench-repo", type=Path, help="benchmark repository (default: generated)")
    parser.add_argument("--copies", type=int, default=20, help="copies of each key (generated)")
    parser.add_argument("--library-kb", type=int, default=130, help="library size (generated)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (median reported)")
    args = parser.parse_args(argv)
    if args.bench_repo is None:
        where = f"generated: tests/data/bench, keys x{args.copies}, library {args.library_kb} kB"
        with generated_repo(args.copies, args.library_kb) as root:
            return measure(root, where, args.rounds)
    return measure(args.bench_repo, str(args.bench_repo), args.rounds)


def measure(root: Path, where: str, rounds: int) -> int:
    load_start = time.perf_counter()
    repo = load_bench_repo(DirectorySource(root))
    work = vllm_points(repo)
    load_seconds = time.perf_counter() - load_start
    if not work:
        print("no vLLM single-node points found")
        return 1
    cold_times, warm_times = [], []
    for _ in range(rounds):
        cold_times.append(audit(repo, work, cold=True))
        repo.parser = ScriptParser()
        warm_times.append(audit(repo, work, cold=False))
    hits, misses = repo.parser.hits, repo.parser.misses
    statuses: dict[str, int] = {}
    resolved = 0
    for key, point, arm in work:
        line = extract(repo, key, point, arm)
        statuses[line.status] = statuses.get(line.status, 0) + 1
        resolved += line.resolved
    cold, warm = statistics.median(cold_times), statistics.median(warm_times)
    keys = len({key for key, _, _ in work})
    print(f"repository:        {where}")
    print(f"keys (vLLM):       {keys}  points (incl. eval arms): {len(work)}")
    print(f"load + expand:     {load_seconds:.3f} s (YAML parse and validation, once)")
    print(f"outcomes:          {dict(sorted(statuses.items()))}, fully resolved: {resolved}")
    print(
        f"cold (reference):  {cold:.3f} s  {len(work) / cold:,.0f} points/s  "
        "(fresh parser per point)"
    )
    print(
        f"warm:              {warm:.3f} s  {len(work) / warm:,.0f} points/s  "
        f"(one parser for the audit: {misses} parses, {hits} cache hits)"
    )
    print(f"cache hit rate:    {hits / max(hits + misses, 1):.1%}")
    print(f"warm vs cold:      {cold / warm:.2f}x faster (median of {rounds} rounds each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
