"""Benchmark: full-corpus ``recipe-sync render --api-out`` side by side with the upstream builder.

    python -m bench.render_corpus [--recipes DIR] [--runs N] [--workers 2 1]
        [--builder-tree DIR] [--tmpdir DIR...] [--no-split]

Each run is a fresh process writing every file into a new directory: ours is the real CLI
(interpreter start, imports, YAML loading, rendering, JSON writing); the builder is
``node <tree>/scripts/build-recipes-api.mjs`` run in a directory that holds the same recipe
files (symlinks to the corpus) and gets its own fresh ``public/``. Runs are PAIRED and
alternate (ours, builder, ours, builder, ...), so a load change on this shared machine hits
both sides alike; per pair we report the ratio ours/builder, and medians over the pairs.
Per run: wall time, CPU time (user + sys, with the worker processes) and peak RSS (``wait4``:
the largest single process of the tree).

Nothing is deleted until every run has finished: on ext4 without a journal (this machine
kind's disk) the kernel will not reuse an inode freed in the last 60-300 s and reads each such
inode while allocating a new one, so deleting one run's ~15,000 files just before the next
run made every file creation in it cost ~1 ms of kernel time (measured: 3,140 creations in
3.3 s right after deletions; ``perf`` shows ``recently_deleted`` under ``__ext4_new_inode``).
Keeping the outputs costs disk space (~0.2 GB per run), not time.

The builder available here may be older than the corpus (the recipes history bundle ends
2026-07-02, the corpus is of 2026-08-21): it then skips what its version cannot render, so the
corpus ratio compares unequal work (a per-rendering figure is printed beside it). Both sides are
therefore also timed on the builder tree's own recipe data, which both render alike
("equal work"; ``--no-equal-work`` skips it).

The builder needs node on PATH and a vllm-project/recipes source tree that has
``scripts/build-recipes-api.mjs`` and js-yaml installed (``npm install js-yaml`` in the
tree): ``--builder-tree DIR`` or ``$RECIPE_SYNC_BUILDER_TREE``. Without them the builder is
skipped (said so) and only our figures are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.shared_data import corpus_dir

BUILDER_ENV = "RECIPE_SYNC_BUILDER_TREE"
BUILDER_SCRIPT = "scripts/build-recipes-api.mjs"
# the recipe data the builder reads from its working directory
CORPUS_ENTRIES = ("models", "strategies", "kv_store", "quickstart", "taxonomy.yaml")
CORPUS_ENTRIES += ("platforms.yaml",)
WALL_GOAL = 0.35  # issue #32: render --api-out at most 0.35x the builder's wall time
RSS_GOAL = 0.5  # the earlier goal for peak memory, which #32 keeps (not above today's)
ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    rss_mib: float


def timed(command: Sequence[str], cwd: Path) -> Run:
    """Run ``command`` to completion; wall, user+sys CPU and peak RSS of its process tree."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    errors = child.stderr.read().decode(errors="replace") if child.stderr else ""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    child.returncode = code
    if code != 0:
        raise SystemExit(f"{command[0]} failed ({code}): {errors[-2000:]}")
    # ru_maxrss is KiB on Linux: the largest single process among the child and its children
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def run_ours(recipes: Path, out: Path, workers: int) -> Run:
    command = [sys.executable, "-m", "bot", "render", "--recipes", str(recipes)]
    return timed([*command, "--api-out", str(out), "--workers", str(workers)], ROOT)


# ---------------------------------------------------------------------------- the builder


@dataclass(frozen=True)
class Builder:
    node: str
    script: Path


def find_builder(named: Path | None) -> tuple[Builder | None, str]:
    """The upstream builder if it can run here, else None and why not."""
    tree = named or (Path(os.environ[BUILDER_ENV]) if os.environ.get(BUILDER_ENV) else None)
    if tree is None:
        return None, f"no builder tree: pass --builder-tree DIR or set ${BUILDER_ENV}"
    node = shutil.which("node")
    if node is None:
        return None, "node is not on PATH"
    script = tree / BUILDER_SCRIPT
    if not script.is_file():
        return None, f"{tree} has no {BUILDER_SCRIPT} (a vllm-project/recipes checkout has it)"
    if not (tree / "node_modules" / "js-yaml" / "package.json").is_file():
        return None, f"js-yaml is not installed in {tree} (npm install js-yaml there)"
    return Builder(node, script.resolve()), ""


def builder_root(recipes: Path, where: Path, name: str) -> Path:
    """A working directory for the builder: the corpus's recipe data, by symlink."""
    root = where / name
    root.mkdir()
    for name in CORPUS_ENTRIES:
        if (recipes / name).exists():
            (root / name).symlink_to((recipes / name).resolve())
    return root


