"""The JSON API the recipes builder writes under ``public/`` (docs/spec/recipe-rendering.md §5),
in-memory or on disk.

``build_api`` returns exactly the rendering files upstream writes under ``public/**/hw/**``
(the conformance set); ``write_api`` writes those plus the default-hardware alternatives,
the per-recipe JSON and the top-level indexes. Work is split per recipe (a recipe's parent
rendering and the variants it promotes), so a subset of recipes can be re-rendered alone and
the full corpus can be spread over worker processes.
"""

from __future__ import annotations

import contextlib
import gc
import json
import multiprocessing
import os
import shutil
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.recipes.deploy import render_profile
from bot.recipes.hardware_view import hardware_view
from bot.recipes.jsvalues import as_dict
from bot.recipes.layers import RenderError
from bot.recipes.rendering import Rendered
from bot.recipes.repo import Recipe, RecipesRepo
from bot.recipes.select import Choice, HardwarePlan, hardware_order, plan_hardware, profile_for
from bot.words import count

PUBLIC_RECIPE_DROPPED_KEYS = ("strategy_overrides", "compatible_strategies", "default_strategy")


@dataclass(frozen=True)
class VariantJob:
    """One rendered variant: a recipe's ``default`` under its hf_id, or a promoted variant."""

    recipe_path: str
    variant_key: str
    base: str  # output base path: the hf_id or the promoted model_id
    promoted: bool


@dataclass
class VariantOutput:
    job: VariantJob
    hw_files: dict[str, Any] = field(default_factory=dict)  # B/hw/** (conformance set)
    default_alternatives: dict[str, Any] = field(default_factory=dict)  # B/strategies/*
    recipe_json: dict[str, Any] | None = None  # <B>.json
    per_hw: int = 0
    dropped: list[str] = field(default_factory=list)  # combinations upstream would swallow


@dataclass(frozen=True)
class ApiSummary:
    files: int  # every file written
    renderings: int  # files under **/hw/** (the conformance set)
    models: int  # parent recipe JSON files
    with_recommended: int  # parents whose default hardware rendered
    default_alternatives: int  # parents' default-hw alternatives (<hf_id>/strategies/*)
    per_hw: int  # parents' per-hw renderings
    promoted: int  # promoted model ids written
    dropped: tuple[str, ...] = ()  # swallowed combinations (upstream throws)
    overwritten: tuple[str, ...] = ()  # promoted ids two variants render to (the last wins)

    def line(self) -> str:
        """The builder's summary line, for comparison with its log."""
        return (
            f"{self.models} models ({self.with_recommended} with recommended_command, "
            f"{self.default_alternatives} default-hw alternatives, {self.per_hw} per-hw "
            f"renderings), {self.promoted} promoted model ids; {self.files} files, "
            f"{self.renderings} renderings under hw/"
        )

    def sentence(self) -> str:
        """:meth:`line` with its nouns agreeing with their counts, for the PR text (the
        line itself keeps the builder's words, to compare with its log)."""
        return (
            f"{count(self.models, 'model')} ({self.with_recommended} with recommended_command, "
            f"{count(self.default_alternatives, 'default-hw alternative')}, "
            f"{count(self.per_hw, 'per-hw rendering')}), "
            f"{count(self.promoted, 'promoted model id')}; {count(self.files, 'file')}, "
            f"{count(self.renderings, 'rendering')} under hw/"
        )


def variant_jobs(repo: RecipesRepo) -> tuple[VariantJob, ...]:
    """Parents in path order, then promoted variants (the last promotion of an id wins)."""
    return _variant_jobs(repo)[0]


def _variant_jobs(repo: RecipesRepo) -> tuple[tuple[VariantJob, ...], tuple[str, ...]]:
    # every rendering by model id looks its variant up here: once per tree
    return repo.memoised("variant-jobs", _all_variant_jobs)


def _all_variant_jobs(repo: RecipesRepo) -> tuple[tuple[VariantJob, ...], tuple[str, ...]]:
    hf_ids = set(repo.by_hf_id)
    parents = [VariantJob(r.path, "default", r.hf_id, False) for r in repo.recipes]
    promoted: dict[str, VariantJob] = {}
    overwritten: list[str] = []
    for recipe in repo.recipes:
        if recipe.is_omni:
            continue
        for key, variant in recipe.variants.items():
            model_id = as_dict(variant).get("model_id")
            if isinstance(model_id, str) and "/" in model_id and model_id not in hf_ids:
                if model_id in promoted:
                    earlier = promoted[model_id]
                    overwritten.append(
                        f"{model_id}: variant '{key}' of {recipe.path} replaces variant "
                        f"'{earlier.variant_key}' of {earlier.recipe_path}"
                    )
                promoted[model_id] = VariantJob(recipe.path, key, model_id, True)
    return (*parents, *promoted.values()), tuple(overwritten)


