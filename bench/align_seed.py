"""Benchmark: one alignment run on the seed fixtures, and the regression matrix at corpus scale.

    python -m bench.align_seed [--runs N] [--corpus DIR] [--top K]

Seed: the whole ``align`` run (extraction, comparison, plan, matrix, texts, evidence from the
saved runs; the recipes builder is not run) and its phases, best of N runs each. The
reference, measured in the same process: ``build_api`` of the recipe before and after the
edit — the least any before/after regression check has to render. Corpus: the regression
matrix of the K recipes with the most API renderings (no edit, API renderings only) against
the same reference, so the cost of provenance rendering per file shows as a ratio.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bot.align.change import benchmark_change
from bot.align.compare import Comparer
from bot.align.evidence import collect
from bot.align.overlay import OverlaySource
from bot.align.plan import plan_recipe
from bot.align.quoted import recipes_names
from bot.align.regression import BuilderReport, regression_matrix
from bot.align.result import AlignInputs, AlignRun
from bot.align.run import align, key_result, outcome
from bot.align.targets import targets_by_recipe
from bot.benchmarks import load_bench_repo
from bot.evidence.source import DirRunSource
from bot.fixtures import BENCH_REPO_NAME, RECIPES_REPO_NAME, build_seed_fixtures
from bot.present import present
from bot.recipes import build_api, load_recipes
from bot.recipes.repo import with_recipe_files
from bot.rules import default_rules
from bot.shared_data import corpus_dir
from bot.sources import DirectorySource, GitTreeSource, git_blob_sha_at

T = TypeVar("T")
NOT_RUN = BuilderReport(False, True, "", "not run: benchmark")


def _timed(runs: int, work: Callable[[], T]) -> tuple[float, float, T]:
    """(best, median) seconds over ``runs`` calls, and the last result."""
    times: list[float] = []
    result: T | None = None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    assert result is not None
    return min(times), statistics.median(times), result


def _line(name: str, best: float, median: float, reference: float | None = None) -> str:
    ratio = f"   {best / reference:6.2f}x reference" if reference else ""
    return f"{name:<34} best {best * 1000:8.1f} ms   median {median * 1000:8.1f} ms{ratio}"


def seed(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="align-bench-") as tmp:
        fx = build_seed_fixtures(Path(tmp))
        assert fx.evidence_dir is not None
        inputs = AlignInputs(
            bench=GitTreeSource(fx.bench_repo, fx.bench_pr_head),
            bench_base=GitTreeSource(fx.bench_repo, fx.bench_base),
            recipes=GitTreeSource(fx.recipes_repo, fx.recipes_base),
            rules=default_rules(),
            runs=DirRunSource(fx.evidence_dir),
            bench_repo=BENCH_REPO_NAME,
            pr_number=fx.bench_pr_number,
            head_sha=fx.bench_pr_head,
            head_branch=fx.bench_pr_branch,
            recipes_repo=RECIPES_REPO_NAME,
            recipes_sha=fx.recipes_base,
            blob_sha_at=git_blob_sha_at(fx.bench_repo),
        )
        rules = inputs.rules
        run = align(inputs)
        (patched,) = run.patches
        path = patched.recipe_path
        assert patched.new_text is not None
        before = load_recipes(inputs.recipes)
        edited = OverlaySource(inputs.recipes, {path: patched.new_text})
        after = with_recipe_files(before, edited, [path])

        ref_best, ref_median, _ = _timed(
            runs, lambda: (build_api(before, {path}), build_api(after, {path}))
        )
        print("seed: SemiAnalysisAI/InferenceX#3058 → DeepSeek-V4.1-Flash (5 edits)")
        print(_line("reference: build_api before+after", ref_best, ref_median))
        best, median, _ = _timed(runs, lambda: align(inputs))
        print(_line("align (whole run)", best, median, ref_best))

        def load() -> tuple[object, ...]:
            head = load_bench_repo(inputs.bench, rules)
            base = load_bench_repo(inputs.bench_base, rules)  # type: ignore[arg-type]
            return head, base, load_recipes(inputs.recipes)

        best, median, (head, base, recipes) = _timed(runs, load)
        print(_line("  load repositories", best, median, ref_best))
        change = benchmark_change(base, head)  # type: ignore[arg-type]
        best, median, keys = _timed(
            runs,
            lambda: tuple(key_result(head, Comparer(recipes, rules), k) for k in change.keys),  # type: ignore[arg-type]
        )
        print(_line("  extract + map + compare (7 pts)", best, median, ref_best))
        best, median, evidence = _timed(
            runs,
            lambda: collect(
                inputs.runs,  # type: ignore[arg-type]
                head,  # type: ignore[arg-type]
                [k.key for k in change.in_scope],
                head_sha=inputs.head_sha,
                head_branch=inputs.head_branch,
                pr_number=inputs.pr_number,
                head_repo=None,
                repo=inputs.bench_repo,
                blob_sha_at=inputs.blob_sha_at,
                earlier_heads=(),
                rules=rules,
            ),
        )
        print(_line("  evidence (saved runs and logs)", best, median, ref_best))
        targets = targets_by_recipe(keys, head, evidence, rules)[path]  # type: ignore[arg-type]
        best, median, plan = _timed(
            runs,
            lambda: plan_recipe(recipes, inputs.recipes, rules, targets),  # type: ignore[arg-type]
        )
        print(_line("  plan (+ edit, invariants)", best, median, ref_best))
        best, median, matrix = _timed(
            runs,
            lambda: regression_matrix(
                recipes,  # type: ignore[arg-type]
                plan.after,  # type: ignore[arg-type]
                path,
                plan.edits,
                [t.profile for t in targets],
                NOT_RUN,
            ),
        )
        print(_line(f"  regression matrix ({len(matrix.rows)} renderings)", best, median, ref_best))
        found = outcome(inputs, recipes, plan)  # type: ignore[arg-type]
        names = recipes_names(recipes, [path])  # type: ignore[arg-type]
        shell = AlignRun(inputs.quoted(), names, change, keys, (found,), evidence)  # type: ignore[arg-type]
        best, median, _ = _timed(runs, lambda: present(shell))
        print(_line("  PR body, comment, check run", best, median, ref_best))


def corpus(directory: Path, top: int, runs: int) -> None:
    repo = load_recipes(DirectorySource(directory))
    sizes = []
    for recipe in repo.recipes:
        files = build_api(repo, {recipe.path})
        sizes.append((len(files), recipe.path))
    sizes.sort(reverse=True)
    print(f"\ncorpus: the {top} recipes with the most API renderings (no edit, API only)")
    total_matrix = total_ref = 0.0
    for count, path in sizes[:top]:
        ref_best, _, _ = _timed(runs, lambda p=path: (build_api(repo, {p}), build_api(repo, {p})))  # type: ignore[misc]
        best, median, matrix = _timed(
            runs,
            lambda p=path: regression_matrix(repo, repo, p, (), (), NOT_RUN),  # type: ignore[misc]
        )
        assert not matrix.moved
        total_matrix += best
        total_ref += ref_best
        name = path.removeprefix("models/")
        print(_line(f"  {name[:24]} ({count} files)", best, median, ref_best))
    print(
        f"  total: matrix {total_matrix:.2f} s, reference {total_ref:.2f} s, "
        f"ratio {total_matrix / total_ref:.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--corpus", type=Path, help="recipes corpus (default: the shared one)")
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args(argv)
    seed(args.runs)
    path = args.corpus or corpus_dir()
    if path.is_dir():
        corpus(path, args.top, max(1, args.runs // 2))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process: {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
