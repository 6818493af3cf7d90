"""A recipes checkout as values: taxonomy, strategies, KV-store deployments and recipe files.

``load_recipes`` reads ``models/**.yaml``, ``strategies/*.yaml``, ``kv_store/*.yaml`` and
``taxonomy.yaml`` through a :class:`~bot.sources.FileSource` (a directory or a git commit),
parses each file once with the builder's YAML semantics, and checks the references the
renderer follows (strategy ids, hardware ids). A bad file raises :class:`InputError` naming
file, key and line; nothing is rendered from a repository that does not load.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NoReturn, TypeVar

from bot.errors import InputError, Location
from bot.memo import BoundedMemo
from bot.recipes.jsvalues import as_dict
from bot.sources import FileSource, read_text
from bot.yamlio.twoway import load_yaml_twoway
from bot.yamlio.yaml12 import line_of, load_yaml

BRAND_KEYS = ("nvidia", "amd", "intel", "google", "huawei")


@dataclass(frozen=True)
class HardwareProfile:
    """One ``taxonomy.yaml`` hardware profile, with the derived values rendering uses."""

    id: str
    brand: str  # as written: "NVIDIA", "AMD", "Intel", "Google", "Huawei"
    generation: str  # the first generation when the YAML gives a list
    generations: tuple[str, ...]
    gpu_count: int | float | None  # raw value; see ``gpus``
    vram_gb: int | float | None  # the whole node's VRAM
    scalable: bool
    restricted: bool
    data: Mapping[str, Any]  # the taxonomy entry as written (JSON ``hardware_profile``)

    # derived values are cached: each is read for every command rendered on this hardware

    @cached_property
    def gpus(self) -> int:
        """``G``: gpu_count, 1 when missing."""
        return int(self.gpu_count) if self.gpu_count else 1

    @cached_property
    def brand_lower(self) -> str:
        return self.brand.lower()

    @cached_property
    def is_nvidia(self) -> bool:
        return self.brand == "NVIDIA"

    @cached_property
    def docker_brand(self) -> str:
        """The key images and Docker flags are chosen by (Huawei/npu counts as nvidia)."""
        if self.generation == "tpu":
            return "tpu"
        if self.brand == "AMD":
            return "amd"
        if self.generation in ("cpu", "xpu") or self.brand == "Intel":
            return "intel"
        return "nvidia"


@dataclass(frozen=True)
class Strategy:
    """A ``strategies/<name>.yaml`` or ``kv_store/<name>.yaml`` deployment."""

    name: str
    path: str  # repo-relative file, used in provenance ("strategies/pd_cluster.yaml")
    data: Mapping[str, Any]
    deploy_type: str = field(init=False)
    is_kv: bool = field(init=False)
    is_multi_node: bool = field(init=False)
    is_pd: bool = field(init=False)

    def __post_init__(self) -> None:
        deploy_type = self.data.get("deploy_type")
        deploy_type = deploy_type if isinstance(deploy_type, str) else ""
        object.__setattr__(self, "deploy_type", deploy_type)
        object.__setattr__(self, "is_kv", deploy_type == "kv_store_lb")
        object.__setattr__(self, "is_multi_node", deploy_type == "multi_node")
        object.__setattr__(self, "is_pd", deploy_type == "pd_cluster")


T = TypeVar("T")
_UNSET = object()


@dataclass(frozen=True)
class Recipe:
    """One ``models/<org>/<repo>.yaml``: its path, ``hf_id`` and parsed data."""

    path: str
    hf_id: str
    data: Mapping[str, Any]
    # memoised pure derivations of ``data`` (e.g. layers per variant and hardware)
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def memoised(self, key: Hashable, compute: Callable[..., T], *args: Any) -> T:
        """``compute(*args)``, once per ``key`` for this recipe: the key names every input the
        derivation reads besides the recipe's data (variant, hardware id, strategy, …).
        Arguments, not a closure: a lambda per call on the render path cost 2% more
        instructions over the corpus."""
        found = self.memo.get(key, _UNSET)
        if found is _UNSET:
            found = self.memo[key] = compute(*args)
        return found  # type: ignore[no-any-return]

    @property
    def is_omni(self) -> bool:
        tasks = as_dict(self.data.get("meta")).get("tasks")
        return isinstance(tasks, list) and "omni" in tasks

    @cached_property
    def variants(self) -> dict[str, Any]:
        return as_dict(self.data.get("variants"))

    @cached_property
    def effective_compatible(self) -> tuple[str, ...]:
        """Listed strategies, then any strategy that strategy_hardware grants somewhere."""
        listed = self.data.get("compatible_strategies")
        found = [s for s in listed if isinstance(s, str)] if isinstance(listed, list) else []
        for name, per_hw in as_dict(self.data.get("strategy_hardware")).items():
            if name not in found and "supported" in as_dict(per_hw).values():
                found.append(name)
        return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class RecipesRepo:
    label: str
    hardware: Mapping[str, HardwareProfile]  # taxonomy order
    strategies: Mapping[str, Strategy]  # strategies then KV-store deployments, file order
    recipes: tuple[Recipe, ...]  # sorted by path
    taxonomy: Mapping[str, Any]
    platforms: Any = None
    by_path: Mapping[str, Recipe] = field(default_factory=dict)
    by_hf_id: Mapping[str, Recipe] = field(default_factory=dict)
    # renderings of this (immutable) tree by request, filled by bot.recipes.render; not an
    # init field, so a dataclasses.replace()d repository starts with its own
    renders: dict[str, object] = field(
        default_factory=dict, init=False, compare=False, repr=False, hash=False
    )
    # whole-tree derivations (the API's variant jobs, …), filled by memoised()
    derived: dict[str, object] = field(
        default_factory=dict, init=False, compare=False, repr=False, hash=False
    )

    def memoised(self, key: str, compute: Callable[[RecipesRepo], T]) -> T:
        """``compute(self)``, once per ``key`` for this (immutable) tree."""
        found = self.derived.get(key, _UNSET)
        if found is _UNSET:
            found = self.derived[key] = compute(self)
        return found  # type: ignore[return-value]

    @cached_property
    def kv_ids(self) -> tuple[str, ...]:
        return tuple(name for name, s in self.strategies.items() if s.is_kv)


def _located(
    source: FileSource, path: str, text: str, key: Sequence[str | int], why: str
) -> NoReturn:
    dotted = ".".join(str(part) for part in key)
    raise InputError(Location(f"{source.label}:{path}", dotted, line_of(text, key)), why)


def _mapping(source: FileSource, path: str, text: str) -> dict[str, Any]:
    data = load_yaml(text, f"{source.label}:{path}")
    if not isinstance(data, dict):
        raise InputError(Location(f"{source.label}:{path}", line=1), "expected a YAML mapping")
    return data


def _profile(hw_id: str, entry: Any) -> HardwareProfile:
    entry = as_dict(entry)
    generation = entry.get("generation")
    generations = tuple(str(g) for g in generation) if isinstance(generation, list) else ()
    if not isinstance(generation, list):
        generations = (str(generation),) if generation is not None else ()
    gpu_count = entry.get("gpu_count")
    vram = entry.get("vram_gb")
    return HardwareProfile(
        id=hw_id,
        brand=str(entry.get("brand") or ""),
        generation=generations[0] if generations else "",
        generations=generations,
        gpu_count=gpu_count if isinstance(gpu_count, int | float) else None,
        vram_gb=vram if isinstance(vram, int | float) and not isinstance(vram, bool) else None,
        scalable=entry.get("scalable") is not False,
        restricted=bool(entry.get("restricted")),
        data=entry,
    )


def _load_strategies(source: FileSource, folder: str) -> dict[str, Strategy]:
    found: dict[str, Strategy] = {}
    for path in source.iter_files(folder):
        if not path.endswith((".yaml", ".yml")) or path.count("/") != 1:
            continue
        text = read_text(source, path)
        data = _mapping(source, path, text)
        stem = path.rsplit("/", 1)[1].rsplit(".", 1)[0]
        name = data.get("name", stem)
        if not isinstance(name, str) or not name:
            _located(source, path, text, ["name"], "strategy name must be a non-empty string")
        found[str(name)] = Strategy(name=str(name), path=path, data=data)
    return found


def _load_taxonomy(source: FileSource) -> tuple[dict[str, Any], dict[str, HardwareProfile]]:
    if not source.exists("taxonomy.yaml"):
        raise InputError(Location(f"{source.label}:taxonomy.yaml"), "file does not exist")
    tax_text = read_text(source, "taxonomy.yaml")
    taxonomy = _mapping(source, "taxonomy.yaml", tax_text)
    profiles = taxonomy.get("hardware_profiles")
    if not isinstance(profiles, dict) or not profiles:
        _located(
            source, "taxonomy.yaml", tax_text, ["hardware_profiles"], "expected a mapping of ids"
        )
    hardware = {str(k): _profile(str(k), v) for k, v in profiles.items()}
    for hw_id, profile in hardware.items():
        if not isinstance(profiles[hw_id], dict) or not profile.brand or not profile.generation:
            _located(
                source,
                "taxonomy.yaml",
                tax_text,
                ["hardware_profiles", hw_id],
                "a hardware profile needs a brand and a generation",
            )
    return taxonomy, hardware


def load_hardware(source: FileSource) -> dict[str, HardwareProfile]:
    """The hardware profiles of ``taxonomy.yaml`` alone (checked as :func:`load_recipes` does)."""
    return _load_taxonomy(source)[1]


def per_gpu_memory(hardware: Mapping[str, HardwareProfile]) -> dict[str, float]:
    """Per-GPU memory (GB) of every taxonomy profile: ``vram_gb / gpu_count``."""
    return {
        hw_id: float(profile.vram_gb) / profile.gpus
        for hw_id, profile in hardware.items()
        if profile.vram_gb and profile.gpus
    }


# Recipe files parsed and checked once per content, for every tree that holds them: a
# backtest or the App loads many recipes commits that differ in a file or two; each recipe is
# read, checked and rendered from its own data, the taxonomy and the strategies alone (what
# :func:`with_recipe_files` relies on too), so a :class:`Recipe` (with the renderings it
# memoised) serves every tree with the same blob and the same context. Failures are never
# kept (each load says why). Key: (path, blob, context). Two trees' worth (~145 recipes each):
# neighbouring replays share most blobs; July's score runs as fast with 1,024 and peaks 3 MiB
# higher.
_LOADED: BoundedMemo[tuple[str, str, str], Recipe] = BoundedMemo(320)


def _context(source: FileSource, strategies: Mapping[str, Strategy]) -> str:
    """What a recipe's check and renderings read besides its own file: the taxonomy, the
    strategy and kv-store files and platforms.yaml, by blob."""
    digest = hashlib.sha256()
    paths = ["taxonomy.yaml", *sorted(s.path for s in strategies.values())]
    if source.exists("platforms.yaml"):
        paths.append("platforms.yaml")
    for path in paths:
        digest.update(f"{path}\0{source.blob_sha(path)}\0".encode())
    return digest.hexdigest()


def load_recipes(source: FileSource, *, two_way: bool = False) -> RecipesRepo:
    """Read and check a recipes checkout. Raises :class:`InputError` on any bad file.

    ``two_way``: parse the recipe files in this process and a forked child, which reads
    its half through ``source`` (only for a process with no other threads and a source
    that holds no channel a child would share: the CLI's render of a directory)."""
    taxonomy, hardware = _load_taxonomy(source)

    strategies = _load_strategies(source, "strategies")
    strategies.update(_load_strategies(source, "kv_store"))
    platforms = None
    if source.exists("platforms.yaml"):
        platforms = load_yaml(read_text(source, "platforms.yaml"), "platforms.yaml")

    context = _context(source, strategies)
    paths = [path for path in source.iter_files("models") if path.endswith(".yaml")]
    parsed: dict[str, Any] = {}
    if two_way:  # a fresh process (the CLI): nothing is memoised yet
        names = {f"{source.label}:{path}": path for path in paths}  # as errors name them
        found = load_yaml_twoway(list(names), lambda name: read_text(source, names[name]))
        parsed = {names[name]: data for name, data in found.items()}
    recipes: list[Recipe] = []
    for path in paths:
        key = (path, source.blob_sha(path), context)
        recipe = _LOADED.get(key)
        if recipe is None:
            text = read_text(source, path)
            data = parsed.get(path)
            if not isinstance(data, dict):  # not parsed yet, or not a mapping: say why
                data = _mapping(source, path, text)
            hf_id = path[len("models/") : -len(".yaml")]
            _check_recipe(source, path, text, data, hardware, strategies)
            recipe = Recipe(path=path, hf_id=hf_id, data=data)
            _LOADED.put(key, recipe)
        recipes.append(recipe)
    recipes.sort(key=lambda r: r.path)
    return RecipesRepo(
        label=source.label,
        hardware=hardware,
        strategies=strategies,
        recipes=tuple(recipes),
        taxonomy=taxonomy,
        platforms=platforms,
        by_path={r.path: r for r in recipes},
        by_hf_id={r.hf_id: r for r in recipes},
    )


def with_recipe_files(before: RecipesRepo, source: FileSource, paths: Iterable[str]) -> RecipesRepo:
    """``before`` as ``source`` has it after its recipe files ``paths`` were written: only
    those are read and checked, as :func:`load_recipes` would; every other recipe (with the
    renderings it has memoised) is shared, which is sound because they read nothing but
    their own data and the unedited taxonomy and strategies. Any other edited file (a
    strategy, the taxonomy) loads ``source`` whole."""
    paths = set(paths)
    if not all(p.startswith("models/") and p.endswith(".yaml") for p in paths):
        return load_recipes(source)
    by_path = {r.path: r for r in before.recipes if r.path not in paths}
    for path in paths:
        if not source.exists(path):
            continue
        text = read_text(source, path)
        data = _mapping(source, path, text)
        _check_recipe(source, path, text, data, before.hardware, before.strategies)
        by_path[path] = Recipe(path=path, hf_id=path[len("models/") : -len(".yaml")], data=data)
    recipes = sorted(by_path.values(), key=lambda r: r.path)
    return RecipesRepo(
        label=source.label,
        hardware=before.hardware,
        strategies=before.strategies,
        recipes=tuple(recipes),
        taxonomy=before.taxonomy,
        platforms=before.platforms,
        by_path={r.path: r for r in recipes},
        by_hf_id={r.hf_id: r for r in recipes},
    )


def _check_recipe(
    source: FileSource,
    path: str,
    text: str,
    data: Mapping[str, Any],
    hardware: Mapping[str, HardwareProfile],
    strategies: Mapping[str, Strategy],
) -> None:
    """Unknown strategy or hardware ids are errors (upstream validation rejects them too)."""
    hw_keys = set(hardware)
    for profile in hardware.values():
        hw_keys.update(profile.generations)
        hw_keys.add(profile.brand_lower)
    hw_keys.update(BRAND_KEYS)
    hw_keys.add("default")

    def fail(key: Sequence[str | int], why: str) -> NoReturn:
        _located(source, path, text, key, why)

    def need_strategy(name: Any, key: Sequence[str | int]) -> None:
        if not isinstance(name, str) or name not in strategies:
            fail(key, f"unknown strategy '{name}'")

    def need_hardware(hw_id: Any, key: Sequence[str | int], keys: Iterable[str]) -> None:
        if not isinstance(hw_id, str) or hw_id not in keys:
            fail(key, f"unknown hardware id '{hw_id}'")

    def need_mapping(value: Any, key: Sequence[str | int]) -> None:
        if value is not None and not isinstance(value, dict):
            fail(key, "expected a mapping")

    def need_list(value: Any, key: Sequence[str | int]) -> None:
        if value is not None and not isinstance(value, list):
            fail(key, "expected a list")

    for key in ("meta", "model", "variants", "features", "strategy_overrides"):
        need_mapping(data.get(key), [key])
    meta = as_dict(data.get("meta"))
    need_mapping(meta.get("hardware"), ["meta", "hardware"])
    # meta.hardware may name ids the taxonomy lacks (upstream ignores them: real files do)
    if meta.get("default_hardware") is not None:
        need_hardware(meta["default_hardware"], ["meta", "default_hardware"], hardware)

    listed = data.get("compatible_strategies")
    need_list(listed, ["compatible_strategies"])
    for index, name in enumerate(listed or []):
        need_strategy(name, ["compatible_strategies", index])
    if data.get("default_strategy") is not None:
        need_strategy(data["default_strategy"], ["default_strategy"])
    for name in as_dict(data.get("strategy_overrides")):
        need_strategy(name, ["strategy_overrides", name])
    need_mapping(data.get("strategy_hardware"), ["strategy_hardware"])
    for name, per_hw in as_dict(data.get("strategy_hardware")).items():
        need_strategy(name, ["strategy_hardware", name])
        for hw_id in as_dict(per_hw):
            need_hardware(hw_id, ["strategy_hardware", name, hw_id], hw_keys)
    for kv_id, per_hw in as_dict(data.get("kv_cache_strategy_hardware")).items():
        need_strategy(kv_id, ["kv_cache_strategy_hardware", kv_id])
        for hw_id in as_dict(per_hw):
            need_hardware(hw_id, ["kv_cache_strategy_hardware", kv_id, hw_id], hardware)
    for hw_id in as_dict(data.get("hardware_opt_in_features")):
        need_hardware(hw_id, ["hardware_opt_in_features", hw_id], hardware)

    variants = data.get("variants")
    if not isinstance(variants, dict) or "default" not in variants:
        fail(["variants"], "a recipe needs a 'default' variant")
    for key, variant in as_dict(variants).items():
        need_mapping(variant, ["variants", key])
        allow = as_dict(variant).get("supported_hardware")
        need_list(allow, ["variants", key, "supported_hardware"])
        for index, hw_id in enumerate(allow or []):
            need_hardware(hw_id, ["variants", key, "supported_hardware", index], hardware)
    for name, feature in as_dict(data.get("features")).items():
        need_mapping(feature, ["features", name])
        feature = as_dict(feature)
        if feature.get("modes") is not None and feature.get("args") is not None:
            fail(["features", name], "a feature has either 'args' or 'modes', not both")
        for index, strategy in enumerate(feature.get("strategies") or []):
            need_strategy(strategy, ["features", name, "strategies", index])
