"""Demands of flag differences (docs/alignment.md §5: the flag rows)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bot.align.compare import Comparison
from bot.align.demands.ledger import Ledger
from bot.align.demands.model import (
    AppendDemand,
    FeatureDemand,
    RemoveDemand,
    SetDemand,
    dotted_value,
    flag_note,
)
from bot.align.demands.placement import Placement
from bot.align.demands.rule import Rule
from bot.align.model import Target
from bot.align.nodes import (
    MISSING,
    bench_spans,
    bench_value_text,
    has_placeholder,
    in_recipe,
    json_holder,
    lookup,
    text_value,
)
from bot.argv import option_name
from bot.recipes import ArgOrigin
from bot.recipes.edit import NodePath, format_path, parse_path
from bot.recipes.jsvalues import as_dict
from bot.recipes.render import RenderingKey
from bot.shell.result import SourceSpan
from bot.vllm import FlagDiff, Verdict, canonical_flag


class FlagDemands(Rule):
    """A flag difference → a demand: change the value where the recipe defines it, override it
    for the benchmarked hardware, add it at the placement layer, put it behind a workload
    feature, or remove it (policy)."""

    def __init__(self, place: Placement, ledger: Ledger) -> None:
        super().__init__(place, ledger)
        # node → (the whole JSON being built, index of its demand) for fields of a config the
        # recipe spells whole: every carried field of one config lands in one value
        self._json_values: dict[str, tuple[dict[str, Any], int]] = {}

    def collect(self, target: Target, comparison: Comparison, diff: FlagDiff, label: str) -> None:
        unit = self._unit(comparison, diff)
        node = unit.path if unit is not None else None
        if self.ledger.listed(diff, label, node):
            return
        spans = bench_spans(comparison.launch, diff)
        if diff.key == "model":
            if diff.verdict is not Verdict.SAME:
                self.out.skipped.append(f"{label}: {diff.reason} (the served model is not edited)")
            return
        if diff.verdict is Verdict.SAME:
            self._keep_flag(unit, diff, label)
            return
        if diff.verdict is Verdict.RECIPE_ONLY:
            self.out.recipe_only.append(flag_note(diff, label, node))
            if self.rules.policy.recipe_only_flags == "remove":
                self._remove(unit, diff, label)
            return
        # DIFFERS
        carry = self.ledger.carry(target, comparison, diff, label)
        if carry is None:
            return
        if carry == "feature":
            self._feature_flag(target, comparison, diff, label, spans)
            return
        holder = json_holder(comparison.command.args, diff)
        if holder is not None:
            if not diff.recipe_tokens:
                self.out.defaults.append(flag_note(diff, label))
            self._change_json_field(target, holder, diff, label, spans)
            return
        if diff.bench_tokens and not diff.recipe_tokens:
            # the recipe omits it and vLLM's default is not the benchmark's value
            self.out.defaults.append(flag_note(diff, label))
            self._new_flag(target, diff, label, spans)
            return
        self._change_flag(target, unit, diff, label, spans, comparison.command.args)

    def _unit(self, comparison: Comparison, diff: FlagDiff) -> ArgOrigin | None:
        if not diff.recipe_tokens:
            return None
        first = diff.recipe_tokens[0]
        return next((u for u in comparison.command.args if u.flag == first), None)

    def _value_path(self, unit: ArgOrigin | None) -> NodePath | None:
        """The YAML path of a recipe unit's value token (``P[i+1]`` after the flag ``P[i]``)."""
        if unit is None or not in_recipe(unit.path) or unit.value is None:
            return None
        path = parse_path(unit.path)
        if not path or not isinstance(path[-1], int):
            return None
        value_path = (*path[:-1], path[-1] + 1)
        return value_path if lookup(self.recipe.data, value_path) == unit.value else None

    def _keep_flag(self, unit: ArgOrigin | None, diff: FlagDiff, label: str) -> None:
        path = self._value_path(unit)
        if path is None and unit is not None and in_recipe(unit.path):
            path = parse_path(unit.path)
        if path is None:
            return
        self.ledger.keep(path, "flag", diff, label)

    def _change_dotted(
        self,
        units: tuple[ArgOrigin, ...],
        diff: FlagDiff,
        label: str,
        spans: tuple[SourceSpan, ...],
    ) -> bool:
        """A JSON-valued flag the recipe spells as dotted units (``--speculative-config.method
        mtp``): change the value of each unit whose key differs. False when a differing key
        has no unit of its own (a new or removed key: no single node to change)."""
        bench, recipe = diff.bench_value, diff.recipe_value
        if not isinstance(bench, Mapping) or not isinstance(recipe, Mapping):
            return False
        changes: list[tuple[NodePath, str, str | None]] = []
        for key in dict.fromkeys([*recipe, *bench]):
            if bench.get(key) == recipe.get(key):
                continue
            if key not in bench or key in diff.benchmark_only_keys:
                return False
            spellings = {f"{diff.flag}.{key}", f"{diff.flag}.{key.replace('_', '-')}"}
            unit = next((u for u in units if u.flag in spellings), None)
            path = self._value_path(unit)
            if path is None:
                return False
            changes.append((path, dotted_value(bench[key]), unit.value if unit else None))
        for path, value, before in changes:
            self.out.demands.append(
                SetDemand(
                    node=format_path(path),
                    value=value,
                    kind="flag",
                    subject=diff.flag,
                    before=before,
                    path=path,
                    reason=diff.reason,
                    placement="where the recipe defines that key (the dotted unit's provenance)",
                    target=label,
                    sources=spans,
                )
            )
        return bool(changes)

    def _change_flag(
        self,
        target: Target,
        unit: ArgOrigin | None,
        diff: FlagDiff,
        label: str,
        spans: tuple[SourceSpan, ...],
        units: tuple[ArgOrigin, ...] = (),
    ) -> None:
        wanted = bench_value_text(diff)
        if self.ledger.run_time_value(diff, label):
            return
        if unit is None or not in_recipe(unit.path):
            # defined outside the recipe (a strategy file): override at the placement layer
            self._new_flag(target, diff, label, spans, overriding=unit.path if unit else None)
            return
        value_path = self._value_path(unit)
        if value_path is not None and wanted is not None:
            path, value = value_path, wanted
        elif len(diff.recipe_tokens) == 1 and len(diff.bench_tokens) == 1:
            # one token on both sides: ``--x=v`` or a boolean spelling; keep the recipe's form
            flag_part = option_name(diff.recipe_tokens[0])
            path = parse_path(unit.path)
            value = (
                f"{flag_part}={wanted}" if "=" in diff.recipe_tokens[0] else diff.bench_tokens[0]
            )
        elif self._change_dotted(units, diff, label, spans):
            return
        else:
            self.out.skipped.append(
                f"{label}: {diff.flag} is spelled {' '.join(diff.recipe_tokens)!r} in the "
                f"recipe and {' '.join(diff.bench_tokens)!r} in the benchmark; no single value "
                "node to change"
            )
            return
        unit_path = parse_path(unit.path)
        users = self.place.others(unit_path, unit.path, target.profile)
        if users:
            items = self._override_items(diff, unit, units, label)
            if items is not None:
                self._override_flag(target, unit_path, diff, label, spans, users, items)
            return
        before = text_value(lookup(self.recipe.data, path))
        self.out.demands.append(
            SetDemand(
                node=format_path(path),
                value=value,
                kind="flag",
                subject=diff.flag,
                before=before,
                path=path,
                reason=diff.reason,
                placement="where the recipe defines the flag (the rendered unit's provenance); "
                "every rendering drawing from it was benchmarked",
                target=label,
                sources=spans,
            )
        )

    def _change_json_field(
        self,
        target: Target,
        holder: ArgOrigin,
        diff: FlagDiff,
        label: str,
        spans: tuple[SourceSpan, ...],
    ) -> None:
        """One field of a config the recipe spells as a whole JSON (``--x '{…}'``): the field
        goes INTO that JSON. A dotted ``--x.key v`` beside it would make vLLM discard the
        whole JSON (JSON and dotted forms are not merged: docs/vllm-cli-semantics.md §8), so
        the recipe's other keys would silently stop applying."""
        if self.ledger.run_time_value(diff, label):
            return
        flag = holder.flag or diff.flag  # as the recipe spells it: the renderer dedupes by text
        subject = diff.flag.split(".", 1)[0]  # the config's canonical flag
        unit_path = parse_path(holder.path)
        value_path = self._value_path(holder)
        users = self.place.others(unit_path, holder.path, target.profile)
        override = bool(users) or value_path is None  # else the value is changed in place
        if override and unit_path and unit_path[0] == "features":
            # a feature's args come after every override layer: a whole-JSON override there
            # would not win, and a dotted one would make vLLM discard the feature's JSON
            self.out.skipped.append(
                f"{label}: {diff.flag} is a field of the {flag} JSON that {holder.path} sets "
                "for renderings no benchmarked point ran; no override of a feature's JSON is "
                "written"
            )
            return
        if not override and value_path is not None:
            node, path = format_path(value_path), value_path
            placement = (
                "the JSON where the recipe defines the config; every rendering drawing from "
                "it was benchmarked"
            )
        else:
            path = self.place.override_container(unit_path, target.profile, "extra_args")
            node = f"{format_path(path)}::{flag}"
            placement = (
                f"the whole JSON overrides {format_path(unit_path)} for "
                f"{target.profile.hardware} only: it is {self.place.scope_note(users)}"
            )
        found = self._json_values.get(node)
        merged = dict(found[0]) if found is not None else json.loads(holder.value or "{}")
        _set_field(merged, diff.flag.split(".", 1)[1].split("."), diff.bench_value)
        text = json.dumps(merged, separators=(",", ":"))
        demand: AppendDemand | SetDemand
        if override:
            demand = AppendDemand(
                node=node, items=(flag, text), kind="flag-new", subject=subject,
                path=path, reason=diff.reason, placement=placement, target=label,
                sources=spans, shadows=unit_path,
            )  # fmt: skip
        else:
            demand = SetDemand(
                node=node, value=text, kind="flag", subject=subject,
                before=holder.value, path=path, reason=diff.reason, placement=placement,
                target=label, sources=spans,
            )  # fmt: skip
        if found is not None:  # a second field of the same config: one value holds both
            earlier = self.out.demands[found[1]]
            reason = f"{earlier.reason}; {diff.reason}"
            self.out.demands[found[1]] = replace(demand, reason=reason)
            self._json_values[node] = (merged, found[1])
            return
        self._json_values[node] = (merged, len(self.out.demands))
        self.out.demands.append(demand)

    def _bench_items(self, diff: FlagDiff, label: str) -> tuple[str, ...] | None:
        if self.ledger.run_time_value(diff, label):
            return None
        wanted = bench_value_text(diff)
        if wanted is not None:
            return (diff.flag, wanted)
        if len(diff.bench_tokens) == 1:
            return (diff.bench_tokens[0],)
        self.out.skipped.append(f"{label}: cannot spell {diff.flag} as recipe tokens")
        return None

    def _override_items(
        self, diff: FlagDiff, unit: ArgOrigin, units: tuple[ArgOrigin, ...], label: str
    ) -> tuple[str, ...] | None:
        """The tokens that override ``unit``, spelled as the recipe spells it: the renderer
        drops an earlier unit only for a later one with the same flag text (layers.py dedupe),
        so a dotted unit (``--x.key v``) is overridden key by key, never by ``--x v``."""
        flag = unit.flag or diff.flag
        if not flag.startswith(diff.flag + "."):
            found = self._bench_items(diff, label)
            if found is None or len(found) != 2 or "=" in flag:
                return found
            return (flag, found[1]) if canonical_flag(flag) == diff.flag else found
        bench, recipe = diff.bench_value, diff.recipe_value
        items: list[str] = []
        if isinstance(bench, Mapping) and isinstance(recipe, Mapping):
            for key in dict.fromkeys([*recipe, *bench]):
                if bench.get(key) == recipe.get(key) or key in diff.benchmark_only_keys:
                    continue
                if key not in bench:
                    items = []  # a key the benchmark drops: no dotted unit removes it
                    break
                spellings = {f"{diff.flag}.{key}", f"{diff.flag}.{key.replace('_', '-')}"}
                dotted = next((u.flag for u in units if u.flag in spellings), None)
                items += [dotted or f"{diff.flag}.{key}", dotted_value(bench[key])]
        if not items or has_placeholder(*items):
            self.out.skipped.append(
                f"{label}: {diff.flag} is spelled {' '.join(diff.recipe_tokens)!r} in the "
                f"recipe and {' '.join(diff.bench_tokens)!r} in the benchmark; no dotted "
                "override spells the change"
            )
            return None
        return tuple(items)

    def _override_flag(
        self,
        target: Target,
        unit_path: NodePath,
        diff: FlagDiff,
        label: str,
        spans: tuple[SourceSpan, ...],
        users: Sequence[RenderingKey],
        items: tuple[str, ...],
    ) -> None:
        """The value lives in a node other renderings share: override it for the benchmarked
        hardware only (the broad node stays as it is)."""
        if unit_path and unit_path[0] == "features":
            self._override_feature_args(target, unit_path, diff, label, spans, users, items)
            return
        path = self.place.override_container(unit_path, target.profile, "extra_args")
        self.out.demands.append(
            AppendDemand(
                node=f"{format_path(path)}::{diff.flag}",
                items=items,
                kind="flag-new",
                subject=diff.flag,
                path=path,
                reason=diff.reason,
                placement=f"overrides {format_path(unit_path)} for {target.profile.hardware} "
                f"only: it is {self.place.scope_note(users)}",
                target=label,
                sources=spans,
                shadows=unit_path,
            )
        )

    def _override_feature_args(
        self,
        target: Target,
        unit_path: NodePath,
        diff: FlagDiff,
        label: str,
        spans: tuple[SourceSpan, ...],
        users: Sequence[RenderingKey],
        items: tuple[str, ...],
    ) -> None:
        """A feature's (or mode's) args for every hardware: a hardware override replaces the
        list on the benchmarked GPU (``modes.<m>.hardware_overrides.<hw>.args``)."""
        parts = list(unit_path)
        try:
            cut = parts.index("args")
        except ValueError:
            self.out.skipped.append(f"{label}: {diff.flag} at {format_path(unit_path)}: no args")
            return
        args_path = tuple(parts[: cut + 1])
        current = lookup(self.recipe.data, args_path)
        if not isinstance(current, list):
            return
        owner = args_path[:-1]
        if "hardware_overrides" in [str(p) for p in owner]:
            owner = owner[: [str(p) for p in owner].index("hardware_overrides")]
        index = (
            int(parts[cut + 1]) if len(parts) > cut + 1 and isinstance(parts[cut + 1], int) else -1
        )
        tokens = [str(t) for t in current]
        if 0 <= index < len(tokens):
            has_value = index + 1 < len(tokens) and not tokens[index + 1].startswith("--")
            tokens[index : index + (2 if has_value else 1)] = list(items)
        else:
            tokens += list(items)
        modal = "modes" in [str(p) for p in owner]
        # modes take hardware overrides by GPU id; a feature without modes by generation
        key = target.profile.hardware
        if not modal:
            key = self.recipes.hardware[target.profile.hardware].generation
        path = (*owner, "hardware_overrides", key, "args")
        if lookup(self.recipe.data, path) is not MISSING:
            self.out.skipped.append(
                f"{label}: {diff.flag}: {format_path(path)} exists and is shared; not edited"
            )
            return
        self.out.demands.append(
            SetDemand(
                node=format_path(path),
                value=json.dumps(tokens),
                kind="flag",
                subject=diff.flag,
                before=None,
                path=path,
                create=True,
                reason=diff.reason,
                placement=f"overrides {format_path(args_path)} on {target.profile.hardware} "
                "only (a hardware override replaces the list): it is "
                + self.place.scope_note(users),
                target=label,
                sources=spans,
                shadows=unit_path,
            )
        )

    def _new_flag(
        self,
        target: Target,
        diff: FlagDiff,
        label: str,
        spans: tuple[SourceSpan, ...],
        overriding: str | None = None,
    ) -> None:
        items = self._bench_items(diff, label)
        if items is None:
            return
        placement, why = self.place.flag_placement(diff.flag)
        path, placement, why, wider = self.place.narrowed(
            self.place.container(placement, target.profile, "extra_args", diff.flag),
            placement,
            why,
            target,
            diff.flag,
        )
        if overriding:
            why += f"; overrides {overriding}, defined outside the recipe"
        self.out.demands.append(
            AppendDemand(
                node=f"{format_path(path)}::{diff.flag}",
                items=items,
                kind="flag-new",
                subject=diff.flag,
                path=path,
                reason=diff.reason,
                placement=f"{placement} layer, {why}",
                target=label,
                sources=spans,
                wider=wider,
            )
        )

    def _feature_flag(
        self,
        target: Target,
        comparison: Comparison,
        diff: FlagDiff,
        label: str,
        spans: tuple[SourceSpan, ...],
    ) -> None:
        """A workload setting goes behind the scenario's opt-in feature, for the benchmarked
        GPU (``features.<f>.hardware_overrides.<hw>.args``); the feature is proposed when the
        recipe does not have it."""
        workload = self.rules.policy.workload_feature(comparison.launch.point.scenario)
        assert workload is not None
        items = self._bench_items(diff, label)
        if items is None:
            return
        # a feature without modes takes hardware overrides by generation (layers.py gen_block)
        name = workload.feature
        hw = self.recipes.hardware[target.profile.hardware].generation
        features = as_dict(self.recipe.data.get("features"))
        exists = name in features
        base: tuple[str, ...] = ()
        if exists:
            spec = as_dict(features.get(name))
            override = as_dict(as_dict(spec.get("hardware_overrides")).get(hw)).get("args")
            chosen = override if isinstance(override, list) else spec.get("args")
            base = tuple(str(t) for t in chosen) if isinstance(chosen, list) else ()
        path: NodePath = ("features", name, "hardware_overrides", hw, "args")
        self.out.features[label] = name
        self.out.demands.append(
            FeatureDemand(
                node=f"{format_path(path)}::{diff.flag}",
                feature=name,
                hardware=hw,
                items=items,
                base=base,
                new=not exists,
                description=workload.description,
                kind="flag-new",
                subject=diff.flag,
                path=path,
                reason=diff.reason,
                placement=f"workload setting of the {comparison.launch.point.scenario} scenario: "
                f"behind the opt-in {name} feature on {hw} (rules/policy.yaml workload_features)",
                target=label,
                sources=spans,
            )
        )

    def _remove(self, unit: ArgOrigin | None, diff: FlagDiff, label: str) -> None:
        if unit is None or not in_recipe(unit.path):
            self.out.skipped.append(
                f"{label}: recipe-only {diff.flag} is defined outside the recipe; not removed"
            )
            return
        path = parse_path(unit.path)
        if not path or not isinstance(path[-1], int):
            return
        count = 2 if self._value_path(unit) is not None else 1
        self.out.demands.append(
            RemoveDemand(
                node=format_path(path),
                kind="flag-remove",
                subject=diff.flag,
                before=" ".join(diff.recipe_tokens),
                path=path[:-1],
                reason=diff.reason + " (rules/policy.yaml recipe_only_flags: remove)",
                placement="where the recipe defines the flag (the rendered unit's provenance)",
                target=label,
                index=path[-1],
                count=count,
            )
        )


def _set_field(data: dict[str, Any], keys: Sequence[str], value: Any) -> None:
    """``data[k1][k2]… = value``, creating the mappings on the way."""
    for key in keys[:-1]:
        inner = data.get(key)
        data[key] = inner = dict(inner) if isinstance(inner, dict) else {}
        data = inner
    data[keys[-1]] = value
