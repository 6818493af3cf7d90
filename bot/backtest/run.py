"""Replay merged benchmark PRs through the alignment engine (:func:`bot.align.run.align`).

For each PR: its base is the first parent and its head the merge commit; the recipes are the
recipes main commit current at the merge (or a plain directory for every PR). A PR whose diff
touches no benchmark config, script or runner file is reported without loading anything.
Results are cached in a JSON-lines file keyed by (bench sha, recipes sha, rules hash), so an
interrupted backtest resumes where it stopped. Within a process the PRs share the engine's
caches (:class:`~bot.align.caches.EngineCaches`): script evaluations reused while every file
they read is unchanged, one recipes tree per commit with its renderings, and the
classification of launch lines that come out as before; rows equal a cold run's.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from bot.align.caches import EngineCaches, evaluation_cache
from bot.align.result import AlignInputs, AlignRun
from bot.align.run import align
from bot.backtest.history import (
    Commit,
    MergedPR,
    RecipesTimeline,
    changed_paths,
    default_branch,
    first_parent_log,
    is_git_repo,
    merged_prs,
    open_moments,
)
from bot.backtest.launches import (
    added_lines,
    edit_row,
    guide_sections,
    held_settings,
    launch_digests,
)
from bot.backtest.maintainers import maintainer_edits
from bot.backtest.model import BacktestReport, EditRow, PRRow, mark_duplicates
from bot.benchmarks.extractor import HANDLERS
from bot.errors import RecipeSyncError
from bot.rules import Rules, default_rules, load_rules
from bot.shell.shared import SharedEvaluations
from bot.sources import DirectorySource, FileSource, GitTreeSource
from bot.words import count

RELEVANT = ("benchmarks/", "configs/", ".github/configs/", "runners/")
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Job:
    pr: MergedPR
    recipes_sha: str  # "" with a plain recipes directory
    citing: tuple[Commit, ...]  # later recipes commits citing the PR
    moment: int = 0  # when the replay happens (the merge, or a moment the PR was open)


@dataclass(frozen=True)
class Settings:
    bench_repo: Path
    recipes: Path
    recipes_is_git: bool
    rules_dir: Path | None
    bench_name: str = "SemiAnalysisAI/InferenceX"
    recipes_name: str = "vllm-project/recipes"
    # the branches (or commits) whose first-parent histories are replayed; "": the default
    bench_ref: str = ""
    recipes_ref: str = ""
    # evaluations and recipes trees shared across PRs (off: each PR starts cold, the reference
    # the benchmark and the tests compare with)
    engine_caches: bool = True
    # record each PR's launch digests and guide sections (the agreement score's linker)
    record_launches: bool = False


# packages a replayed row does not depend on: scoring, the CLI, the App, the audit, texts
NOT_ENGINE = ("agreement", "audit", "commands", "github", "present", "service", "state")


def rules_hash(rules_dir: Path | None) -> str:
    """Hash of the rules and of the engine's code: a cached result of other rules or another
    engine is never reused (the scoring and presentation code do not change a row)."""
    digest = hashlib.sha256()
    folders = [rules_dir or ROOT / "rules", ROOT / "bot"]
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder).parts
            if folder.name == "bot" and relative and relative[0] in NOT_ENGINE:
                continue
            if path.is_file() and path.suffix in (".py", ".yaml", ".yml"):
                digest.update(str(path.relative_to(folder)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


Replay = Literal["merge", "open"]


def plan_jobs(
    settings: Settings,
    *,
    since: str | None = None,
    until: str | None = None,
    only: Sequence[int] = (),
    replay: Replay = "merge",
) -> tuple[tuple[Job, ...], RecipesTimeline | None]:
    """One job per merged PR of the window, against the recipes main current at its merge
    (``replay="merge"``) or at the latest moment the PR was certainly open (``"open"``,
    :func:`~bot.backtest.history.open_moments`: where the App, labelled on the open PR,
    would have proposed)."""
    branch = settings.bench_ref or default_branch(settings.bench_repo)
    log = first_parent_log(settings.bench_repo, branch)
    prs = merged_prs(log, since=since, until=until, only=only)
    if not settings.recipes_is_git:
        return tuple(Job(pr, "", (), pr.time) for pr in prs), None
    moments = open_moments(merged_prs(log)) if replay == "open" else {}
    recipes_branch = settings.recipes_ref or default_branch(settings.recipes)
    timeline = RecipesTimeline(first_parent_log(settings.recipes, recipes_branch, bodies=True))
    jobs: list[Job] = []
    for pr in prs:
        moment = moments.get(pr.number, pr.time)
        current = timeline.at(moment) or (timeline.commits[0] if timeline.commits else None)
        sha = current.sha if current is not None else ""
        citing = tuple(c for c in timeline.citing(pr.number) if c.time >= pr.time)
        jobs.append(Job(pr, sha, citing, moment))
    return tuple(jobs), timeline


def _edits(run: AlignRun) -> tuple[EditRow, ...]:
    return tuple(edit_row(o.plan, e) for o in run.patches for e in o.plan.edits)


def _offered(run: AlignRun) -> tuple[EditRow, ...]:
    """The candidates each recipe's plan offers as unticked checkboxes (any outcome: a
    recipe with only offered candidates opens no PR, its findings are still recorded)."""
    return tuple(edit_row(o.plan, e) for o in run.outcomes for e in o.plan.offered)


def classify(run: AlignRun) -> tuple[str, str]:
    """(outcome, reason) of one alignment run."""
    patches = run.patches
    if patches:
        files = ", ".join(o.recipe_path for o in patches)
        edits = sum(len(o.plan.edits) for o in patches)
        sections = sum(1 for o in patches for g in o.guide if g.written)
        guide = f" and {count(sections, 'reproduction section')} in the guide" if sections else ""
        return "alignment PR", f"{count(edits, 'edit')}{guide} to {files}"
    failed = [o for o in run.outcomes if o.status == "failed"]
    if failed:
        return "no edit found", "; ".join(o.reason for o in failed)
    blocked = [o for o in run.outcomes if o.status == "blocked"]
    if blocked:
        return "blocked", "; ".join(f"{o.recipe_path}: {o.reason}" for o in blocked)
    offered = [o for o in run.outcomes if o.status == "offered"]
    if offered:
        return "offered", "; ".join(f"{o.recipe_path}: {o.reason}" for o in offered)
    compared = [o for o in run.outcomes if not o.context_only]
    if compared:
        return "aligned", ", ".join(f"{o.recipe_path}: {o.reason}" for o in compared)
    if not run.change.keys:
        removed = run.change.removed_keys
        if removed:
            return "no vLLM change", "the PR only removes config keys: " + ", ".join(removed)
        return "no vLLM change", "no master-config key is affected by the changed files"
    if not run.change.in_scope:
        unchanged = run.change.unchanged
        if unchanged:
            more = f" (+{len(unchanged) - 3} more)" if len(unchanged) > 3 else ""
            named = "; ".join(f"{k.key}: {k.unchanged}" for k in unchanged[:3])
            return "no vLLM change", f"no vLLM launch line changes: {named}{more}"
        why = sorted({k.out_of_scope or "" for k in run.change.keys})
        return "out of scope", "; ".join(why)
    reasons: dict[str, dict[str, None]] = {}
    for key in run.keys:
        if key.key.unchanged is not None:
            continue  # the PR leaves its launch lines as they were
        if key.problem is not None:
            reasons.setdefault("out of scope" if not key.error else "unmapped", {})[
                f"{key.key.key}: {key.problem}"
            ] = None
        for point in key.points:
            status = "context only" if point.status == "context" else "unmapped"
            if point.status in ("represents", "other-point"):
                status = "context only"
            reasons.setdefault(status, {})[f"{key.key.key}: {point.reason or point.status}"] = None
    for outcome in ("context only", "unmapped", "out of scope"):
        if outcome in reasons:
            found = list(reasons[outcome])
            more = f" (+{len(found) - 3} more)" if len(found) > 3 else ""
            return outcome, "; ".join(found[:3]) + more
    return "unmapped", "no point of the affected keys was extracted"


class Backtester:
    """One per process: repositories and rules are opened once and reused across PRs."""

    def __init__(self, settings: Settings, shared: SharedEvaluations | None = None) -> None:
        self.settings = settings
        self.rules: Rules = (
            load_rules(settings.rules_dir) if settings.rules_dir is not None else default_rules()
        )
        self._plain: FileSource | None = None
        # shared by every PR this process replays: results equal a cold run's (tested)
        self.caches = EngineCaches(evaluation_cache(shared)) if settings.engine_caches else None

    def recipes_source(self, sha: str) -> FileSource:
        if not self.settings.recipes_is_git:
            if self._plain is None:
                self._plain = DirectorySource(self.settings.recipes)
            return self._plain
        return GitTreeSource(self.settings.recipes, sha)

    def row(self, job: Job) -> PRRow:
        started = time.perf_counter()
        pr = job.pr
        base = PRRow(pr.number, pr.sha, pr.base, pr.day, pr.title, job.recipes_sha, "error", "")
        try:
            row = self._row(job, base)
        except RecipeSyncError as err:
            row = replace(base, outcome="bad input", reason=str(err))
        except Exception as err:
            row = replace(base, outcome="error", reason=f"{type(err).__name__}: {err}")
        if job.citing:
            try:
                found = maintainer_edits(self.settings.recipes, job.citing, row.edits)
            except RecipeSyncError as err:
                row = replace(row, notes=(*row.notes, f"maintainers' change not read: {err}"))
            else:
                row = replace(row, maintainers=found)
        return replace(row, seconds=time.perf_counter() - started)

    def _row(self, job: Job, base: PRRow) -> PRRow:
        pr = job.pr
        paths = changed_paths(self.settings.bench_repo, pr.base, pr.sha)
        if not any(p.startswith(RELEVANT) for p in paths):
            return replace(
                base,
                outcome="no vLLM change",
                reason=f"no benchmark config, script or runner file changed ({len(paths)} files)",
            )
        recipes = self.recipes_source(job.recipes_sha)
        if self.settings.recipes_is_git and not recipes.exists("taxonomy.yaml"):
            # the recipes repo before its YAML format (taxonomy.yaml, 2026-04): nothing to align
            return replace(
                base,
                outcome="out of scope",
                reason=f"the recipes at {job.recipes_sha[:12]} predate the YAML recipes "
                "(no taxonomy.yaml): no recipe to align with",
            )
        bench = GitTreeSource(self.settings.bench_repo, pr.sha)
        inputs = AlignInputs(
            bench=bench,
            bench_base=GitTreeSource(self.settings.bench_repo, pr.base),
            recipes=recipes,
            rules=self.rules,
            bench_repo=self.settings.bench_name,
            pr_number=pr.number,
            head_sha=pr.sha,
            base_sha=pr.base,
            recipes_repo=self.settings.recipes_name,
            recipes_sha=job.recipes_sha,
            caches=self.caches,
        )
        run = align(inputs)
        outcome, reason = classify(run)
        notes = run.change.notes + tuple(
            f"recipe file {path} does not load: {why}" for path, why in run.broken_recipes
        )
        row = replace(
            base,
            outcome=outcome,
            reason=reason,
            files=tuple(o.recipe_path for o in run.patches),
            edits=_edits(run),
            notes=notes,
            keys=tuple(k.key for k in run.change.keys),
            added_lines=sum(added_lines(o.patch) for o in run.patches),
            offered=_offered(run),
            guide=guide_sections(run),
        )
        if self.settings.record_launches:
            row = replace(row, launches=launch_digests(run), held=held_settings(run))
        return row


# ------------------------------------------------------------------------------ cache


def cache_key(job: Job, rules: str, settings: Settings) -> str:
    recorded = ":launches" if settings.record_launches else ""
    return f"{job.pr.sha}:{job.recipes_sha or 'dir'}:{rules}{recorded}"


def read_cache(path: Path | None) -> dict[str, PRRow]:
    if path is None or not path.exists():
        return {}
    found: dict[str, PRRow] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
            found[data["key"]] = PRRow.from_json(data["row"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by an interrupted run
    return found


# ------------------------------------------------------------------------------ workers

_WORKER: Backtester | None = None


def _init(settings: Settings, shared: Path | None) -> None:
    global _WORKER
    store = SharedEvaluations(shared, (HANDLERS,)) if shared is not None else None
    _WORKER = Backtester(settings, store)


def _work(job: Job) -> PRRow:
    assert _WORKER is not None
    return _WORKER.row(job)


class Replayer:
    """Where jobs are replayed: in this process, or in long-lived worker processes (``workers``
    > 1) that each keep their :class:`Backtester`, and so its caches (evaluations, recipes
    trees, parses), from one batch of jobs to the next: the score replays its PRs, then the
    same PRs against other recipes commits, and the second batch finds the benchmark side
    already evaluated. Close it (or use it as a context manager) to end the workers."""

    def __init__(self, settings: Settings, workers: int = 1) -> None:
        self.settings = settings
        self.workers = workers
        self._local: Backtester | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._shared: Path | None = None  # the workers' shared evaluations

    def __enter__(self) -> Replayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        if self._shared is not None:
            shutil.rmtree(self._shared, ignore_errors=True)
            self._shared = None

    def rows(self, jobs: Sequence[Job]) -> Iterator[PRRow]:
        """The row of every job, in order."""
        if self._pool is None and (self.workers <= 1 or len(jobs) < 4):
            if self._local is None:
                self._local = Backtester(self.settings)
            for job in jobs:
                yield self._local.row(job)
            return
        if self._pool is None:
            # what one worker evaluated, the others take instead of evaluating it again
            # (07-01…07-10 in two workers: 13,794 evaluations, 8,154 distinct)
            if self.settings.engine_caches:
                self._shared = Path(tempfile.mkdtemp(prefix="recipe-sync-evaluations-"))
            self._pool = ProcessPoolExecutor(
                self.workers, initializer=_init, initargs=(self.settings, self._shared)
            )
        # runs of consecutive PRs per worker: each worker's caches (evaluations, recipes
        # trees, parses) serve neighbours, which share most files; a dozen runs per worker so
        # one slow stretch of history does not leave the other idle (July's score, 251 PRs in
        # runs of 10 instead of 20: 0.95x wall and CPU, three pairs, scorecards equal)
        chunk = max(4, len(jobs) // (self.workers * 12))
        yield from self._pool.map(_work, jobs, chunksize=chunk)


def run_backtest(
    settings: Settings,
    *,
    since: str | None = None,
    until: str | None = None,
    only: Sequence[int] = (),
    jobs: int = 1,
    cache: Path | None = None,
    progress: Callable[[int, int, PRRow], Any] | None = None,
) -> BacktestReport:
    planned, _ = plan_jobs(settings, since=since, until=until, only=only)
    with Replayer(settings, jobs) as replayer:
        rows = run_jobs(settings, planned, replayer, cache=cache, progress=progress)
    rows = mark_duplicates(rows)  # the App opens one PR per recipe change
    recipes_label = str(settings.recipes) + (" (git history)" if settings.recipes_is_git else "")
    return BacktestReport(
        bench=str(settings.bench_repo),
        recipes=recipes_label,
        rows=rows,
        bench_name=settings.bench_name,
        recipes_name=settings.recipes_name,
    )


def run_jobs(
    settings: Settings,
    planned: Sequence[Job],
    replayer: Replayer,
    *,
    cache: Path | None = None,
    progress: Callable[[int, int, PRRow], Any] | None = None,
) -> tuple[PRRow, ...]:
    """The row of every job, in order, replayed by ``replayer``; rows of the cache file are
    reused, new ones appended."""
    rules = rules_hash(settings.rules_dir)
    cached = read_cache(cache)
    rows: dict[int, PRRow] = {}
    todo: list[Job] = []
    for index, job in enumerate(planned):
        hit = cached.get(cache_key(job, rules, settings))
        if hit is not None:
            rows[index] = hit
        else:
            todo.append(job)
    index_of = {id(job): i for i, job in enumerate(planned)}
    done = len(rows)
    handle = cache.open("a", encoding="utf-8") if cache is not None else None
    try:
        for job, row in zip(todo, replayer.rows(todo), strict=True):
            rows[index_of[id(job)]] = row
            done += 1
            if handle is not None:
                record = {"key": cache_key(job, rules, settings), "row": row.to_json()}
                handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
                handle.flush()
            if progress is not None:
                progress(done, len(planned), row)
    finally:
        if handle is not None:
            handle.close()
    return tuple(rows[i] for i in range(len(planned)))


def settings_for(bench_repo: Path, recipes: Path, rules_dir: Path | None = None) -> Settings:
    """A recipes path is a git history when it is a repository of its own (or bare);
    otherwise a plain directory used for every PR."""
    own = (recipes / ".git").exists() or (
        (recipes / "HEAD").is_file() and (recipes / "objects").is_dir()
    )
    return Settings(bench_repo, recipes, own and is_git_repo(recipes), rules_dir)
