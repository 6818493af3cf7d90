"""Flag-by-flag semantic diff of a benchmark launch and a recipe rendering
(docs/spec/vllm-cli-semantics.md §5).

Both sides are normalised under one vLLM version's parser; each canonical key gets a
:class:`FlagDiff` whose verdict says whether the served configuration differs, and a reason
a reviewer can check (the default, where it comes from, for which device and version).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.rules import KnobClass, Rules
from bot.rules.models import FlagRule, JsonKeyRule
from bot.vllm.catalogue import FlagSpec
from bot.vllm.defaults import (
    DeviceScenario,
    Resolved,
    VllmDefaults,
    load_vllm_defaults,
    resolve,
    scenarios_for,
    speculative_default,
)
from bot.vllm.normalise import Finding, ServeConfig, Setting, normalise, split_env_prefix
from bot.vllm.values import compact
from bot.vllm.versions import (
    VersionResolution,
    fmt_version,
    parse_image,
    parse_version,
    resolve_version,
    rules_version,
    short_version,
    span_status,
)


@dataclass(frozen=True)
class LaunchSide:
    """One side of the comparison: the server argv, its environment and image."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    image: str | None = None
    config_files: Mapping[str, str] = field(default_factory=dict)  # --config FILE → content


@dataclass(frozen=True)
class DeviceContext:
    hardware: str | None
    memory_gib: float | None  # per GPU, GiB
    device_name: str | None
    platform: str | None


class Verdict(StrEnum):
    SAME = "same"
    EQUIVALENT = "equivalent (default)"
    DIFFERS = "differs"
    BENCHMARK_ONLY = "benchmark-only"
    FRONT_END_ONLY = "front-end-only"
    RECIPE_ONLY = "recipe-only"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class FlagDiff:
    kind: str  # "flag" | "env" | "image"
    key: str  # canonical key ("scheduler.max_num_seqs", "speculative_config", env name, "image")
    flag: str  # canonical long spelling ("--max-num-seqs"; env: the variable name)
    verdict: Verdict
    bench_value: Any  # canonical values (None when absent)
    recipe_value: Any
    bench_tokens: tuple[str, ...]  # raw tokens as spelled on each side, () when absent
    recipe_tokens: tuple[str, ...]
    reason: str  # one sentence a reviewer can check
    category: str  # engine | maybe | api | tracing | topology | front-end | benchmark | env | image
    benchmark_only_keys: tuple[str, ...] = ()  # e.g. JSON keys stripped from --speculative-config

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "flag": self.flag,
            "verdict": self.verdict.value,
            "bench_value": self.bench_value,
            "recipe_value": self.recipe_value,
            "bench_tokens": list(self.bench_tokens),
            "recipe_tokens": list(self.recipe_tokens),
            "reason": self.reason,
            "category": self.category,
            "benchmark_only_keys": list(self.benchmark_only_keys),
        }


# Categories whose differences change the served configuration (docs/spec/vllm-cli-semantics.md
# §5.8-5.9).
CONFIG_CATEGORIES = frozenset({"engine", "maybe", "env", "image"})
MISMATCH_VERDICTS = frozenset({Verdict.DIFFERS, Verdict.RECIPE_ONLY, Verdict.UNKNOWN})


