"""The whole-corpus audit: every vLLM config key and point of a benchmark repository against
the recipe renderings it corresponds to (docs/alignment.md §2-§4 applied to every key).

Functional core: :class:`Auditor` turns one config key into rows, with caches that make a
corpus cheap (each script parsed once by the repository's parser, each recipe profile mapped
and rendered once, each comparison computed once per identical launch line). Imperative
shell: :func:`run_audit` loads both repositories tolerantly, plans which keys are in scope,
and fans the keys out over a process pool when there is enough work.

Nothing raises out of a row: input errors become that row's status with their reason, and
an unexpected exception becomes ``unresolved (internal error: …)`` and is logged with its
traceback, so the audit always finishes.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bot.align.compare import Comparer, Comparison
from bot.align.profile import Profile, Unmapped, map_profile
from bot.align.reproduction import SectionPoint, guide_drift
from bot.audit.introduced import LineHistory, with_introductions
from bot.audit.launch import UnresolvedImpact, describe_unresolved, unresolved_impact
from bot.audit.load import BenchLoad, load_bench
from bot.audit.model import (
    AuditReport,
    AuditRow,
    FlagRow,
    GuideRow,
    KeyAudit,
    OutOfScope,
    Status,
)
from bot.audit.provenance import (
    bench_origin,
    locate_recipe_lines,
    recipe_origin,
    with_bench_origins,
)
from bot.benchmarks import BenchRepo, LaunchLine, MasterEntry, Point, extract, points
from bot.benchmarks.configs import ConfigNode
from bot.benchmarks.scope import multinode_reason, serves_vllm
from bot.errors import RecipeSyncError
from bot.recipes import Rendering
from bot.recipes.tolerant import RecipesLoad, load_recipes_tolerant
from bot.rules import Rules
from bot.shell import ScriptParser
from bot.sources import DirectorySource, FileSource, GitTreeSource
from bot.vllm import FlagDiff, Verdict
from bot.vllm.values import compact

log = logging.getLogger("recipe_sync.audit")

# Below this many points a process pool costs more than it saves (measured: bench/audit.py).
POOL_MIN_POINTS = 400

Progress = Callable[[int, str], None]  # (rows just finished, config key)


# --- comparison → row verdict -----------------------------------------------------------


@dataclass(frozen=True)
class Compared:
    """What a comparison says about a launch line, independent of which point ran it."""

    status: Status
    reason: str = ""
    flags: tuple[FlagRow, ...] = ()
    notes: tuple[str, ...] = ()
    diffs: tuple[FlagDiff, ...] = ()  # the differences the flags describe (script lines)
    recipe_file: str = ""


def _verdict(compared: Compared) -> str:
    if compared.status == "drifted":
        differing = [f.flag for f in compared.flags if f.drift]
        return f"drifted ({len(differing)}: {', '.join(differing)})"
    return compared.status + (f" ({compared.reason})" if compared.reason else "")


def _text(value: Any) -> str:
    return "" if value is None else compact(value)


def flag_row(
    diff: FlagDiff,
    knob: str = "",
    drift: bool | None = None,
    rendering: Rendering | None = None,
) -> FlagRow:
    return FlagRow(
        kind=diff.kind,
        flag=diff.flag,
        bench=_text(diff.bench_value),
        recipe=_text(diff.recipe_value),
        verdict=diff.verdict.value,
        reason=diff.reason,
        drift=diff.verdict in (Verdict.DIFFERS, Verdict.RECIPE_ONLY) if drift is None else drift,
        knob=knob,
        category=diff.category,
        recipe_at=recipe_origin(rendering, diff) if rendering is not None else "",
    )


RECIPE_FEATURE = (
    "a feature the recipe offers chat clients; the benchmark sends no such request "
    "(rules/knobs.yaml recipe_features): not drift"
)

_PARALLEL_NAMES = {
    "parallel.tensor_parallel_size": "TP",
    "parallel.data_parallel_size": "DP",
    "parallel.pipeline_parallel_size": "PP",
}


def parallelism_text(diffs: Iterable[FlagDiff], hardware: str) -> str:
    """``this point runs TP8; the recipe renders TP4 on mi355x``."""
    bench: list[str] = []
    recipe: list[str] = []
    for diff in diffs:
        name = _PARALLEL_NAMES.get(diff.key)
        if name is not None:
            bench.append(f"{name}{diff.bench_value if diff.bench_value is not None else 1}")
            recipe.append(f"{name}{diff.recipe_value if diff.recipe_value is not None else 1}")
        else:  # enable_expert_parallel
            bench.append("expert parallelism" if diff.bench_value else "no expert parallelism")
            recipe.append("expert parallelism" if diff.recipe_value else "no expert parallelism")
    return (
        f"this point runs {', '.join(bench)}; the recipe renders {', '.join(recipe)} on {hardware}"
    )


def judge(comparison: Comparison) -> Compared:
    """Status of a compared launch line (docs/alignment.md §4)."""
    parallel = comparison.parallelism_differs
    if parallel:
        return Compared("unmapped", parallelism_text(parallel, comparison.profile.hardware), (), ())
    drift = comparison.drift

    def row(diff: FlagDiff, counted: bool | None = None) -> FlagRow:
        knob = comparison.knob(diff)
        kind = knob.value if knob is not None else "image"
        return flag_row(diff, kind, counted, comparison.rendering)

    features = tuple(
        replace(row(d, False), reason=RECIPE_FEATURE, recipe_feature=True)
        for d in comparison.recipe_features
    )
    flags = (
        tuple(row(d) for d in drift)
        + tuple(row(d) for d in comparison.unknown)
        + tuple(row(d, False) for d in comparison.settings)
        + features
    )
    notes = list(comparison.notes)
    if comparison.unknown:
        undecided = ", ".join(d.flag for d in comparison.unknown)
        notes.append(f"undecided (no drift counted): {undecided}")
    status: Status = "drifted" if drift else "aligned"
    diffs = (*drift, *comparison.unknown, *comparison.settings, *comparison.recipe_features)
    return Compared(status, "", flags, tuple(notes), diffs, comparison.rendering.recipe_path)


# --- the auditor ---------------------------------------------------------------------------


@dataclass
class Auditor:
    """Audits the config keys of one benchmark repository against one recipes repository.

    ``cache=False`` is the cold reference of ``bench/audit.py``: a fresh script parser for
    every point and no profile or comparison reuse.
    """

    bench: BenchRepo
    recipes: RecipesLoad
    rules: Rules
    cache: bool = True
    stats: Counter[str] = field(default_factory=Counter)
    _profiles: dict[tuple[Any, ...], Profile | Unmapped] = field(default_factory=dict)
    _comparer: Comparer | None = None
    guide_texts: Mapping[str, str] = field(default_factory=dict)  # recipe path → file text

    # -- one key --------------------------------------------------------------------------

    def audit_key(self, key: str, progress: Progress | None = None) -> KeyAudit:
        node = self.bench.configs[key]
        errors = 0
        before = Counter(self.stats)
        try:
            entry = self.bench.entry(key)
            pairs = points(self.bench, key)
        except RecipeSyncError as err:
            row = config_row(node, "unresolved", f"invalid master-config entry: {err}", self.rules)
            return KeyAudit(key, (row,))
        except Exception as err:  # a bug: the key's row says so, the log has the traceback
            log.exception("reading the search space of %s failed", key)
            detail = f"internal error: {type(err).__name__}: {err}"
            return KeyAudit(key, (config_row(node, "unresolved", detail, self.rules),), 1)
        rows: list[AuditRow] = []
        for point, arm in pairs:
            try:
                row = self.audit_point(node, entry, point, arm)
            except RecipeSyncError as err:
                row = self._row(node, entry, point, arm, "unresolved", str(err))
            except Exception as err:  # a bug: report it on the row, log the traceback, go on
                log.exception("audit of %s %s (%s) failed", key, point.label(), arm)
                errors += 1
                detail = f"internal error: {type(err).__name__}: {err}"
                row = self._row(node, entry, point, arm, "unresolved", detail)
            rows.append(row)
            if progress is not None:
                progress(1, key)
        return KeyAudit(key, tuple(rows), errors, dict(self.stats - before))

    def _hardware(self, runner: str, profile: Profile | None = None) -> str:
        if profile is not None:
            return profile.hardware
        return self.rules.hardware.hardware_for_runner(runner) or runner

    def _row(
        self,
        node: ConfigNode,
        entry: MasterEntry,
        point: Point,
        arm: str,
        status: Status,
        reason: str = "",
        *,
        launch: LaunchLine | None = None,
        profile: Profile | None = None,
        compared: Compared | None = None,
        notes: tuple[str, ...] = (),
    ) -> AuditRow:
        return AuditRow(
            config_key=node.key,
            config_file=node.file,
            config_line=node.line,
            model=entry.model,
            runner=entry.runner,
            hardware=self._hardware(entry.runner, profile),
            image=entry.image,
            point=point,
            arm=arm,
            status=status,
            reason=reason,
            profile=profile.label if profile is not None else "",
            flags=(
                with_bench_origins(
                    compared.flags, {d.flag: bench_origin(launch, d) for d in compared.diffs}
                )
                if compared is not None and launch is not None
                else compared.flags
                if compared is not None
                else ()
            ),
            notes=(
                notes
                + (compared.notes if compared is not None else ())
                + (launch.notes if launch is not None else ())
            ),
            context=profile is not None and not profile.represents_recipe,
            script=launch.script if launch is not None else None,
            recipe_file=self._recipe_file(entry.model, profile, compared),
            launch_at=str(launch.launch) if launch is not None and launch.launch else "",
        )

    def _recipe_file(self, model: str, profile: Profile | None, compared: Compared | None) -> str:
        """The recipe file a row belongs to: the one compared, else the model's own file."""
        if compared is not None and compared.recipe_file:
            return compared.recipe_file
        if profile is not None:
            return profile.recipe_path
        repo = self.recipes.repo
        recipe = repo.by_hf_id.get(model) if repo is not None else None
        return recipe.path if recipe is not None else ""

    # -- one point --------------------------------------------------------------------------

    def audit_point(self, node: ConfigNode, entry: MasterEntry, point: Point, arm: str) -> AuditRow:
        if not self.cache:
            self.bench.parser = ScriptParser(self.bench.parser.limits)
        parses = self.bench.parser.misses
        launch = extract(self.bench, node.key, point, arm)
        self.stats["points"] += 1
        self.stats["script_parses"] += self.bench.parser.misses - parses

        def row(status: Status, reason: str = "", **extra: Any) -> AuditRow:
            return self._row(node, entry, point, arm, status, reason, launch=launch, **extra)

        if launch.status == "no-script":
            return row("unmapped", launch.reason or "no script for this configuration")
        if launch.status == "invalid":
            return row("unmapped", launch.invalid or launch.reason or "point not valid")
        if launch.status == "no-launch":
            why = [launch.reason or "no vllm serve launch found"]
            why += [describe_unresolved(item) for item in launch.unresolved]
            return row("unresolved", "; ".join(why))
        impact = unresolved_impact(launch, self.rules)
        if impact.serving:
            reasons = (
                describe_unresolved(u, where)
                for u, where in zip(impact.serving, impact.serving_where, strict=True)
            )
            return row("unresolved", "; ".join(reasons), notes=self._alternatives(launch, impact))
        notes = tuple(
            f"{item.what} is only known at run time but reaches only {', '.join(where)} "
            "(not serving configuration)"
            for item, where in impact.inert
        )
        recipes = self.recipes.repo
        if recipes is None:
            return row("unresolved", f"the recipes repository does not load: {self.recipes.error}")
        broken = self.recipes.broken_recipe_for(launch.model)
        if broken is not None:
            return row("unresolved", f"{broken[0]} does not load: {broken[1]}", notes=notes)
        mapped = self._map(launch)
        if isinstance(mapped, Unmapped):
            return row("unmapped", mapped.reason, notes=notes)
        if not mapped.represents_recipe and mapped.note:
            notes = (mapped.note, *notes)
        compared = self._compare(launch, mapped)
        return replace(
            row(compared.status, compared.reason, profile=mapped, compared=compared, notes=notes),
            guide=self._guide(node.key, launch, mapped),
        )

    def _guide(self, key: str, launch: LaunchLine, profile: Profile) -> tuple[GuideRow, ...]:
        """The guide commands documenting this launch line's profile, diffed with it."""
        text = self.guide_texts.get(profile.recipe_path)
        recipes = self.recipes.repo
        if text is None or recipes is None:
            return ()
        point = SectionPoint(key, profile, launch, "represents")
        found = guide_drift(text, profile.recipe_path, [point], recipes, self.rules)
        return tuple(
            GuideRow(
                recipe=item.recipe_path,
                heading=item.heading,
                line=item.line,
                managed=item.managed,
                cites_benchmark=item.cites_benchmark,
                drift=tuple(flag_row(d) for d in item.diffs),
                not_compared=item.not_compared,
            )
            for item in found
        )

    def _alternatives(self, launch: LaunchLine, impact: UnresolvedImpact) -> tuple[str, ...]:
        """Each run-time alternative of the line compared on its own: what it would show."""
        if not launch.alternatives or self.recipes.repo is None:
            return ()
        differing = {u for u in impact.serving if launch.reach.get(u)}
        others = tuple(u for u in launch.unresolved if u not in differing)
        out: list[str] = []
        for number, alternative in enumerate(launch.alternatives, 1):
            line = replace(
                launch,
                argv=alternative.argv,
                env=alternative.env,
                env_unset=alternative.env_unset,
                unresolved=others,
                alternatives=(),
                reach={u: p for u, p in launch.reach.items() if u in others},
            )
            when = "; ".join(alternative.conditions) or "otherwise"
            if unresolved_impact(line, self.rules).serving:
                verdict = "unresolved"
            else:
                mapped = self._map(line)
                verdict = (
                    f"unmapped ({mapped.reason})"
                    if isinstance(mapped, Unmapped)
                    else _verdict(self._compare(line, mapped))
                )
            out.append(
                f"alternative {number} of {len(launch.alternatives)}, when {when}: {verdict}"
            )
        return tuple(out)

    def _map(self, launch: LaunchLine) -> Profile | Unmapped:
        assert self.recipes.repo is not None
        key = (
            launch.framework,
            launch.model,
            launch.precision,
            launch.runner,
            launch.point.dp_attn,
            launch.point.ep > 1,
            launch.argv,
        )
        cached = self._profiles.get(key) if self.cache else None
        if cached is not None:
            self.stats["profile_hits"] += 1
            return cached
        mapped = map_profile(self.recipes.repo, self.rules, launch)
        self.stats["profiles_mapped"] += 1
        if self.cache:
            self._profiles[key] = mapped
        return mapped

    def _compare(self, launch: LaunchLine, profile: Profile) -> Compared:
        """The verdict for (profile, launch line); the comparer computes each identical
        launch line once."""
        if self._comparer is None:
            assert self.recipes.repo is not None
            self._comparer = Comparer(
                self.recipes.repo, self.rules, memo=self.cache, stats=self.stats
            )
        try:
            self._comparer.render(profile)
        except RecipeSyncError as err:
            return Compared("unresolved", f"cannot render {profile.label}: {err}")
        return judge(self._comparer(launch, profile))