class _Renderer:
    """Renders profiles, reusing results a promoted variant shares with its parent, and
    the rendering of a GPU that looks alike to this one (bot/recipes/hardware_view.py)."""

    def __init__(self, repo: RecipesRepo, share_hardware: bool = True) -> None:
        self.repo = repo
        self.plans: dict[tuple[str, str, str], HardwarePlan | None] = {}
        self.results: dict[tuple[Any, ...], Rendered | str] = {}
        self.share_hardware = share_hardware
        self.by_view: dict[tuple[Any, ...], Rendered] = {}

    def plan(self, recipe: Recipe, variant_key: str, hw_id: str) -> HardwarePlan | None:
        key = (recipe.path, variant_key, hw_id)
        if key not in self.plans:
            hw = self.repo.hardware[hw_id]
            self.plans[key] = plan_hardware(self.repo, recipe, variant_key, hw)
        return self.plans[key]

    def render(self, recipe: Recipe, plan: HardwarePlan, choice: Choice) -> Rendered | str:
        """The rendering, or the reason upstream's renderer would throw."""
        shape = tuple(sorted(choice.pd_nodes.items())) if choice.pd_nodes else ()
        key = (
            recipe.path,
            plan.variant_key,
            plan.hw.id,
            choice.strategy,
            choice.nodes,
            shape,
            choice.serving,
            plan.features,
        )
        found = self.results.get(key)
        if found is None:
            found = self._render(recipe, plan, choice, key)
            self.results[key] = found
        return found

    def _render(
        self, recipe: Recipe, plan: HardwarePlan, choice: Choice, key: tuple[Any, ...]
    ) -> Rendered | str:
        hw = plan.hw
        view: tuple[Any, ...] = ()
        if self.share_hardware:
            view = (*key[:2], *key[3:], hardware_view(self.repo, recipe, plan.variant_key, hw))
            alike = self.by_view.get(view)
            if alike is not None:  # the same JSON but for the GPU it names
                data = {**alike.json, "hardware": hw.id}  # keeps the key's place
                return Rendered(data, alike.commands, alike.image, alike.image_origin)
        try:
            found = render_profile(self.repo, profile_for(self.repo, recipe, plan, choice))
        except RenderError as err:
            return str(err)
        if view:
            self.by_view[view] = found
        return found


def render_variant(renderer: _Renderer, job: VariantJob) -> VariantOutput:
    repo = renderer.repo
    recipe = repo.by_path[job.recipe_path]
    out = VariantOutput(job)
    if recipe.is_omni:
        if not job.promoted:
            out.recipe_json = public_recipe(recipe, job, None, {})
        return out
    base = job.base
    default_hw, order = hardware_order(repo, recipe, job.variant_key)
    recommended_command: dict[str, Any] | None = None
    by_hardware: dict[str, str] = {}
    for hw_id in order:
        plan = renderer.plan(recipe, job.variant_key, hw_id)
        is_default = hw_id == default_hw
        rendered: Rendered | None = None
        if plan is not None and plan.recommended is not None:
            result = renderer.render(recipe, plan, plan.recommended)
            if isinstance(result, Rendered):
                rendered = result
            else:
                out.dropped.append(f"{base} {hw_id} {plan.recommended.strategy}: {result}")
        if plan is None or rendered is None:
            if is_default:  # upstream writes nothing for the variant
                out.hw_files.clear()
                if not job.promoted:
                    out.recipe_json = public_recipe(recipe, job, None, {})
                return out
            continue
        alternatives: dict[str, str] = {}
        for choice in plan.alternatives:
            alt = renderer.render(recipe, plan, choice)
            if not isinstance(alt, Rendered):
                out.dropped.append(f"{base} {hw_id} {choice.strategy}: {alt}")
                continue
            if is_default:
                path = f"{base}/strategies/{choice.strategy}.json"
                out.default_alternatives[path] = alt.json
            else:
                path = f"{base}/hw/{hw_id}/strategies/{choice.strategy}.json"
                out.hw_files[path] = alt.json
            alternatives[choice.strategy] = "/" + path
        per_hw = dict(rendered.json)
        per_hw["strategy_spec"] = repo.strategies[rendered.json["strategy"]].data
        per_hw["hardware_profile"] = plan.hw.data
        if alternatives:
            per_hw["alternatives"] = alternatives
        path = f"{base}/hw/{hw_id}.json"
        out.hw_files[path] = per_hw
        out.per_hw += 1
        by_hardware[hw_id] = "/" + path
        if is_default:
            recommended_command = per_hw
    out.recipe_json = public_recipe(recipe, job, recommended_command, by_hardware)
    return out