@dataclass(frozen=True)
class DiffReport:
    diffs: tuple[FlagDiff, ...]  # flags, then env, then image
    version: VersionResolution
    device: DeviceContext
    tier: str | None  # the device's tier label; None when the device is unknown
    usage_context: str
    bench_findings: tuple[Finding, ...]
    recipe_findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()

    @property
    def mismatches(self) -> tuple[FlagDiff, ...]:
        """Differences of the served configuration (not front-end, API, tracing, topology)."""
        return tuple(
            d
            for d in self.diffs
            if d.verdict in MISMATCH_VERDICTS and d.category in CONFIG_CATEGORIES
        )

    @property
    def benchmark_only(self) -> tuple[FlagDiff, ...]:
        return tuple(d for d in self.diffs if d.verdict is Verdict.BENCHMARK_ONLY)

    @property
    def identical(self) -> bool:
        """§5.9: no engine differences and no unresolved maybe-equivalences remain."""
        return not self.mismatches

    def to_json(self) -> dict[str, Any]:
        def finding(f: Finding) -> dict[str, Any]:
            return {
                "severity": f.severity,
                "code": f.code,
                "message": f.message,
                "tokens": list(f.tokens),
            }

        return {
            "version": {
                "version": self.version.label,
                "rules": fmt_version(self.version.rules),
                "source": self.version.source,
                "reason": self.version.reason,
                "notes": list(self.version.notes),
            },
            "device": {
                "hardware": self.device.hardware,
                "memory_gib": self.device.memory_gib,
                "device_name": self.device.device_name,
                "platform": self.device.platform,
                "tier": self.tier,
            },
            "usage_context": self.usage_context,
            "identical": self.identical,
            "diffs": [d.to_json() for d in self.diffs],
            "findings": {
                "bench": [finding(f) for f in self.bench_findings],
                "recipe": [finding(f) for f in self.recipe_findings],
            },
            "notes": list(self.notes),
        }


# --- device -----------------------------------------------------------------------------------


def device_context(
    hardware: str | None, rules: Rules, taxonomy_vram: Mapping[str, float] | None = None
) -> DeviceContext:
    """Per-GPU memory from the recipes taxonomy (vram_gb / gpu_count) when given, else from
    ``rules/hardware.yaml: gpus``; name and platform always from the latter."""
    if hardware is None:
        return DeviceContext(None, None, None, None)
    gpu = rules.hardware.gpus.get(hardware)
    memory: float | None = None
    if taxonomy_vram is not None and hardware in taxonomy_vram:
        memory = float(taxonomy_vram[hardware])
    elif gpu is not None:
        memory = gpu.memory_gib
    return DeviceContext(
        hardware,
        memory,
        gpu.device_name if gpu is not None else None,
        gpu.platform if gpu is not None else None,
    )


# --- the comparison ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ctx:
    rules: Rules
    defaults: VllmDefaults
    resolution: VersionResolution
    scenarios: tuple[DeviceScenario, ...]
    bench: ServeConfig
    recipe: ServeConfig

    @property
    def version(self) -> tuple[int, int, int]:
        return self.resolution.version

    @property
    def rules_label(self) -> str:
        """How reasons name the rule set, saying when the version was assumed."""
        resolution = self.resolution
        label = f"vLLM {short_version(resolution.rules)} rules"
        if resolution.source == "unknown":
            return f"{label} (version unknown)"
        if resolution.source == "nightly":
            return f"{label} (nightly image, assumed)"
        if resolution.rules != resolution.version:
            return f"{label} (assumed for {resolution.label})"
        return label


def _side_name(bench_side: bool) -> str:
    return "the benchmark" if bench_side else "the recipe"


def _spelled(setting: Setting | None) -> str:
    return " ".join(setting.tokens) if setting is not None and setting.tokens else ""


def _flag_rule(rules: Iterable[FlagRule], spec: FlagSpec | None, value: Any) -> FlagRule | None:
    if spec is None:
        return None
    for rule in rules:
        if rule.flag == spec.long and (rule.value is None or compact(value) == rule.value):
            return rule
    return None


def _with_notes(reason: str, *notes: str) -> str:
    extra = "; ".join(n for n in notes if n)
    return f"{reason} ({extra})" if extra else reason


def _default_text(res: Resolved, ctx: _Ctx) -> str:
    where = f" {res.context}" if res.context else ""
    return f"{compact(res.value)}{where} [{res.source}; {ctx.rules_label}]"