def config_row(node: ConfigNode, status: Status, reason: str, rules: Rules) -> AuditRow:
    """A row for a key whose points cannot be enumerated (its entry is invalid)."""
    raw = node.document.get(node.key) if hasattr(node.document, "get") else None
    fields: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}

    def text(name: str) -> str:
        value = fields.get(name)
        return value if isinstance(value, str) else ""

    runner = text("runner")
    return AuditRow(
        config_key=node.key,
        config_file=node.file,
        config_line=node.line,
        model=text("model") or "?",
        runner=runner,
        hardware=(rules.hardware.hardware_for_runner(runner) if runner else None) or runner or "?",
        image=text("image"),
        point=None,
        arm="",
        status=status,
        reason=reason,
    )


# --- planning ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    keys: tuple[str, ...]  # vLLM single-node keys, in file order
    sizes: Mapping[str, int]  # (point, arm) pairs per key, 0 when unknown
    out_of_scope: tuple[OutOfScope, ...]
    rows: tuple[AuditRow, ...]  # config-level rows (entries whose YAML does not parse)
    order: Mapping[str, tuple[int, int]]  # key → (file index, line) for the report order


def make_plan(load: BenchLoad, rules: Rules) -> Plan:
    bench = load.repo
    files: dict[str, int] = {}
    order: dict[str, tuple[int, int]] = {}
    keys: list[str] = []
    sizes: dict[str, int] = {}
    out: list[OutOfScope] = []
    for key, node in bench.configs.items():
        order[key] = (files.setdefault(node.file, len(files)), node.line or 0)
        raw = node.document.get(key)
        framework = raw.get("framework") if isinstance(raw, Mapping) else None
        try:
            entry = bench.entry(key)
        except Exception:  # invalid (or a validator bug): audit_key reports it on the key's row
            if isinstance(framework, str) and framework != "vllm":
                out.append(_out_of_scope(node, raw, framework, "framework", rules))
            else:
                keys.append(key)  # audit_key reports the invalid entry as its row
                sizes[key] = 0
            continue
        if entry.multinode and serves_vllm(entry.framework):
            out.append(_out_of_scope(node, raw, entry.framework, "multinode", rules))
        elif entry.framework != "vllm":
            out.append(_out_of_scope(node, raw, entry.framework, "framework", rules))
        elif entry.multinode:
            out.append(_out_of_scope(node, raw, entry.framework, "multinode", rules))
        else:
            keys.append(key)
            try:
                sizes[key] = len(points(bench, key))
            except Exception:  # reported by audit_key on the key's row
                sizes[key] = 0
    rows = []
    for broken in load.broken:
        order[broken.key] = (files.setdefault(broken.file, len(files)), broken.line)
        rows.append(
            AuditRow(
                config_key=broken.key,
                config_file=broken.file,
                config_line=broken.line,
                model="?",
                runner="",
                hardware="?",
                image="",
                point=None,
                arm="",
                status="unresolved",
                reason=f"invalid master-config entry: {broken.file}:{broken.line}: {broken.reason}",
            )
        )
    return Plan(tuple(keys), sizes, tuple(out), tuple(rows), order)


