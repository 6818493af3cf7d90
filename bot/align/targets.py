"""The recipe profiles a benchmark PR ran, each with the points that stand for it.

A key's points are classified one by one (:func:`bot.align.run.key_result`); here they are
grouped into :class:`~bot.align.model.Target` values: the eval arm represents its profile,
points at another parallelism or with synthetic acceptance stand in when nothing else does,
and a setting the lane launched with several values at the profile's parallelism is marked
as the point's, not the model's (:func:`per_point_settings`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from bot.align.delta import KeyDelta
from bot.align.evidence import evidence_for
from bot.align.model import Target
from bot.align.nodes import text_value
from bot.align.result import KeyResult, PointResult
from bot.benchmarks import BenchRepo
from bot.evidence.model import EvidenceReport
from bot.rules import Rules
from bot.vllm import FlagDiff


def representatives(results: tuple[PointResult, ...]) -> tuple[PointResult, ...]:
    """The eval arms represent their profile; throughput arms only when no eval arm does."""
    eval_profiles = {
        r.profile.key
        for r in results
        if r.status == "represents" and r.arm == "eval" and r.profile is not None
    }
    out: list[PointResult] = []
    for result in results:
        if (
            result.status == "represents"
            and result.arm != "eval"
            and result.profile is not None
            and result.profile.key in eval_profiles
        ):
            result = replace(
                result, status="context", reason="the eval arm represents this profile"
            )
        out.append(result)
    return tuple(out)


def targets_by_recipe(
    keys: Sequence[KeyResult],
    head: BenchRepo,
    evidence: EvidenceReport | None,
    rules: Rules,
    deltas: Mapping[str, KeyDelta] | None = None,
) -> dict[str, list[Target]]:
    grouped: dict[tuple[str, tuple[Any, ...]], list[PointResult]] = {}
    for found in keys:
        for result in found.points:
            if result.status == "represents" and result.profile is not None:
                grouped.setdefault((found.key.key, result.profile.key), []).append(result)
    _other_parallelism(keys, grouped)
    _synthetic_only(keys, grouped)
    by_recipe: dict[str, list[Target]] = {}
    for (key, _), results in grouped.items():
        profile = results[0].profile
        assert profile is not None
        comparisons = tuple(r.comparison for r in results if r.comparison is not None)
        cited, note, narrowed = evidence_for(evidence, head, key, profile, rules)
        tp = _single_tp(results)
        if tp is not None and cited is None:
            # another parallelism without a passing eval: its TP stays the recipe's (the
            # reproduction section has it), its other settings are the lane's as the recipes
            # history carries them (MiniMax-M3 #581 took the TP4 lane's AITER settings
            # into the TP8 recipe)
            tp = None
        delta = (deltas or {}).get(key)
        varies = per_point_settings(keys, key, results)
        target = Target(
            key, profile, comparisons, cited, note, narrowed, tp, delta, per_point=varies
        )
        by_recipe.setdefault(profile.recipe_path, []).append(target)
    return by_recipe


def _single_tp(results: Sequence[PointResult]) -> int | None:
    """The one TP every point of a profile runs when it is not the recipe's (else None)."""
    if not results or any(r.status != "other-point" for r in results):
        return None
    tps = {r.launch.point.tp for r in results if r.launch is not None}
    return tps.pop() if len(tps) == 1 else None


def _synthetic_only(
    keys: Sequence[KeyResult], grouped: dict[tuple[str, tuple[Any, ...]], list[PointResult]]
) -> None:
    """A profile only synthetic-acceptance arms ran stands on them for everything but the
    acceptance: the diff strips the synthetic keys of --speculative-config
    (rules/flags.yaml benchmark_only_json_keys), the rest of the launch is what ran (Kimi-K2.6
    #634 took the B300 attention settings of InferenceX #2158's synthetic arms)."""
    for found in keys:
        for result in found.points:
            profile, comparison = result.profile, result.comparison
            if result.status != "context" or profile is None or comparison is None:
                continue
            if profile.represents_recipe or comparison.parallelism_differs:
                continue  # context because another arm represents the profile
            if (found.key.key, profile.key) in grouped and not all(
                r.status == "context" for r in grouped[(found.key.key, profile.key)]
            ):
                continue
            grouped.setdefault((found.key.key, profile.key), []).append(result)


def _other_parallelism(
    keys: Sequence[KeyResult], grouped: dict[tuple[str, tuple[Any, ...]], list[PointResult]]
) -> None:
    """Points at another parallelism than the recipe renders stand for their profile when
    no point represents it, only TP differs on single_node_tp, an eval arm is among them, and
    the key ran the profile at that one TP (its context arms too: a sweep over several TPs
    has none that is the model's) (docs/alignment.md: parallelism)."""
    for found in keys:
        others: dict[tuple[Any, ...], list[PointResult]] = {}
        swept: dict[tuple[Any, ...], set[int]] = {}  # every TP the key ran at the profile
        for result in found.points:
            if result.profile is not None and result.launch is not None:
                swept.setdefault(result.profile.key, set()).add(result.launch.point.tp)
            if result.status != "other-point" or result.profile is None:
                continue
            if result.comparison is None or result.profile.strategy != "single_node_tp":
                continue
            keys_differ = {d.key for d in result.comparison.parallelism_differs}
            if keys_differ != {"parallel.tensor_parallel_size"}:
                continue
            others.setdefault(result.profile.key, []).append(result)
        for profile_key, results in others.items():
            if (found.key.key, profile_key) in grouped:
                continue
            if not any(r.arm == "eval" for r in results):
                continue
            # the sweep runs several TPs (context arms too): none is the recipe's. Support:
            # the rule's own premise, not history: it fires on no PR of July 01-15 or 16-31;
            # since August on 3 MiniMax-M3 AgentX lanes (docs/alignment.md: parallelism)
            if len(swept[profile_key]) != 1:
                continue
            grouped[(found.key.key, profile_key)] = [r for r in results if r.arm == "eval"]