def _one_sided(key: str, present: Setting, bench_side: bool, ctx: _Ctx) -> tuple[Verdict, str, str]:
    """One side sets ``key``, the other omits it: does omitting resolve to the same value?"""
    spec = present.spec
    category: str = spec.category if spec is not None else "engine"
    omitting = ctx.recipe if bench_side else ctx.bench
    side_values = omitting.values()
    who, other = _side_name(bench_side), _side_name(not bench_side)
    differs = Verdict.DIFFERS if bench_side else Verdict.RECIPE_ONLY
    value = present.value
    sets = f"{who} sets {present.flag} {compact(value)}"

    outcomes: list[tuple[DeviceScenario, Resolved]] = []
    for scenario in ctx.scenarios:
        res = resolve(ctx.defaults, key, ctx.version, side_values, scenario)
        if res is None:
            break
        outcomes.append((scenario, res))
    if not outcomes:
        return (
            differs,
            f"{sets}; {other} omits it and no researched default for {key} is known "
            f"({ctx.rules_label}), so omitting it is not shown to be equivalent",
            category,
        )
    res = outcomes[0][1]
    cat = "maybe" if res.category == "maybe" else category
    if res.kind == "explicit":
        return (
            differs,
            _with_notes(f"{sets}; {other} omits it, and {res.note}", res.unverified),
            cat,
        )
    if res.kind == "model":
        # resolved at startup from the model, checkpoint or hardware
        placeholder = compact(res.value)
        cite = f"[{res.source}; {ctx.rules_label}]"
        omitted = f"{other} omits it ({placeholder}): {res.note} {cite}"
        if compact(value) == placeholder:
            return (
                Verdict.EQUIVALENT,
                _with_notes(f"{sets}, which is the default {cite}", res.unverified),
                category,
            )
        if any(compact(value) == compact(d) for d in res.differs):
            return differs, _with_notes(f"{sets}; {omitted}", res.unverified), "maybe"
        if res.typical is not None:
            verdict = Verdict.EQUIVALENT if _equal(value, res.typical) else differs
            cat = "maybe" if verdict is Verdict.EQUIVALENT else category
            return verdict, _with_notes(f"{sets}; {omitted}", res.unverified), cat
        return Verdict.UNKNOWN, _with_notes(f"{sets}; {omitted}", res.unverified), "maybe"

    # static or derived: compare against the resolved value on every device scenario
    equal_on: list[tuple[DeviceScenario, Resolved]] = []
    differ_on: list[tuple[DeviceScenario, Resolved]] = []
    unresolved: list[tuple[DeviceScenario, Resolved]] = []
    for scenario, resolved in outcomes:
        if resolved.unresolved:
            unresolved.append((scenario, resolved))
        elif _equal(value, resolved.value) or compact(value) in resolved.equivalents:
            equal_on.append((scenario, resolved))
        else:
            differ_on.append((scenario, resolved))
    notes = sorted({r.unverified for _, r in outcomes if r.unverified})
    if unresolved:
        first = unresolved[0][1]
        return (
            Verdict.UNKNOWN,
            _with_notes(
                f"{sets}; {other} omits it and its default cannot be resolved statically: "
                f"{first.unresolved} [{first.source}; {ctx.rules_label}]",
                *notes,
            ),
            "maybe",
        )
    if equal_on and differ_on:
        eq = ", ".join(f"{s.label} (default {compact(r.value)})" for s, r in equal_on)
        ne = ", ".join(f"{s.label} (default {compact(r.value)})" for s, r in differ_on)
        return (
            Verdict.UNKNOWN,
            _with_notes(
                f"{sets}; the device is unknown: equal on tier {eq}, differs on tier {ne} "
                f"[{res.source}; {ctx.rules_label}]",
                *notes,
            ),
            cat,
        )
    resolved_res = (equal_on or differ_on)[0][1]
    if len(outcomes) > 1 and len({compact(r.value) for _, r in outcomes}) > 1:
        per_tier = ", ".join(f"{compact(r.value)} on {s.label}" for s, r in outcomes)
        default = f"{per_tier} (device unknown) [{resolved_res.source}; {ctx.rules_label}]"
    else:
        every = " on every tier (device unknown)" if len(outcomes) > 1 else ""
        default = _default_text(resolved_res, ctx) + every
    if equal_on:
        why = resolved_res.equivalents.get(compact(value), "")
        return (
            Verdict.EQUIVALENT,
            _with_notes(
                f"{sets}; {other} omits it, which resolves to the default {default}", why, *notes
            ),
            cat,
        )
    return (
        differs,
        _with_notes(
            f"{sets}; {other} omits it, which resolves to {default}, "
            "so omitting it is not equivalent",
            *notes,
        ),
        cat,
    )


