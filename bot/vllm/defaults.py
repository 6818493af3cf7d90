"""What an omitted flag resolves to, by vLLM version, device and usage context.

The facts live in ``rules/vllm-defaults.yaml`` (schema :class:`VllmDefaults`, loaded with
located errors); this module picks the entry for a version and computes the defaults that
depend on other settings (docs/spec/vllm-cli-semantics.md §2 batch defaults and clamps, cudagraph
sizes, -O levels).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import Field, field_validator, model_validator

from bot.rules.loader import FieldError, load_validated
from bot.rules.models import Strict
from bot.vllm.superseded import Superseded
from bot.vllm.values import compact
from bot.vllm.versions import (
    RESEARCHED,
    Version,
    fmt_version,
    neighbours,
    parse_version,
    rules_version,
)

UsageContext = Literal[
    "OPENAI_API_SERVER", "LLM_CLASS", "OPENAI_BATCH_RUNNER", "ENGINE_CONTEXT", "UNKNOWN_CONTEXT"
]
DEFAULTS_FILE = "vllm-defaults.yaml"

# --- schema ----------------------------------------------------------------------------------


def _version(value: str) -> str:
    if parse_version(value) is None:
        raise ValueError(f"'{value}' is not a version like 0.22 or 0.27.1")
    return value


class Since(Strict):
    since: str
    until: str | None = None
    source: str = Field(min_length=1, description="vLLM source file and release(s)")

    @field_validator("since")
    @classmethod
    def _check_since(cls, value: str) -> str:
        return _version(value)

    @field_validator("until")
    @classmethod
    def _check_until(cls, value: str | None) -> str | None:
        return None if value is None else _version(value)

    @property
    def since_v(self) -> Version:
        parsed = parse_version(self.since)
        assert parsed is not None
        return parsed

    @property
    def until_v(self) -> Version | None:
        return None if self.until is None else parse_version(self.until)


class BatchCell(Strict):
    max_num_batched_tokens: int = Field(gt=0)
    max_num_seqs: int = Field(gt=0)


class Fallback(BatchCell):
    source: str = Field(min_length=1)


class Tier(Strict):
    id: str = Field(min_length=1)
    label: str = Field(min_length=1)
    min_gib: float = Field(ge=0)
    max_gib: float | None = None
    exclude_names: list[str] = Field(
        default_factory=list, description="regexes (case-insensitive) on the device name"
    )
    values: dict[UsageContext, BatchCell]

    @field_validator("exclude_names")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            re.compile(pattern)
        return patterns

    def matches(self, memory_gib: float, device_name: str | None) -> bool:
        if memory_gib < self.min_gib or (self.max_gib is not None and memory_gib >= self.max_gib):
            return False
        name = device_name or ""
        return not any(re.search(p, name, re.IGNORECASE) for p in self.exclude_names)


class BatchTable(Since):
    tiers: list[Tier] = Field(min_length=1)
    tpu_tokens: dict[str, dict[UsageContext, int]] = Field(default_factory=dict)
    cpu_per_world_size: dict[UsageContext, BatchCell] = Field(default_factory=dict)


class ThroughputMode(Since):
    factor: int = Field(ge=1)


class BatchedDpMoe(Since):
    max_num_batched_tokens: int = Field(gt=0)
    all2all_backends: list[str]


class Batch(Strict):
    fallback: Fallback
    tables: list[BatchTable] = Field(min_length=1)
    throughput_mode: ThroughputMode
    batched_dp_moe: BatchedDpMoe


class Level(Strict):
    mode: int = Field(ge=0, le=3)
    cudagraph_mode: str


class Optimization(Since):
    default_level: int
    levels: dict[int, Level]


class CaptureCap(Since):
    cap: int = Field(gt=0)
    sm10x_cap: int = Field(gt=0)


class CudagraphCapture(Strict):
    sm10x_device_names: list[str]
    caps: list[CaptureCap] = Field(min_length=1)


class StaticValue(Since):
    value: Any = None


class Equivalent(Strict):
    value: Any
    reason: str = Field(min_length=1)


DefaultKind = Literal["static", "model", "explicit", "derived"]


class DefaultRule(Strict):
    key: str = Field(min_length=1)
    kind: DefaultKind = "static"
    category: Literal["engine", "maybe"] = "engine"
    typical: Any = None
    note: str = ""
    differs: list[Any] = Field(default_factory=list, description="explicit values never equal")
    equivalents: list[Equivalent] = Field(default_factory=list)
    values: list[StaticValue] = Field(min_length=1)


class Speculative(Strict):
    mtp_suffix: str = "_mtp"
    defaults: dict[str, list[StaticValue]]
    rejection_sample_methods: dict[str, str]


class EnvNote(Strict):
    name: str = Field(min_length=1)
    removed_after: str | None = None
    maps_to: str = ""
    note: str = ""
    source: str = Field(min_length=1)
    # the value vLLM reads when the variable is unset; a switch read as a boolean
    # (``.lower() in ("true", "1")`` or ``bool(int(…))``) compares by truth
    default: str | None = None
    switch: bool = False

    @field_validator("removed_after")
    @classmethod
    def _check(cls, value: str | None) -> str | None:
        return None if value is None else _version(value)

    def is_default(self, value: str) -> bool:
        """Is ``value`` what vLLM uses when the variable is unset?"""
        if self.default is None:
            return False
        if self.switch:
            return _truth(value) == _truth(self.default)
        return value == self.default


def _truth(value: str) -> bool | None:
    lowered = value.strip().lower()
    return True if lowered in ("true", "1") else False if lowered in ("false", "0", "") else None


class VllmDefaults(Strict):
    batch: Batch
    optimization: list[Optimization] = Field(min_length=1)
    cudagraph_capture: CudagraphCapture
    defaults: list[DefaultRule]
    speculative: Speculative
    superseded: list[Superseded] = Field(default_factory=list)
    env: list[EnvNote] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> VllmDefaults:
        # cross-field checks live on the root so FieldError paths are absolute
        for t, table in enumerate(self.batch.tables):
            last = table.tiers[-1]
            if last.min_gib != 0 or last.max_gib is not None or last.exclude_names:
                raise FieldError(
                    ("batch", "tables", t, "tiers", len(table.tiers) - 1),
                    "the last tier must catch every device",
                )
        for o, optimization in enumerate(self.optimization):
            if optimization.default_level not in optimization.levels:
                raise FieldError(
                    ("optimization", o, "default_level"), "default_level is not one of levels"
                )
        seen: set[str] = set()
        for index, rule in enumerate(self.defaults):
            if rule.key in seen:
                raise FieldError(("defaults", index, "key"), f"duplicate key '{rule.key}'")
            seen.add(rule.key)
        return self

    def rule(self, key: str) -> DefaultRule | None:
        return next((r for r in self.defaults if r.key == key), None)

    def env_note(self, name: str) -> EnvNote | None:
        return next((n for n in self.env if n.name == name), None)


def load_vllm_defaults(rules_dir: Path) -> VllmDefaults:
    """Read ``<rules_dir>/vllm-defaults.yaml``; InputError names file, key and line."""
    return _load(rules_dir.resolve())


def read_vllm_defaults(rules_dir: Path) -> VllmDefaults:
    """Read and validate the file now (no cache): what ``recipe-sync rules`` checks."""
    path = rules_dir / DEFAULTS_FILE
    return load_validated(path, VllmDefaults, display=str(path))


@cache
def _load(rules_dir: Path) -> VllmDefaults:
    return read_vllm_defaults(rules_dir)


# --- picking an entry for a version ------------------------------------------------------------


class _Ranged(Protocol):
    @property
    def since_v(self) -> Version: ...
    @property
    def until_v(self) -> Version | None: ...


RangedT = TypeVar("RangedT", bound=_Ranged)


def _pick_at(entries: Sequence[RangedT], version: Version) -> RangedT | None:
    chosen: RangedT | None = None
    for entry in sorted(entries, key=lambda e: e.since_v):
        if entry.since_v <= version:
            chosen = entry
    if chosen is not None and chosen.until_v is not None and version > chosen.until_v:
        return None
    return chosen


@dataclass(frozen=True)
class Picked(Generic[RangedT]):
    entry: RangedT | None
    unverified: str  # non-empty: the neighbouring researched releases disagree


def pick(entries: Sequence[RangedT], version: Version, what: str) -> Picked[RangedT]:
    """The entry for ``version`` (clamped to the researched range), and a note when the
    researched releases around it disagree."""
    rules = rules_version(version)
    chosen = _pick_at(entries, rules)
    if rules in RESEARCHED:
        return Picked(chosen, "")
    below, above = neighbours(rules)
    if (
        below is not None
        and above is not None
        and _pick_at(entries, below) is not _pick_at(entries, above)
    ):
        return Picked(
            chosen,
            f"{what} changed between {fmt_version(below)} and {fmt_version(above)}; "
            f"not verified for {fmt_version(version)}",
        )
    return Picked(chosen, "")


# --- devices ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceScenario:
    """One device the defaults are resolved for (the known GPU, or a tier when unknown)."""

    label: str  # tier label, e.g. "≥160 GiB"
    memory_gib: float | None
    device_name: str | None
    platform: str | None
    sm10x: bool
    detail: str = ""  # e.g. "mi355x, 287.98 GiB per GPU"

    def describe(self) -> str:
        return f"{self.label} ({self.detail})" if self.detail else self.label


def is_sm10x(defaults: VllmDefaults, device_name: str | None) -> bool:
    name = device_name or ""
    return any(re.search(p, name) for p in defaults.cudagraph_capture.sm10x_device_names)


def tier_for(table: BatchTable, memory_gib: float, device_name: str | None) -> Tier:
    return next(t for t in table.tiers if t.matches(memory_gib, device_name))


def scenarios_for(
    defaults: VllmDefaults,
    version: Version,
    *,
    hardware: str | None,
    memory_gib: float | None,
    device_name: str | None,
    platform: str | None,
) -> tuple[DeviceScenario, ...]:
    """The known device, or one representative per tier of this version's table."""
    table = pick(defaults.batch.tables, version, "the batch-default table").entry
    assert table is not None
    if memory_gib is not None:
        tier = tier_for(table, memory_gib, device_name)
        detail = f"{hardware or device_name or 'device'}, {memory_gib:g} GiB per GPU"
        if platform in ("tpu", "cpu"):
            detail += f", {platform.upper()} platform"
        return (
            DeviceScenario(
                tier.label,
                memory_gib,
                device_name,
                platform,
                is_sm10x(defaults, device_name),
                detail,
            ),
        )
    caps = pick(defaults.cudagraph_capture.caps, version, "the capture-size cap").entry
    sm10x_matters = caps is not None and caps.cap != caps.sm10x_cap
    out: list[DeviceScenario] = []
    for tier in table.tiers:
        memory = tier.min_gib if tier.max_gib is None else (tier.min_gib + tier.max_gib) / 2
        out.append(DeviceScenario(tier.label, memory, None, None, False))
        if sm10x_matters and tier.max_gib is None and tier.min_gib >= 70:
            out.append(
                DeviceScenario(f"{tier.label} SM10x (B200/B300)", memory, "B200", "cuda", True)
            )
    return tuple(out)