def _out_of_scope(
    node: ConfigNode, raw: Any, framework: str, kind: str, rules: Rules
) -> OutOfScope:
    fields: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if kind == "multinode":
        reason = multinode_reason(framework, fields)
    else:
        reason = rules.models.unrendered_frameworks.get(
            framework, f"framework {framework} is not rendered by vLLM recipes"
        )
    return OutOfScope(
        config_key=node.key,
        config_file=node.file,
        config_line=node.line,
        framework=framework,
        kind=kind,
        reason=reason,
        model=str(fields.get("model") or ""),
        runner=str(fields.get("runner") or ""),
    )


# --- the shell: load, fan out, assemble ----------------------------------------------------


@dataclass(frozen=True)
class SourceSpec:
    """How a worker process re-opens a repository view (a ``git cat-file --batch`` pipe does
    not survive a fork: every process needs its own)."""

    kind: str  # dir | git
    path: str
    ref: str
    label: str

    def open(self) -> FileSource:

        if self.kind == "dir":
            return DirectorySource(Path(self.path), label=self.label)
        return GitTreeSource(Path(self.path), self.ref, label=self.label)


def spec_of(source: FileSource) -> SourceSpec | None:
    if isinstance(source, DirectorySource):
        return SourceSpec("dir", str(source.root), "", source.label)
    if isinstance(source, GitTreeSource):
        return SourceSpec("git", str(source.repo_path), source.commit_sha, source.label)
    return None