def _pair_text(a: Any, b: Any) -> set[str]:
    return {compact(a), compact(b)}


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)), abs(float(b)))
    return bool(a == b)


# --- JSON-valued flags --------------------------------------------------------------------------


def _strip(
    flag: str, mapping: Mapping[str, Any], rules: Iterable[JsonKeyRule]
) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]]:
    rest = dict(mapping)
    stripped: dict[str, tuple[Any, str]] = {}
    for rule in rules:
        if rule.flag != flag or rule.key not in rest:
            continue
        if rule.value is None or compact(rest[rule.key]) == compact(rule.value):
            stripped[rule.key] = (rest.pop(rule.key), rule.reason)
    return rest, stripped


def _drop_spec_defaults(
    mapping: dict[str, Any], ctx: _Ctx
) -> tuple[dict[str, Any], dict[str, str]]:
    """§5.6: explicit speculative-config values equal to the static default are removed."""
    out = dict(mapping)
    dropped: dict[str, str] = {}
    for name in list(out):
        entry = speculative_default(ctx.defaults, name, ctx.version)
        if entry is not None and compact(out[name]) == compact(entry.value):
            dropped[name] = f"{name} {compact(entry.value)} is the default [{entry.source}]"
            del out[name]
    return out, dropped


def _compare_json(
    key: str, b: Setting | None, r: Setting | None, ctx: _Ctx
) -> tuple[Verdict, str, str, tuple[str, ...]] | None:
    """Dict-valued flags: strip benchmark-only keys, compare the rest as data."""
    present = b or r
    assert present is not None
    spec = present.spec
    if spec is None or not all(isinstance(s.value, dict) for s in (b, r) if s is not None):
        return None
    rules = ctx.rules.flags.benchmark_only_json_keys
    b_rest, b_stripped = _strip(spec.long, b.value, rules) if b is not None else ({}, {})
    r_rest, r_stripped = _strip(spec.long, r.value, rules) if r is not None else ({}, {})
    excluded = set(b_stripped) | set(r_stripped)
    stripped_keys = tuple(sorted(excluded))
    if b is None or r is None:
        if not excluded:
            return None
        side = "benchmark" if b is not None else "recipe"
        listed = ", ".join(
            f"{k} {compact(v)}" for k, (v, _) in {**b_stripped, **r_stripped}.items()
        )
        verdict = Verdict.DIFFERS if b is not None else Verdict.RECIPE_ONLY
        return (
            verdict,
            f"only the {side} sets {spec.long} {compact(present.value)}; it includes "
            f"benchmark-only keys ({listed})",
            spec.category,
            stripped_keys,
        )
    b_cmp = {k: v for k, v in b_rest.items() if k not in excluded}
    r_cmp = {k: v for k, v in r_rest.items() if k not in excluded}
    dropped: dict[str, str] = {}
    if key == "speculative_config":
        b_cmp, b_drop = _drop_spec_defaults(b_cmp, ctx)
        r_cmp, r_drop = _drop_spec_defaults(r_cmp, ctx)
        dropped = {**b_drop, **r_drop}
    differing = sorted(set(b_cmp) | set(r_cmp), key=str)
    differing = [k for k in differing if not _equal(b_cmp.get(k), r_cmp.get(k))]

    def pair(name: str) -> str:
        left = compact(b_stripped[name][0]) + " (benchmark-only)" if name in b_stripped else None
        right = compact(r_stripped[name][0]) + " (benchmark-only)" if name in r_stripped else None
        left = left or compact(b.value.get(name, "omitted"))
        right = right or compact(r.value.get(name, "omitted"))
        return f"{name} {left} vs {right}"

    bench_only_text = "; ".join(pair(k) for k in stripped_keys)
    reasons = "; ".join(
        sorted({reason for _, reason in (*b_stripped.values(), *r_stripped.values())})
    )
    if differing:
        listed = "; ".join(
            f"{k} {compact(b_cmp.get(k, 'omitted'))} vs {compact(r_cmp.get(k, 'omitted'))}"
            for k in differing
        )
        extra = f"; also benchmark-only: {bench_only_text}" if excluded else ""
        return (
            Verdict.DIFFERS,
            f"{spec.long} differs in {listed}{extra}",
            spec.category,
            stripped_keys,
        )
    if excluded:
        recipe_ships = [k for k in r_stripped]
        warning = (
            f"; the recipe ships benchmark-only {'key' if len(recipe_ships) == 1 else 'keys'} "
            f"{', '.join(recipe_ships)}, which it must not"
            if recipe_ships
            else ""
        )
        return (
            Verdict.BENCHMARK_ONLY,
            f"{spec.long} is equal except benchmark-only keys: {bench_only_text} "
            f"({reasons}){warning}",
            "benchmark",
            stripped_keys,
        )
    if dropped:
        return (
            Verdict.EQUIVALENT,
            f"{spec.long} is equal once default-valued keys are removed: "
            + "; ".join(dropped[k] for k in sorted(dropped)),
            spec.category,
            (),
        )
    return (
        Verdict.SAME,
        f"{spec.long} is equal as data (key order and spelling aside)",
        spec.category,
        (),
    )