def copy_recipe_data(tree: Path, to: Path) -> Path:
    """A plain copy of a tree's recipe data (ours reads no symlinks: a PR could plant one)."""
    to.mkdir()
    for name in CORPUS_ENTRIES:
        found = tree / name
        if found.is_dir():
            shutil.copytree(found, to / name)
        elif found.is_file():
            shutil.copy2(found, to / name)
    return to


def run_builder(builder: Builder, recipes: Path, where: Path, name: str) -> Run:
    """One builder run in its own new working directory (so its ``public/`` is new)."""
    return timed([builder.node, str(builder.script)], builder_root(recipes, where, name))


def count_files(top: Path) -> tuple[int, int]:
    """(files, files under a ``hw`` directory) below ``top``."""
    files = renderings = 0
    for folder, _, names in os.walk(top):
        files += len(names)
        if "/hw" in folder[len(str(top)) :]:
            renderings += len(names)
    return files, renderings


# ---------------------------------------------------------------------------- in-process split


def in_process_split(recipes: Path, scratch: Path) -> dict[str, tuple[float, float]]:
    """One single-process pass, phase by phase: name → (wall s, CPU s)."""
    clock = [(time.perf_counter(), time.process_time())]

    def lap() -> None:
        clock.append((time.perf_counter(), time.process_time()))

    sys.path.insert(0, str(ROOT))
    from bot.recipes.api import build_api, encoded_files, write_encoded
    from bot.recipes.repo import load_recipes
    from bot.sources import DirectorySource

    lap()
    repo = load_recipes(DirectorySource(recipes))
    lap()
    files = build_api(repo)
    lap()
    encoded = encoded_files(repo)
    lap()
    write_encoded(scratch / "floor", encoded)
    lap()
    names = [
        "import the renderer",
        "load YAML (recipes + taxonomy/strategies/kv_store)",
        f"render the {len(files)} hw files in memory (build_api)",
        f"render + JSON-encode all {len(encoded)} files",
        "write those bytes only (the filesystem floor)",
    ]
    return {
        name: (after[0] - before[0], after[1] - before[1])
        for name, before, after in zip(names, clock[:-1], clock[1:], strict=True)
    }