# --- resolution -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Resolved:
    """What omitting ``key`` means on one side, for one device scenario."""

    key: str
    kind: DefaultKind
    value: Any  # the default (derived/static) or the placeholder (model/explicit)
    source: str
    category: Literal["engine", "maybe"] = "engine"
    context: str = ""  # e.g. "for `vllm serve` (OPENAI_API_SERVER) on ≥160 GiB (...)"
    note: str = ""
    typical: Any = None
    differs: tuple[Any, ...] = ()
    equivalents: Mapping[str, str] = field(default_factory=dict)  # compact(value) → reason
    unverified: str = ""
    unresolved: str = ""  # derived but not computable statically (depends on the model)


@dataclass(frozen=True)
class BatchResolution:
    max_num_batched_tokens: int | None
    max_num_seqs: int
    source: str
    context: str
    unverified: str
    unresolved: str


def _int(side: Mapping[str, Any], key: str, default: int) -> int:
    value = side.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def batch_defaults(
    defaults: VllmDefaults,
    version: Version,
    side: Mapping[str, Any],
    scenario: DeviceScenario,
    usage: UsageContext,
) -> BatchResolution:
    """§2: base values, throughput doubling, batched-DP MoE override, clamps."""
    picked = pick(defaults.batch.tables, version, "the batch-default table")
    table = picked.entry
    assert table is not None
    memory = scenario.memory_gib if scenario.memory_gib is not None else 0.0
    tier = tier_for(table, memory, scenario.device_name)
    cell: BatchCell | None = tier.values.get(usage)
    source = table.source
    where = f"on {scenario.describe()}"
    if scenario.platform == "cpu" and usage in table.cpu_per_world_size:
        world = _int(side, "parallel.tensor_parallel_size", 1) * _int(
            side, "parallel.pipeline_parallel_size", 1
        )
        per = table.cpu_per_world_size[usage]
        cell = BatchCell(
            max_num_batched_tokens=per.max_num_batched_tokens * world,
            max_num_seqs=per.max_num_seqs * world,
        )
        where = f"on the CPU platform with world size {world}"
    if cell is None:
        fallback = defaults.batch.fallback
        cell = BatchCell(
            max_num_batched_tokens=fallback.max_num_batched_tokens,
            max_num_seqs=fallback.max_num_seqs,
        )
        source = fallback.source
    mnbt: int = cell.max_num_batched_tokens
    seqs: int = cell.max_num_seqs
    if scenario.platform == "tpu":
        name = (scenario.device_name or "").lower()
        row = next((r for k, r in table.tpu_tokens.items() if k in name), None)
        if row is not None and usage in row:
            mnbt = row[usage]
            where += " (TPU token row)"

    mode = side.get("vllm.performance_mode", "balanced")
    throughput = defaults.batch.throughput_mode
    if mode == "throughput" and rules_version(version) >= throughput.since_v:
        mnbt *= throughput.factor
        seqs *= throughput.factor
        mode_text = f"--performance-mode throughput (x{throughput.factor})"
    else:
        mode_text = "balanced performance mode"

    explicit_mnbt = side.get("scheduler.max_num_batched_tokens")
    explicit_seqs = side.get("scheduler.max_num_seqs")
    dp_moe = defaults.batch.batched_dp_moe
    if (
        explicit_mnbt is None
        and rules_version(version) >= dp_moe.since_v
        and side.get("parallel.all2all_backend") in dp_moe.all2all_backends
        and side.get("parallel.enable_expert_parallel") is True
        and _int(side, "parallel.data_parallel_size", 1) > 1
    ):
        mnbt = dp_moe.max_num_batched_tokens
        mode_text += ", batched DP MoE override"

    unresolved = ""
    resolved_mnbt: int | None = explicit_mnbt if isinstance(explicit_mnbt, int) else mnbt
    resolved_seqs: int = explicit_seqs if isinstance(explicit_seqs, int) else seqs
    max_model_len = side.get("model.max_model_len")
    mml = max_model_len if isinstance(max_model_len, int) and max_model_len > 0 else None
    if not isinstance(explicit_mnbt, int):
        if side.get("scheduler.enable_chunked_prefill") is False:
            if mml is None:
                resolved_mnbt = None
                unresolved = (
                    "chunked prefill is off, so max_num_batched_tokens is raised to the "
                    "model's max_model_len, which is derived from the model"
                )
            else:
                resolved_mnbt = max(mml, mnbt)
        if resolved_mnbt is not None and mml is not None:
            resolved_mnbt = min(resolved_seqs * mml, resolved_mnbt)
    if not isinstance(explicit_seqs, int) and resolved_mnbt is not None:
        resolved_seqs = min(resolved_seqs, resolved_mnbt)
    context = f"for `vllm serve` ({usage}) {where}, {mode_text}"
    if usage != "OPENAI_API_SERVER":
        context = f"for usage context {usage} {where}, {mode_text}"
    return BatchResolution(
        resolved_mnbt, resolved_seqs, source, context, picked.unverified, unresolved
    )