# --- per key ----------------------------------------------------------------------------------


def _flag_diff(key: str, b: Setting | None, r: Setting | None, ctx: _Ctx) -> FlagDiff:
    present = b or r
    assert present is not None
    spec = present.spec
    flag = present.flag
    b_value = b.value if b is not None else None
    r_value = r.value if r is not None else None
    b_tokens = b.tokens if b is not None else ()
    r_tokens = r.tokens if r is not None else ()

    def make(verdict: Verdict, reason: str, category: str, keys: tuple[str, ...] = ()) -> FlagDiff:
        return FlagDiff(
            "flag", key, flag, verdict, b_value, r_value, b_tokens, r_tokens, reason, category, keys
        )

    flags = ctx.rules.flags
    bench_rule = _flag_rule(flags.benchmark_only, spec, b_value) if b is not None else None
    recipe_rule = _flag_rule(flags.benchmark_only, spec, r_value) if r is not None else None
    if bench_rule or recipe_rule:
        rule = bench_rule or recipe_rule
        assert rule is not None
        ships = " The recipe ships it too, which it must not." if recipe_rule else ""
        return make(
            Verdict.BENCHMARK_ONLY,
            f"{flag}{' ' + rule.value if rule.value else ''} is benchmark-only: "
            f"{rule.reason}.{ships}",
            "benchmark",
        )
    front_rule = _flag_rule(flags.front_end, spec, None)
    if front_rule is not None:
        if b is not None and r is not None and _equal(b_value, r_value):
            return make(Verdict.SAME, f"both sides set {flag} {compact(b_value)}", "front-end")
        return make(
            Verdict.FRONT_END_ONLY,
            f"{flag} is front-end only ({front_rule.reason}): "
            "not a serving-configuration difference",
            "front-end",
        )

    json_result = _compare_json(key, b, r, ctx)
    if json_result is not None:
        verdict, reason, json_category, keys = json_result
        return make(verdict, reason, json_category, keys)

    category: str = spec.category if spec is not None else "engine"
    if b is not None and r is not None:
        if _equal(b_value, r_value):
            same_spelling = b_tokens == r_tokens
            how = "" if same_spelling else f" after normalisation ({_spelled(b)} ≡ {_spelled(r)})"
            return make(
                Verdict.SAME, f"both sides resolve {flag} to {compact(b_value)}{how}", category
            )
        res = resolve(ctx.defaults, key, ctx.version, ctx.bench.values(), ctx.scenarios[0])
        if res is not None:
            b_eq = res.equivalents.get(compact(b_value))
            r_eq = res.equivalents.get(compact(r_value))
            pair = {compact(b_value), compact(r_value)}
            if (b_eq or r_eq) and pair <= {compact(res.value), *res.equivalents}:
                return make(
                    Verdict.EQUIVALENT,
                    f"{flag} {compact(b_value)} vs {compact(r_value)}: {b_eq or r_eq}",
                    category,
                )
        # "maybe" only when one side spells the placeholder (auto vs fp8): two explicit,
        # different values (aiter vs aiter_triton_mxfp4_bf16) differ outright
        placeholder = (
            res is not None
            and res.kind == "model"
            and compact(res.value) in _pair_text(b_value, r_value)
        )
        cat = "maybe" if placeholder and res is not None and res.category == "maybe" else category
        note = f": {res.note}" if res is not None and res.note and cat == "maybe" else ""
        return make(
            Verdict.DIFFERS,
            f"the benchmark sets {flag} {compact(b_value)}, the recipe {compact(r_value)}{note}",
            cat,
        )
    verdict, reason, cat = _one_sided(key, present, b is not None, ctx)
    return make(verdict, reason, cat)