# Set in the parent right before forking; each worker reopens the benchmark source.
_SHARED: tuple[Auditor, SourceSpec] | None = None
_KEEP: list[Any] = []  # the inherited git handles must never be finalised in a worker


def _worker_init() -> None:
    assert _SHARED is not None
    auditor, spec = _SHARED
    _KEEP.append(auditor.bench.source)
    auditor.bench.source = spec.open()


def _worker_audit(key: str) -> KeyAudit:
    assert _SHARED is not None
    return _SHARED[0].audit_key(key)


def _fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def effective_jobs(jobs: int, total_points: int) -> int:
    """``jobs`` as asked; 0 means automatic: every core once there is enough work."""
    if jobs > 0:
        return jobs
    cores = os.cpu_count() or 1
    return cores if total_points >= POOL_MIN_POINTS else 1


def audit_keys(
    auditor: Auditor,
    plan: Plan,
    *,
    jobs: int = 1,
    progress: Progress | None = None,
) -> tuple[list[KeyAudit], int]:
    """Results of every planned key (in plan order) and the number of processes used."""
    total = sum(plan.sizes.values())
    workers = min(effective_jobs(jobs, total), max(1, len(plan.keys)))
    spec = spec_of(auditor.bench.source)
    if workers <= 1 or spec is None or not _fork_available():
        return [auditor.audit_key(key, progress) for key in plan.keys], 1
    global _SHARED
    _SHARED = (auditor, spec)
    # biggest keys first, so the last task to start is a small one
    ordered = sorted(plan.keys, key=lambda k: -plan.sizes.get(k, 0))
    results: dict[str, KeyAudit] = {}
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init) as pool:
            futures = {pool.submit(_worker_audit, key): key for key in ordered}
            for future in as_completed(futures):
                try:
                    result = future.result()
                except BrokenProcessPool:
                    continue  # a worker died (killed, out of memory): redone below
                except Exception:
                    log.exception("the worker auditing %s failed", futures[future])
                    continue  # redone below, in this process
                results[result.key] = result
                if progress is not None:
                    progress(len(result.rows), result.key)
    finally:
        _SHARED = None
    lost = [key for key in plan.keys if key not in results]
    if lost:
        log.error("a worker process died; auditing %d config keys in this process", len(lost))
        for key in lost:
            results[key] = auditor.audit_key(key, progress)
    return [results[key] for key in plan.keys], workers