def _level(
    defaults: VllmDefaults, version: Version, side: Mapping[str, Any]
) -> tuple[Level, str, str]:
    optimization = pick(defaults.optimization, version, "the -O level table")
    table = optimization.entry
    assert table is not None
    explicit = side.get("vllm.optimization_level")
    level = (
        explicit if isinstance(explicit, int) and explicit in table.levels else table.default_level
    )
    spelled = f"-O{level}" + ("" if isinstance(explicit, int) else " (default)")
    return table.levels[level], spelled, table.source


def capture_sizes_for(max_size: int, mnbt: int | None, interactivity: bool) -> list[int]:
    sizes = {1, 2, 4, *range(8, 256, 8), *range(256, max_size + 1, 16)}
    if interactivity:
        sizes |= set(range(1, 33))
    limit = max_size if mnbt is None else min(max_size, mnbt)
    return sorted(s for s in sizes if s <= limit)


def resolve(
    defaults: VllmDefaults,
    key: str,
    version: Version,
    side: Mapping[str, Any],
    scenario: DeviceScenario,
    usage: UsageContext = "OPENAI_API_SERVER",
) -> Resolved | None:
    """What omitting ``key`` resolves to on a side whose other settings are ``side``
    (canonical key → value); None when no default is researched for ``key``."""
    rule = defaults.rule(key)
    if rule is None:
        return None
    picked = pick(rule.values, version, f"the default of {key}")
    entry = picked.entry
    if entry is None:
        return None
    equivalents = {compact(e.value): e.reason for e in rule.equivalents}
    base = Resolved(
        key=key,
        kind=rule.kind,
        value=entry.value,
        source=entry.source,
        category=rule.category,
        note=rule.note,
        typical=rule.typical,
        differs=tuple(rule.differs),
        equivalents=equivalents,
        unverified=picked.unverified,
    )
    if rule.kind != "derived":
        return base
    return _derived(defaults, base, version, side, scenario, usage)