_LOCAL_PATH = re.compile(r"^(/|\./|\.\./|~|\$)")


def _model_diff(ctx: _Ctx) -> FlagDiff | None:
    b, r = ctx.bench.model, ctx.recipe.model
    if b is None and r is None:
        return None

    def make(verdict: Verdict, reason: str) -> FlagDiff:
        return FlagDiff(
            "flag",
            "model",
            "model",
            verdict,
            b,
            r,
            ctx.bench.model_tokens,
            ctx.recipe.model_tokens,
            reason,
            "engine",
        )

    if b is None or r is None:
        verdict = Verdict.DIFFERS if b is not None else Verdict.RECIPE_ONLY
        return make(verdict, f"only {_side_name(b is not None)} names a model ({b or r})")
    if b == r:
        return make(Verdict.SAME, f"both sides serve {b}")
    local = [m for m in (b, r) if _LOCAL_PATH.match(m)]
    if len(local) == 1:
        path = local[0]
        hf = r if path == b else b
        if path.rstrip("/").rsplit("/", 1)[-1].lower() == hf.rsplit("/", 1)[-1].lower():
            return make(
                Verdict.SAME,
                f"local path {path} vs Hugging Face id {hf}: same model name; where the weights "
                "live is host-specific (a note, not a configuration difference)",
            )
        return make(
            Verdict.UNKNOWN,
            f"local path {path} vs Hugging Face id {hf}: cannot tell statically whether the path "
            "holds that checkpoint",
        )
    return make(Verdict.DIFFERS, f"the benchmark serves {b}, the recipe {r}")


def _env_diffs(bench: LaunchSide, recipe: LaunchSide, ctx: _Ctx) -> list[FlagDiff]:
    names = dict.fromkeys([*bench.env, *recipe.env])
    return [_env_diff(name, bench.env.get(name), recipe.env.get(name), ctx) for name in names]