def split_in_child(recipes: Path, scratch: Path) -> dict[str, tuple[float, float]]:
    """The in-process split in a child, so this process stays small."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.render_corpus", "--split", str(recipes), str(scratch)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, tuple[float, float]] = json.loads(done.stdout.splitlines()[-1])
    return found


# ---------------------------------------------------------------------------- report


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def describe(runs: Sequence[Run]) -> str:
    walls = [r.wall for r in runs]
    return (
        f"{median(walls):6.2f} s ({min(walls):.2f}-{max(walls):.2f})  "
        f"CPU {median([r.cpu for r in runs]):5.2f} s  "
        f"peak {median([r.rss_mib for r in runs]):5.1f} MiB"
    )


def measure(
    args: argparse.Namespace,
    builder: Builder | None,
    where: Path | None,
    recipes: Path,
    split: bool,
) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="render-bench-", dir=where))
    print(f"\n== {recipes}: output under {scratch.parent} ({filesystem(scratch)}) ==")
    try:
        # warm-up: page cache and the file counts. Our modules are byte-compiled first, as
        # an installed package is (imports would not write them with PYTHONDONTWRITEBYTECODE)
        subprocess.run([sys.executable, "-m", "compileall", "-q", "bot"], cwd=ROOT, check=True)
        run_ours(recipes, scratch / "warmup", args.workers[0])
        ours_files = count_files(scratch / "warmup")
        print(f"ours writes {ours_files[0]:,} files ({ours_files[1]:,} under hw/)")
        theirs = (0, 0)
        if builder is not None:
            run_builder(builder, recipes, scratch, "builder-warmup")
            theirs = count_files(scratch / "builder-warmup" / "public")
            print(f"the builder writes {theirs[0]:,} files ({theirs[1]:,} under hw/)")
        for workers in args.workers:
            pairs: list[tuple[Run, Run | None]] = []
            for index in range(args.runs):
                out = scratch / f"w{workers}-{index}"
                ours = run_ours(recipes, out, workers)
                theirs_run = (
                    run_builder(builder, recipes, scratch, f"builder-w{workers}-{index}")
                    if builder
                    else None
                )
                pairs.append((ours, theirs_run))
            report(workers, pairs, (ours_files[1], theirs[1]))
        if split:
            split = split_in_child(recipes, scratch / "split")
            print("in-process split (1 process, one run; wall s / CPU s):")
            for name, (wall, cpu) in split.items():
                print(f"  {wall:6.2f} / {cpu:5.2f}  {name}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def report(
    workers: int, pairs: Sequence[tuple[Run, Run | None]], renderings: tuple[int, int]
) -> None:
    """Medians and paired ratios; ``renderings``: (ours, the builder's) files under hw/."""
    ours = [a for a, _ in pairs]
    mine, builders = renderings
    print(f"\n-- {workers} worker(s), {len(pairs)} paired runs (ours, builder alternating) --")
    print(f"  ours     {describe(ours)}  {mine / median([r.wall for r in ours]):,.0f} hw/s")
    if any(b is None for _, b in pairs):
        return
    theirs = [b for _, b in pairs if b is not None]
    print(f"  builder  {describe(theirs)}")
    ratios = {
        "wall": [a.wall / b.wall for a, b in zip(ours, theirs, strict=True)],
        "CPU": [a.cpu / b.cpu for a, b in zip(ours, theirs, strict=True)],
        "peak RSS": [a.rss_mib / b.rss_mib for a, b in zip(ours, theirs, strict=True)],
    }
    for name, values in ratios.items():
        listed = " ".join(f"{v:.2f}" for v in values)
        print(f"  ratio {name:<8} median {median(values):.2f}  per pair: {listed}")
    wall, rss = median(ratios["wall"]), median(ratios["peak RSS"])
    if builders and builders != mine:
        # the two wrote different numbers of renderings: the wall ratio is not like for like
        per = wall * builders / mine
        print(
            f"  per rendering: {per:.2f}x the builder's wall time per rendering (ours "
            f"{mine:,}, the builder's {builders:,}: their versions render different sets)"
        )
    met = wall <= WALL_GOAL and rss <= RSS_GOAL
    print(
        f"  goal (<= {WALL_GOAL}x wall, <= {RSS_GOAL}x peak RSS) {'met' if met else 'NOT met'}: "
        f"{wall:.2f}x wall, {rss:.2f}x peak RSS"
    )


def filesystem(path: Path) -> str:
    """The mount's filesystem type (tmpfs vs a disk changes the write cost a lot)."""
    best, kind = "", "?"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            _, mount, fstype, *_ = line.split()
            inside = str(path).startswith(mount.rstrip("/") + "/") or str(path) == mount
            if inside and len(mount) > len(best):
                best, kind = mount, fstype
    except OSError:
        pass
    return kind


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--split"]:  # internal: the in-process split, printed as JSON
        print(json.dumps(in_process_split(Path(argv[1]), Path(argv[2]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipes", type=Path, default=None, help="default: the shared corpus")
    parser.add_argument("--runs", type=int, default=5, help="pairs per worker count")
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 1])
    parser.add_argument(
        "--builder-tree",
        type=Path,
        default=None,
        help=f"recipes source tree with {BUILDER_SCRIPT} + js-yaml (default ${BUILDER_ENV})",
    )
    parser.add_argument(
        "--tmpdir",
        type=Path,
        nargs="+",
        default=None,
        help="where output dirs go (default: $TMPDIR, and /dev/shm when it exists)",
    )
    parser.add_argument("--no-split", dest="split", action="store_false")
    parser.add_argument(
        "--no-equal-work",
        dest="equal_work",
        action="store_false",
        help="skip the second comparison on the builder tree's own recipe data",
    )
    args = parser.parse_args(argv)
    args.recipes = args.recipes or corpus_dir()
    places: list[Path | None] = list(args.tmpdir or [None])
    if args.tmpdir is None and Path("/dev/shm").is_dir():
        places.append(Path("/dev/shm"))
    builder, why = find_builder(args.builder_tree)

    print(f"corpus   {args.recipes}")
    print(
        f"machine  {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.machine()}"
        f", load average {os.getloadavg()[0]:.2f} at start"
    )
    if builder is None:
        print(f"builder  SKIPPED: {why}; only our figures are measured")
    else:
        version = subprocess.run([builder.node, "--version"], capture_output=True, text=True)
        print(f"builder  {builder.node} {version.stdout.strip()} {builder.script}")
    print(f"runs     {args.runs} pairs per setting, medians reported; fresh output dir per run")
    for where in places:
        measure(args, builder, where, args.recipes, args.split)
    if builder is not None and args.equal_work:
        # like for like: a builder older than the corpus skips what it cannot render, so it
        # is also timed on its own tree's recipe data, which both sides render alike
        tree = builder.script.parents[1]
        print(f"\nequal work: both render the builder tree's own recipe data ({tree})")
        with tempfile.TemporaryDirectory(prefix="render-bench-tree-") as holder:
            own = copy_recipe_data(tree, Path(holder) / "recipes")
            for where in places:
                measure(args, builder, where, own, False)
    print(
        "\nCPU is user+sys of the process and its workers; peak is the largest single process"
        "\n(2 workers share the parent's pages copy-on-write; the 1-worker row is the whole"
        f"\nfootprint). Load average at end {os.getloadavg()[0]:.2f}: other processes on the"
        "\nmachine inflate wall time; the paired ratios are the comparable figures."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