def assemble(
    load: BenchLoad, recipes: RecipesLoad, plan: Plan, results: Iterable[KeyAudit]
) -> AuditReport:
    rows = list(plan.rows)
    errors = 0
    for result in results:
        rows.extend(result.rows)
        errors += result.internal_errors
    rows.sort(key=lambda row: plan.order.get(row.config_key, (len(plan.order), 0)))
    warnings = list(load.warnings)
    if recipes.error is not None:
        warnings.append(f"the recipes repository does not load: {recipes.error}")
    for path, why in recipes.broken.items():
        warnings.append(f"recipe {path} does not load and was left out: {why}")
    return AuditReport(
        bench_label=load.repo.source.label,
        recipes_label=recipes.repo.label if recipes.repo is not None else "",
        rows=tuple(rows),
        out_of_scope=plan.out_of_scope,
        warnings=tuple(warnings),
        unread=tuple(load.unread),
        internal_errors=errors,
    )


@dataclass(frozen=True)
class AuditRun:
    report: AuditReport
    points: int  # (point, arm) pairs audited
    workers: int
    stats: Mapping[str, int]


def guide_texts(source: FileSource, recipes: RecipesLoad) -> dict[str, str]:
    """Recipe path → text of every loaded recipe with a guide (read once, before workers)."""
    out: dict[str, str] = {}
    if recipes.repo is None:
        return out
    for recipe in recipes.repo.recipes:
        if isinstance(recipe.data.get("guide"), str):
            try:
                out[recipe.path] = source.read_bytes(recipe.path).decode("utf-8", "replace")
            except (OSError, KeyError, RecipeSyncError):
                continue
    return out