def _derived(
    defaults: VllmDefaults,
    base: Resolved,
    version: Version,
    side: Mapping[str, Any],
    scenario: DeviceScenario,
    usage: UsageContext,
) -> Resolved:
    key = base.key
    if key in ("scheduler.max_num_seqs", "scheduler.max_num_batched_tokens"):
        batch = batch_defaults(defaults, version, side, scenario, usage)
        value = batch.max_num_seqs if key.endswith("seqs") else batch.max_num_batched_tokens
        return _with(base, value, batch.source, batch.context, batch.unverified, batch.unresolved)

    if key in ("compilation.mode", "compilation.cudagraph_mode"):
        level, spelled, source = _level(defaults, version, side)
        if side.get("model.enforce_eager") is True:
            value_e: Any = 0 if key == "compilation.mode" else "NONE"
            return _with(base, value_e, source, "with --enforce-eager")
        value_l: Any = level.mode if key == "compilation.mode" else level.cudagraph_mode
        return _with(base, value_l, source, f"at {spelled}")

    if key in ("compilation.max_cudagraph_capture_size", "compilation.cudagraph_capture_sizes"):
        return _capture(defaults, base, version, side, scenario, usage)

    if key == "parallel.distributed_executor_backend":
        world = _int(side, "parallel.tensor_parallel_size", 1) * _int(
            side, "parallel.pipeline_parallel_size", 1
        )
        value_b = "uni" if world == 1 else "mp"
        return _with(base, value_b, base.source, f"for world size {world} (tp x pp)")
    return _with(base, None, base.source, "", unresolved=f"no derivation for {key}")