def public_recipe(
    recipe: Recipe,
    job: VariantJob,
    recommended: dict[str, Any] | None,
    by_hardware: Mapping[str, str],
) -> dict[str, Any]:
    """``<base>.json``: the recipe without its render-only keys, plus the recommendation.

    Best effort: upstream's exact recipe-JSON shape is not part of the conformance data.
    """
    data = {k: v for k, v in recipe.data.items() if k not in PUBLIC_RECIPE_DROPPED_KEYS}
    if job.promoted:
        variant = {k: v for k, v in as_dict(recipe.variants.get(job.variant_key)).items()}
        variant.pop("model_id", None)
        data["variants"] = {"default": variant}
    if recommended is not None:
        data["recommended_command"] = recommended
        data["by_hardware"] = dict(by_hardware)
    return data


def _jobs_by_recipe(
    repo: RecipesRepo, only_recipes: Collection[str] | None
) -> list[list[VariantJob]]:
    grouped: dict[str, list[VariantJob]] = {}
    for job in variant_jobs(repo):
        if only_recipes is None or job.recipe_path in only_recipes:
            grouped.setdefault(job.recipe_path, []).append(job)
    return list(grouped.values())


@contextlib.contextmanager
def _without_gc() -> Iterator[None]:
    """Pause the cyclic GC: rendering allocates ~10^6 acyclic objects and full collections
    over them cost ~25% of the time; reference counting frees them all the same."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_api(
    repo: RecipesRepo, only_recipes: Collection[str] | None = None
) -> dict[str, Mapping[str, Any]]:
    """Every ``…/hw/…`` rendering file upstream writes: path → JSON.

    ``only_recipes`` (repo-relative recipe paths) limits the work to those recipes' parent
    and promoted renderings, e.g. to compare a tree before and after editing one file.
    """
    renderer = _Renderer(repo)
    files: dict[str, Mapping[str, Any]] = {}
    with _without_gc():
        for jobs in _jobs_by_recipe(repo, only_recipes):
            for job in jobs:
                files.update(render_variant(renderer, job).hw_files)
    return files


# ---------------------------------------------------------------------------- writing

_WORKER_REPO: RecipesRepo | None = None
_WORKER_OUT: Path | None = None

_stdlib_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _stdlib_dumps(data: Any) -> bytes:
    return _stdlib_encode(data).encode("utf-8")


_dumps: Callable[[Any], bytes] = _stdlib_dumps
try:  # orjson writes the same compact UTF-8 JSON ~5x faster (NaN → null, as in JS)
    import orjson

    _dumps = orjson.dumps
except ImportError:  # pragma: no cover - orjson is a declared dependency
    pass


@dataclass
class _Counts:
    files: int = 0
    renderings: int = 0
    models: int = 0
    with_recommended: int = 0
    default_alternatives: int = 0
    per_hw: int = 0
    promoted: int = 0
    dropped: list[str] = field(default_factory=list)

    def add(self, other: _Counts) -> None:
        for name in ("files", "renderings", "models", "with_recommended"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.default_alternatives += other.default_alternatives
        self.per_hw += other.per_hw
        self.promoted += other.promoted
        self.dropped.extend(other.dropped)


_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def _make_dir(root: str, folder: str, made: set[str]) -> None:
    if folder in made or not folder:
        return
    parent = folder.rpartition("/")[0]
    _make_dir(root, parent, made)
    with contextlib.suppress(FileExistsError):
        os.mkdir(f"{root}/{folder}")
    made.add(folder)


def _write_files(
    out: Path, files: Iterable[tuple[str, Any]], made: set[str], encode: bool = True
) -> int:
    """Write JSON files (compact, UTF-8); plain os calls: ~15k small files dominate I/O."""
    root = str(out)
    count = 0
    for relative, data in files:
        _make_dir(root, relative.rpartition("/")[0], made)
        fd = os.open(f"{root}/{relative}", _FLAGS, 0o644)
        try:
            payload = memoryview(_dumps(data) if encode else data)
            while payload:
                payload = payload[os.write(fd, payload) :]
        finally:
            os.close(fd)
        count += 1
    return count


def _write_recipe_group(repo: RecipesRepo, out: Path, jobs: list[VariantJob]) -> _Counts:
    renderer = _Renderer(repo)
    counts = _Counts()
    made: set[str] = set()
    for job in jobs:
        result = render_variant(renderer, job)
        counts.dropped.extend(result.dropped)
        subtree = out / job.base
        if subtree.is_dir():  # upstream deletes each variant's subtree before writing
            shutil.rmtree(subtree)
        files: list[tuple[str, Any]] = list(result.hw_files.items())
        files += result.default_alternatives.items()
        if result.recipe_json is not None:
            files.append((f"{job.base}.json", result.recipe_json))
        counts.files += _write_files(out, files, made)
        counts.renderings += len(result.hw_files)
        has_recommended = result.recipe_json is not None and "by_hardware" in result.recipe_json
        if job.promoted:
            counts.promoted += int(result.recipe_json is not None)
        else:
            counts.models += 1
            counts.with_recommended += int(has_recommended)
            counts.default_alternatives += len(result.default_alternatives)
            counts.per_hw += result.per_hw
    return counts


def encoded_files(repo: RecipesRepo) -> list[tuple[str, bytes]]:
    """Every file ``write_api`` writes, JSON-encoded (for measuring the write cost alone)."""
    renderer = _Renderer(repo)
    found: list[tuple[str, bytes]] = []
    for jobs in _jobs_by_recipe(repo, None):
        for job in jobs:
            result = render_variant(renderer, job)
            files = [*result.hw_files.items(), *result.default_alternatives.items()]
            if result.recipe_json is not None:
                files.append((f"{job.base}.json", result.recipe_json))
            found += [(path, _dumps(data)) for path, data in files]
    found += [(path, _dumps(data)) for path, data in _top_level(repo)]
    return found


def write_encoded(out: Path, files: Iterable[tuple[str, bytes]]) -> int:
    """Write pre-encoded files with the same system calls ``write_api`` uses."""
    out.mkdir(parents=True, exist_ok=True)
    return _write_files(out, files, set(), encode=False)


def _worker_task(jobs: list[VariantJob]) -> _Counts:
    assert _WORKER_REPO is not None and _WORKER_OUT is not None
    return _write_recipe_group(_WORKER_REPO, _WORKER_OUT, jobs)


_TASKS_PER_WORKER = 8


def write_api(
    repo: RecipesRepo,
    out: Path,
    only_recipes: Collection[str] | None = None,
    workers: int | None = None,
) -> ApiSummary:
    """Write the builder's ``public/`` JSON for the corpus (or some recipes) under ``out``.

    ``workers`` > 1 renders recipes in forked worker processes (default: one per CPU, at
    most 2 as measured by ``bench/render_corpus.py``).
    """
    global _WORKER_REPO, _WORKER_OUT
    out.mkdir(parents=True, exist_ok=True)
    groups = _jobs_by_recipe(repo, only_recipes)
    # biggest recipes first so the pool's last tasks are short
    groups.sort(key=lambda jobs: -len(repo.by_path[jobs[0].recipe_path].variants) * len(jobs))
    if workers is None:
        workers = min(2, os.cpu_count() or 1)
    counts = _Counts()
    if workers > 1 and len(groups) > 1 and "fork" in multiprocessing.get_all_start_methods():
        _WORKER_REPO, _WORKER_OUT = repo, out
        # Each task is a round trip through the pool's pipes and the parent's handler
        # threads, which compete with the workers for the CPUs: ~0.2 ms a task, 8 % of the
        # corpus's wall with one recipe a task. About 8 tasks a worker keep that small, and
        # with the biggest recipes first the last tasks are still the shortest.
        chunk = max(1, len(groups) // (workers * _TASKS_PER_WORKER))
        try:
            with _without_gc(), multiprocessing.get_context("fork").Pool(workers) as pool:
                for part in pool.imap_unordered(_worker_task, groups, chunksize=chunk):
                    counts.add(part)
        finally:
            _WORKER_REPO, _WORKER_OUT = None, None
    else:
        with _without_gc():
            for jobs in groups:
                counts.add(_write_recipe_group(repo, out, jobs))
    if only_recipes is None:
        counts.files += _write_files(out, _top_level(repo), set())
    return ApiSummary(
        files=counts.files,
        renderings=counts.renderings,
        models=counts.models,
        with_recommended=counts.with_recommended,
        default_alternatives=counts.default_alternatives,
        per_hw=counts.per_hw,
        promoted=counts.promoted,
        dropped=tuple(counts.dropped),
        overwritten=_variant_jobs(repo)[1],
    )


def _top_level(repo: RecipesRepo) -> list[tuple[str, Any]]:
    """Strategy/KV specs and indexes (best effort: not part of the conformance data)."""
    files: list[tuple[str, Any]] = []
    for name, strategy in repo.strategies.items():
        folder = "kv_store" if strategy.is_kv else "strategies"
        files.append((f"{folder}/{name}.json", strategy.data))
    files.append(("taxonomy.json", repo.taxonomy))
    if repo.platforms is not None:
        files.append(("platforms.json", repo.platforms))
    files.append(
        ("strategies.json", {n: s.data for n, s in repo.strategies.items() if not s.is_kv})
    )
    files.append(("kv_store.json", {n: s.data for n, s in repo.strategies.items() if s.is_kv}))
    files.append(("models.json", [recipe.hf_id for recipe in repo.recipes]))
    return files