def _env_diff(name: str, b: str | None, r: str | None, ctx: _Ctx) -> FlagDiff:
    """Environment variables compared like flags, classified by ``rules/env.yaml``."""

    def make(verdict: Verdict, reason: str, category: str) -> FlagDiff:
        return FlagDiff(
            "env",
            name,
            name,
            verdict,
            b,
            r,
            (f"{name}={b}",) if b is not None else (),
            (f"{name}={r}",) if r is not None else (),
            reason,
            category,
        )

    note = ctx.defaults.env_note(name)
    note_text = ""
    if note is not None:
        note_text = note.note or (f"maps to {note.maps_to}" if note.maps_to else "")
        removed = parse_version(note.removed_after) if note.removed_after else None
        if removed is not None and b != r and span_status(ctx.version, (0, 0, 0), removed) == "no":
            return make(
                Verdict.EQUIVALENT,
                f"{name} has no effect under {ctx.rules_label}: removed after "
                f"{fmt_version(removed)} (use {note.maps_to}) [{note.source}]",
                "env",
            )
    classified = ctx.rules.env.classify(name)
    if classified is None and ctx.rules.knob_class("env", name) is KnobClass.HARNESS:
        why = ctx.rules.knobs.reason("env", name)
        return make(
            Verdict.BENCHMARK_ONLY,
            f"{name} is a benchmark harness setting (rules/knobs.yaml): {why}",
            "benchmark",
        )
    if classified is None:
        if b == r:
            return make(Verdict.SAME, _with_notes(f"both sides set {name}={b}", note_text), "env")
        return make(
            Verdict.UNKNOWN,
            _with_notes(
                f"{name} is not classified by rules/env.yaml: cannot tell whether it changes "
                "the served configuration",
                note_text,
            ),
            "env",
        )
    kind, rule = classified
    if kind == "benchmark_only":
        ships = "; the recipe sets it too, which it must not" if r is not None else ""
        return make(
            Verdict.BENCHMARK_ONLY, f"{name} is benchmark-only: {rule.reason}{ships}", "benchmark"
        )
    if kind == "front_end":
        verdict = Verdict.SAME if b == r else Verdict.FRONT_END_ONLY
        return make(verdict, f"{name} is front-end only: {rule.reason}", "front-end")
    if b == r:
        return make(Verdict.SAME, _with_notes(f"both sides set {name}={b}", note_text), "env")
    if b is not None and r is not None:
        return make(
            Verdict.DIFFERS,
            _with_notes(f"{name}: benchmark {b} vs recipe {r} ({rule.reason})", note_text),
            "env",
        )
    one = b if r is None else r if b is None else None
    if one is not None and note is not None and note.is_default(one):
        # setting a variable to what vLLM (or the library it calls) reads when unset changes nothing
        who = "the benchmark" if b is not None else "the recipe"
        return make(
            Verdict.EQUIVALENT,
            f"only {who} sets {name}={one}, which is what is read when it is unset [{note.source}]",
            "env",
        )
    verdict = Verdict.DIFFERS if b is not None else Verdict.RECIPE_ONLY
    who = "the benchmark" if b is not None else "the recipe"
    value = b if b is not None else r
    return make(
        verdict, _with_notes(f"only {who} sets {name}={value} ({rule.reason})", note_text), "env"
    )


def _image_diff(bench: LaunchSide, recipe: LaunchSide) -> FlagDiff | None:
    b = parse_image(bench.image) if bench.image and bench.image.strip() else None
    r = parse_image(recipe.image) if recipe.image and recipe.image.strip() else None
    if b is None and r is None:
        return None

    def make(verdict: Verdict, reason: str) -> FlagDiff:
        return FlagDiff(
            "image",
            "image",
            "image",
            verdict,
            bench.image,
            recipe.image,
            (bench.image,) if bench.image else (),
            (recipe.image,) if recipe.image else (),
            reason,
            "image",
        )

    if b is None or r is None:
        present = b or r
        assert present is not None
        verdict = Verdict.DIFFERS if b is not None else Verdict.RECIPE_ONLY
        return make(
            verdict, f"only {_side_name(b is not None)} names an image ({present.describe()})"
        )
    if (b.repo, b.tag, b.digest) == (r.repo, r.tag, r.digest):
        return make(Verdict.SAME, f"both sides use {b.text} ({b.describe()})")
    if b.repo == r.repo:
        return make(
            Verdict.DIFFERS,
            f"pin change from {r.tag or 'latest'} to {b.tag or 'latest'}: the benchmark runs "
            f"{b.describe()}, the recipe pins {r.describe()}",
        )
    return make(
        Verdict.DIFFERS,
        f"different image repositories: the benchmark runs {b.text} ({b.describe()}), the recipe "
        f"{r.text} ({r.describe()})",
    )