def _capture(
    defaults: VllmDefaults,
    base: Resolved,
    version: Version,
    side: Mapping[str, Any],
    scenario: DeviceScenario,
    usage: UsageContext,
) -> Resolved:
    caps = pick(defaults.cudagraph_capture.caps, version, "the capture-size cap")
    cap_entry = caps.entry
    assert cap_entry is not None
    batch = batch_defaults(defaults, version, side, scenario, usage)
    unverified = "; ".join(n for n in (caps.unverified, batch.unverified) if n)
    if side.get("model.enforce_eager") is True:
        return _with(
            base, 0 if base.key.endswith("size") else [], base.source, "with --enforce-eager"
        )
    spec = side.get("speculative_config")
    tokens = 0
    if isinstance(spec, dict) and spec:
        k = spec.get("num_speculative_tokens")
        if not isinstance(k, int) or isinstance(k, bool):
            return _with(
                base,
                None,
                base.source,
                "",
                unresolved="speculative decoding without num_speculative_tokens: "
                "the draft config's n_predict decides the capture size",
            )
        tokens = k
    if batch.max_num_batched_tokens is None:
        return _with(base, None, base.source, "", unresolved=batch.unresolved)
    explicit_max = side.get("compilation.max_cudagraph_capture_size")
    cap = cap_entry.sm10x_cap if scenario.sm10x else cap_entry.cap
    computed = min(batch.max_num_seqs * (1 + tokens) * 2, cap, batch.max_num_batched_tokens)
    source = cap_entry.source
    formula = (
        f"min(max_num_seqs {batch.max_num_seqs} x (1 + {tokens} spec tokens) x 2, "
        f"cap {cap}{' on SM10x' if scenario.sm10x else ''}, "
        f"max_num_batched_tokens {batch.max_num_batched_tokens})"
    )
    context = f"{formula} on {scenario.describe()}"
    if base.key.endswith("size"):
        return _with(base, computed, source, context, unverified)
    max_size = explicit_max if isinstance(explicit_max, int) else computed
    interactivity = side.get("vllm.performance_mode") == "interactivity"
    sizes = capture_sizes_for(max_size, batch.max_num_batched_tokens, interactivity)
    return _with(base, sizes, source, f"up to {max_size} on {scenario.describe()}", unverified)


def _with(
    base: Resolved,
    value: Any,
    source: str,
    context: str,
    unverified: str = "",
    unresolved: str = "",
) -> Resolved:
    notes = "; ".join(n for n in (base.unverified, unverified) if n)
    return Resolved(
        key=base.key,
        kind=base.kind,
        value=value,
        source=source,
        category=base.category,
        context=context,
        note=base.note,
        typical=base.typical,
        differs=base.differs,
        equivalents=base.equivalents,
        unverified=notes,
        unresolved=unresolved,
    )


def speculative_default(defaults: VllmDefaults, name: str, version: Version) -> StaticValue | None:
    entries = defaults.speculative.defaults.get(name)
    return pick(entries, version, name).entry if entries else None
