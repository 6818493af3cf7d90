"""One canonical key of both sides compared (docs/spec/vllm-cli-semantics.md §5): a value set
on one side only is resolved against vLLM's defaults for the other, JSON-valued flags key by
key; each comparison gets a verdict and a reason that names the default and its source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.rules import Rules
from bot.rules.models import FlagRule, JsonKeyRule
from bot.vllm.catalogue import FlagSpec
from bot.vllm.defaults import DeviceScenario, Resolved, VllmDefaults, resolve, speculative_default
from bot.vllm.diff_report import FlagDiff, Verdict
from bot.vllm.serve_config import ServeConfig, Setting
from bot.vllm.values import compact
from bot.vllm.versions import VersionResolution, short_version

# --- the comparison ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffContext:
    rules: Rules
    defaults: VllmDefaults
    resolution: VersionResolution
    scenarios: tuple[DeviceScenario, ...]
    bench: ServeConfig
    recipe: ServeConfig
    # canonical keys a side spelled with a deprecated field vLLM reads as them → why
    renamed: Mapping[str, str] = field(default_factory=dict)

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


def side_name(bench_side: bool) -> str:
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


def with_notes(reason: str, *notes: str) -> str:
    extra = "; ".join(n for n in notes if n)
    return f"{reason} ({extra})" if extra else reason


def _default_text(res: Resolved, ctx: DiffContext) -> str:
    where = f" {res.context}" if res.context else ""
    return f"{compact(res.value)}{where} [{res.source}; {ctx.rules_label}]"


def _one_sided(
    key: str, present: Setting, bench_side: bool, ctx: DiffContext
) -> tuple[Verdict, str, str]:
    """One side sets ``key``, the other omits it: does omitting resolve to the same value?"""
    spec = present.spec
    category: str = spec.category if spec is not None else "engine"
    omitting = ctx.recipe if bench_side else ctx.bench
    side_values = omitting.values()
    who, other = side_name(bench_side), side_name(not bench_side)
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
            with_notes(f"{sets}; {other} omits it, and {res.note}", res.unverified),
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
                with_notes(f"{sets}, which is the default {cite}", res.unverified),
                category,
            )
        if any(compact(value) == compact(d) for d in res.differs):
            return differs, with_notes(f"{sets}; {omitted}", res.unverified), "maybe"
        if res.typical is not None:
            verdict = Verdict.EQUIVALENT if _equal(value, res.typical) else differs
            cat = "maybe" if verdict is Verdict.EQUIVALENT else category
            return verdict, with_notes(f"{sets}; {omitted}", res.unverified), cat
        return Verdict.UNKNOWN, with_notes(f"{sets}; {omitted}", res.unverified), "maybe"

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
            with_notes(
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
            with_notes(
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
            with_notes(
                f"{sets}; {other} omits it, which resolves to the default {default}", why, *notes
            ),
            cat,
        )
    return (
        differs,
        with_notes(
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
    mapping: dict[str, Any], ctx: DiffContext
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
    key: str, b: Setting | None, r: Setting | None, ctx: DiffContext
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


def flag_diff(key: str, b: Setting | None, r: Setting | None, ctx: DiffContext) -> FlagDiff:
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
        if _equal(b_value, r_value) and key in ctx.renamed:
            return make(
                Verdict.SAME,
                f"both sides resolve {flag} to {compact(b_value)} as vLLM reads them: "
                f"{ctx.renamed[key]}",
                category,
            )
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
        sets = f"the benchmark sets {flag} {compact(b_value)}, the recipe {compact(r_value)}"
        return make(Verdict.DIFFERS, with_notes(sets + note, ctx.renamed.get(key, "")), cat)
    verdict, reason, cat = _one_sided(key, present, b is not None, ctx)
    return make(verdict, with_notes(reason, ctx.renamed.get(key, "")), cat)
