"""Benchmark: ``recipe-sync align`` of real InferenceX PRs, cold and warm, with references.

    python -m bench.align_real --bench-repo DIR --recipes DIR [--prs 2513,2580,...]
        [--runs N] [--baseline CHECKOUT]

Each PR is aligned at its merge commit against its first parent, with the recipes main of its
merge day (as the backtest replays it), the way the CLI runs it:

* cold: ``python -m bot align … --out TMP``, a new process each run (imports, git, parses,
  everything); wall, CPU and peak memory from the kernel's accounting of the process;
* warm: in this process, what the App's worker does on a re-sync: :func:`bot.align.run.align`
  and :func:`bot.present.present` with one :class:`~bot.align.caches.EngineCaches` that has
  seen every PR once (blobs, parses, evaluations, recipes trees cached);
* the floor it is compared with, measured here side by side: the time libyaml (``yaml.compose``
  with ``CSafeLoader``) needs to compose the files a PR's change is read from (both master
  configs and ``perf-changelog.yaml``, at base and head);
* with ``--baseline CHECKOUT`` (another checkout of recipe-sync, e.g. ``git worktree add
  /tmp/base main``), its cold runs too, alternating with these run for run, and the ratio
  pair by pair (this checkout / baseline): a machine whose speed drifts moves both alike.

Prints per PR and the medians over all PRs. Nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import yaml

from bench.procs import Run, median, timed
from bot.align.caches import EngineCaches
from bot.align.run import align
from bot.backtest.history import (
    MergedPR,
    RecipesTimeline,
    default_branch,
    first_parent_log,
    merged_prs,
)
from bot.commands.align import inputs_from_args
from bot.commands.main import build_parser
from bot.present import present
from bot.sources import GitTreeSource

PRS = (2513, 2580, 2707, 1951, 2616)
ROOT = Path(__file__).resolve().parents[1]
COMPOSED = ("configs/amd-master.yaml", "configs/nvidia-master.yaml", "perf-changelog.yaml")


def _jobs(bench: Path, recipes: Path, numbers: tuple[int, ...]) -> list[tuple[MergedPR, str]]:
    prs = merged_prs(first_parent_log(bench, default_branch(bench)), only=numbers)
    timeline = RecipesTimeline(first_parent_log(recipes, default_branch(recipes), bodies=True))
    found = []
    for pr in sorted(prs, key=lambda p: numbers.index(p.number)):
        commit = timeline.at(pr.time) or timeline.commits[-1]
        found.append((pr, commit.sha))
    return found


def _argv(bench: Path, recipes: Path, pr: MergedPR, recipes_sha: str, out: Path) -> list[str]:
    return [
        "align", "--bench-repo", str(bench), "--bench-ref", pr.sha, "--bench-base", pr.base,
        "--bench-name", "SemiAnalysisAI/InferenceX", "--bench-pr", str(pr.number),
        "--recipes", str(recipes), "--recipes-ref", recipes_sha,
        "--recipes-name", "vllm-project/recipes", "--out", str(out),
    ]  # fmt: skip


def _compose_seconds(bench: Path, pr: MergedPR, runs: int) -> float:
    """Best of ``runs``: libyaml composing the master configs and the changelog, both sides."""
    texts = []
    for ref in (pr.base, pr.sha):
        tree = GitTreeSource(bench, ref)
        texts += [tree.read_bytes(p) for p in COMPOSED if tree.exists(p)]
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        for text in texts:
            yaml.compose(text, Loader=yaml.CSafeLoader)
        best = min(best, time.perf_counter() - started)
    return best


def _warm(
    args: argparse.Namespace, jobs: list[tuple[MergedPR, str]], out: Path
) -> list[tuple[float, float]]:
    """Median (wall, CPU) seconds of each PR's align + present with caches that have seen
    every PR (CPU: this process's, which a loaded machine does not inflate as it does wall)."""
    caches = EngineCaches()

    def once(pr: MergedPR, recipes_sha: str) -> tuple[float, float]:
        argv = _argv(args.bench_repo, args.recipes, pr, recipes_sha, out)
        parsed = build_parser(argv).parse_args(argv)
        started, cpu = time.perf_counter(), time.process_time()
        inputs = replace(inputs_from_args(parsed), caches=caches)
        present(align(inputs))
        return time.perf_counter() - started, time.process_time() - cpu

    for pr, sha in jobs:  # the warm-up: every PR once
        once(pr, sha)
    found = []
    for pr, sha in jobs:
        runs = [once(pr, sha) for _ in range(args.runs)]
        found.append((median([r[0] for r in runs]), median([r[1] for r in runs])))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bench-repo", type=Path, required=True)
    parser.add_argument("--recipes", type=Path, required=True)
    parser.add_argument("--prs", default=",".join(map(str, PRS)))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout, run cold alongside")
    args = parser.parse_args()
    numbers = tuple(int(n) for n in args.prs.split(","))
    jobs = _jobs(args.bench_repo, args.recipes, numbers)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        cold: list[list[Run]] = []
        base: list[list[Run]] = []
        for pr, sha in jobs:
            command = [
                sys.executable,
                "-m",
                "bot",
                *_argv(args.bench_repo, args.recipes, pr, sha, out),
            ]
            timed(command, ROOT)  # warm the disk and git's object store first
            mine, theirs = [], []
            for _ in range(args.runs):
                mine.append(timed(command, ROOT))
                if args.baseline is not None:
                    theirs.append(timed(command, args.baseline))
            cold.append(mine)
            base.append(theirs)
        warm = _warm(args, jobs, out)
    floors = [_compose_seconds(args.bench_repo, pr, args.runs) for pr, _ in jobs]
    print(f"{len(jobs)} PRs, {args.runs} runs each (medians)")
    print("PR      cold s  CPU s  peak MiB  warm s  CPU s  libyaml s  cold/libyaml  warm/libyaml"
          + ("  baseline s  ratio" if args.baseline else ""))  # fmt: skip
    ratios: list[float] = []
    for (pr, _), mine, theirs, hot, floor in zip(jobs, cold, base, warm, floors, strict=True):
        wall = median([r.wall for r in mine])
        line = (
            f"#{pr.number:<6} {wall:6.2f} {median([r.cpu for r in mine]):6.2f} "
            f"{max(r.peak_mib for r in mine):9.0f} {hot[0]:7.3f} {hot[1]:6.3f} {floor:10.3f} "
            f"{wall / floor:13.1f} {hot[0] / floor:13.1f}"
        )
        if theirs:
            pairs = [a.wall / b.wall for a, b in zip(mine, theirs, strict=True)]
            ratios += pairs
            line += f" {median([r.wall for r in theirs]):11.2f} {median(pairs):6.2f}"
        print(line)
    walls = [median([r.wall for r in mine]) for mine in cold]
    cpus = [median([r.cpu for r in mine]) for mine in cold]
    peak = max(r.peak_mib for m in cold for r in m)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"median over PRs: cold {median(walls):.2f} s (CPU {median(cpus):.2f} s), warm "
          f"{median([w[0] for w in warm]):.3f} s (CPU {median([w[1] for w in warm]):.3f} s), "
          f"libyaml floor {median(floors):.3f} s; peak {peak:.0f} MiB cold, "
          f"{own:.0f} MiB the warm process")  # fmt: skip
    if ratios:
        print(f"cold wall, this checkout / baseline, pair by pair: median {median(ratios):.2f} "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