def _spec_findings(config: ServeConfig, ctx: _Ctx) -> list[Finding]:
    """SpeculativeConfig checks the normaliser cannot make without the defaults file."""
    setting = config.get("speculative_config")
    if setting is None or not isinstance(setting.value, dict):
        return []
    spec = setting.value
    out: list[Finding] = []
    method = spec.get("rejection_sample_method")
    since_text = ctx.defaults.speculative.rejection_sample_methods.get(str(method))
    if method is not None and since_text is not None:
        since = parse_version(since_text)
        if since is not None and span_status(ctx.version, since, None) == "no":
            out.append(
                Finding(
                    "error",
                    "speculative-config",
                    f"rejection_sample_method '{method}' does not exist before {since_text} "
                    f"(comparing under {ctx.rules_label})",
                    setting.tokens,
                )
            )
    if method == "synthetic":
        given = [
            k for k in ("synthetic_acceptance_rates", "synthetic_acceptance_length") if k in spec
        ]
        if len(given) != 1:
            out.append(
                Finding(
                    "error",
                    "speculative-config",
                    "synthetic rejection needs exactly one of synthetic_acceptance_rates or "
                    "synthetic_acceptance_length",
                    setting.tokens,
                )
            )
        length, k = spec.get("synthetic_acceptance_length"), spec.get("num_speculative_tokens")
        if isinstance(length, int | float) and isinstance(k, int) and not 1 <= length <= k + 1:
            out.append(
                Finding(
                    "error",
                    "speculative-config",
                    f"synthetic_acceptance_length {length} is outside [1, {k + 1}]",
                    setting.tokens,
                )
            )
    return out


def _env_prefix_into_env(side: LaunchSide) -> LaunchSide:
    """``VAR=1 vllm serve ...`` renderings: the leading assignments join the env."""
    prefix, argv = split_env_prefix(side.argv)
    if not prefix:
        return side
    return LaunchSide(argv, {**side.env, **prefix}, side.image, side.config_files)


def diff_launch(
    bench: LaunchSide,
    recipe: LaunchSide,
    *,
    hardware: str | None,
    rules: Rules,
    taxonomy_vram: Mapping[str, float] | None = None,
    version: str | None = None,
    recipe_min_version: str | None = None,
) -> DiffReport:
    """Compare a benchmark launch with a recipe rendering under one vLLM version's rules."""
    bench, recipe = _env_prefix_into_env(bench), _env_prefix_into_env(recipe)
    resolution = resolve_version(
        given=version,
        bench_image=bench.image,
        recipe_image=recipe.image,
        recipe_min_version=recipe_min_version,
    )
    defaults = load_vllm_defaults(rules.directory)
    device = device_context(hardware, rules, taxonomy_vram)
    notes: list[str] = []
    if hardware is not None and device.memory_gib is None:
        notes.append(f"hardware '{hardware}' has no per-GPU memory: compared on every tier")
    scenarios = scenarios_for(
        defaults,
        resolution.version,
        hardware=hardware,
        memory_gib=device.memory_gib,
        device_name=device.device_name,
        platform=device.platform,
    )
    b_conf = normalise(bench.argv, version=resolution.version, config_files=bench.config_files)
    r_conf = normalise(recipe.argv, version=resolution.version, config_files=recipe.config_files)
    ctx = _Ctx(rules, defaults, resolution, scenarios, b_conf, r_conf)

    diffs: list[FlagDiff] = []
    model = _model_diff(ctx)
    if model is not None:
        diffs.append(model)
    keys = list(
        dict.fromkeys([*(s.key for s in b_conf.settings), *(s.key for s in r_conf.settings)])
    )
    for key in keys:
        diffs.append(_flag_diff(key, b_conf.get(key), r_conf.get(key), ctx))
    diffs.extend(_env_diffs(bench, recipe, ctx))
    image = _image_diff(bench, recipe)
    if image is not None:
        diffs.append(image)
    if rules_version(resolution.version) != resolution.version:
        notes.append(f"rules of vLLM {fmt_version(resolution.rules)} used")
    return DiffReport(
        diffs=tuple(diffs),
        version=resolution,
        device=device,
        tier=scenarios[0].label if len(scenarios) == 1 else None,
        usage_context=b_conf.usage_context,
        bench_findings=b_conf.findings + tuple(_spec_findings(b_conf, ctx)),
        recipe_findings=r_conf.findings + tuple(_spec_findings(r_conf, ctx)),
        notes=tuple(notes),
    )