def run_audit(
    bench_source: FileSource,
    recipes_source: FileSource,
    rules: Rules,
    *,
    jobs: int = 1,
    cache: bool = True,
    progress: Progress | None = None,
    on_plan: Callable[[int], None] | None = None,
    bench_name: str = "",
    recipes_name: str = "",
) -> AuditRun:
    """Audit every vLLM config key of ``bench_source`` against ``recipes_source``.

    ``jobs``: worker processes (0 = automatic). ``on_plan`` receives the number of rows to
    expect before the work starts (for a progress bar).
    """
    load = load_bench(bench_source, rules)
    try:
        recipes = load_recipes_tolerant(recipes_source)
    except Exception as err:  # a bug in loading: every row says the recipes are unusable
        log.exception("loading the recipes repository %s failed", recipes_source.label)
        recipes = RecipesLoad(None, f"internal error: {type(err).__name__}: {err}")
    plan = make_plan(load, rules)
    if on_plan is not None:
        on_plan(sum(plan.sizes.values()))
    auditor = Auditor(
        load.repo, recipes, rules, cache=cache, guide_texts=guide_texts(recipes_source, recipes)
    )
    results, workers = audit_keys(auditor, plan, jobs=jobs, progress=progress)
    report = assemble(load, recipes, plan, results)
    rows = locate_recipe_lines(report.rows, recipes_source)
    if isinstance(bench_source, GitTreeSource):  # a plain directory has no history
        history = LineHistory.at(Path(bench_source.repo_path), bench_source.commit_sha)
        rows = with_introductions(rows, load.repo, history)
    report = replace(
        report,
        rows=rows,
        bench_name=bench_name,
        bench_commit=getattr(bench_source, "commit_sha", ""),
        recipes_name=recipes_name,
        recipes_commit=getattr(recipes_source, "commit_sha", ""),
    )
    stats: Counter[str] = Counter()
    for result in results:
        stats.update(result.stats)
    audited = sum(1 for row in report.rows if row.point is not None)
    return AuditRun(report, audited, workers, dict(stats))