# ------------------------------------------------------------------------------ per point

# one point's launched values, in words, of the settings that differ from the recipe there
Launched = Mapping[tuple[str, str], str]


def per_point_settings(
    keys: Sequence[KeyResult], key: str, results: Sequence[PointResult]
) -> Mapping[tuple[str, str], str]:
    """(kind, key) → which value ran where, for each setting the lane launched with more
    than one value at the parallelism its profile stands on (the key's points of that
    profile, any arm). A recipe holds one value per profile: the script chose this one per
    point (by concurrency, sequence length or arm), so no single value is what the benchmark
    ran, and the planner offers it instead of proposing it (bot/align/demands/ledger.py).
    A guard on what the bot may claim, not chosen on history: on 07-01…07-15 it touches no
    proposal and no linked leaf; on 07-16…07-31 it keeps 1 proposal out, which maintainers
    did not adopt (they wrote it as guide notes); docs/measurements.md."""
    profile = results[0].profile
    if profile is None:
        return {}
    shapes = {(r.point.tp, r.point.ep, r.point.dp_attn) for r in results}
    seen: list[tuple[PointResult, Launched]] = []
    first: dict[tuple[str, str], FlagDiff] = {}  # a diff of each setting: the recipe's side
    for found in keys:
        if found.key.key != key:
            continue
        for result in found.points:
            comparison = result.comparison
            if result.profile is None or result.profile.key != profile.key or comparison is None:
                continue
            if (result.point.tp, result.point.ep, result.point.dp_attn) not in shapes:
                continue
            launched: dict[tuple[str, str], str] = {}
            for d in comparison.differences:
                launched[(d.kind, d.key)] = launched_value(d)
                first.setdefault((d.kind, d.key), d)
            seen.append((result, launched))
    return {
        name: where_values_ran(name, seen, _as_recipe(first[name]))
        for name in sorted(first)
        if len({launched.get(name) for _, launched in seen}) > 1
    }


def launched_value(diff: FlagDiff) -> str:
    """The value as launched, in words (:func:`_words`)."""
    return _words(diff.key, diff.bench_value, diff.benchmark_only_keys)


def _as_recipe(diff: FlagDiff) -> str:
    """What a point that launched the setting as the recipe renders it ran, in words."""
    value = _words(diff.key, diff.recipe_value, ())
    return "it unset (as the recipe)" if value == "unset" else f"{value} (as the recipe)"


def _words(key: str, value: Any, benchmark_only: tuple[str, ...]) -> str:
    """A field of a JSON flag as that field (its diff holds the whole JSON); a JSON flag
    without the keys only a benchmark sets (synthetic acceptance: throughput arms with them
    and the eval arm without run one configuration)."""
    value = _field(key, value)
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k not in benchmark_only}
    text = text_value(value)
    if text is None:
        return "unset"
    return text or '""'  # an empty export is a value, shown as one


def _field(key: str, value: Any) -> Any:
    """``compilation.cudagraph_mode`` of ``{"cudagraph_mode": …}``: the key's path below its
    config group, when the value is the flag's JSON (parsed or as text); else the value."""
    if isinstance(value, str) and value.startswith("{") and "." in key:
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    found = value
    for part in key.split(".")[1:]:
        if not isinstance(found, dict) or part not in found:
            return value
        found = found[part]
    return found


def where_values_ran(
    name: tuple[str, str], seen: Sequence[tuple[PointResult, Launched]], recipe: str
) -> str:
    """'0 at conc 1, 2, 4; 1 at conc 64, 128': each value with the concurrencies that ran it,
    labelled with the arm, then the sequence lengths too, when concurrency alone does not
    tell the values apart ('0 at conc 1, 128 (throughput); 1 at conc 128 (eval)'), values in
    the order of their lowest concurrency."""
    by_value: dict[str, list[PointResult]] = {}
    for result, launched in seen:
        by_value.setdefault(launched.get(name, recipe), []).append(result)
    label = next((each for each in _LABELS if _separates(by_value, each)), _LABELS[-1])
    parts = []
    for value, results in sorted(
        by_value.items(), key=lambda item: min(r.point.conc for r in item[1])
    ):
        by_label: dict[str, set[int]] = {}
        for result in results:
            by_label.setdefault(label(result), set()).add(result.point.conc)
        where = ", ".join(
            f"conc {', '.join(str(c) for c in sorted(concs))}" + (f" ({tag})" if tag else "")
            for tag, concs in sorted(by_label.items(), key=lambda item: min(item[1]))
        )
        parts.append(f"{value} at {where}")
    return "; ".join(parts)


def _arm_and_lengths(result: PointResult) -> str:
    point = result.point
    if point.isl is None or point.osl is None:
        return result.arm
    return f"{result.arm}, ISL {point.isl} / OSL {point.osl}"


# how a run is labelled beside its concurrency, coarsest first: the first that tells the
# values apart is used
_Label = Callable[[PointResult], str]
_LABELS: tuple[_Label, ...] = (lambda result: "", lambda result: result.arm, _arm_and_lengths)


def _separates(by_value: Mapping[str, Sequence[PointResult]], label: _Label) -> bool:
    """No (label, concurrency) ran two of the values."""
    runs = [{(label(r), r.point.conc) for r in results} for results in by_value.values()]
    return sum(len(each) for each in runs) == len(set().union(*runs))
