"""Differences → demands on recipe nodes (docs/alignment.md §5).

Every FlagDiff of a representative comparison becomes a *demand* on one YAML node: change
it (the value where the rendered unit came from), add to it (a new flag or env var at the
placement the rules give), remove from it (policy), or keep it as it is (a point that already
matches pins a shared node). Differences that are never edited are collected as notes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.align.compare import DRIFT, PARALLELISM_KEYS, Comparison
from bot.align.nodes import (
    bench_spans,
    bench_value_text,
    has_placeholder,
    in_recipe,
    lookup,
    text_value,
)
from bot.align.profile import Profile
from bot.align.values import EditKind, FlagNote, Target
from bot.recipes import ArgOrigin, RecipesRepo
from bot.recipes.edit import NodePath, format_path, parse_path
from bot.recipes.jsvalues import as_dict
from bot.recipes.layers import gen_block
from bot.recipes.repo import HardwareProfile, Recipe
from bot.rules import Rules
from bot.shell.result import SourceSpan
from bot.vllm import FlagDiff, Verdict


def dotted_value(value: Any) -> str:
    """One key of a JSON-valued flag as a dotted unit's value token."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True)
class Demand:
    node: str  # conflict key: the node (or container::name) this demand writes
    value: str | None  # the value it wants there
    keep: bool  # a point that already matches: no edit, but it pins the node
    kind: EditKind
    subject: str
    before: str | None
    op: Literal["set", "append", "env", "remove", "keep"]
    path: NodePath  # SetScalar path / list or map container / list for removals
    reason: str
    placement: str
    target: str
    items: tuple[str, ...] = ()  # append: the flag tokens
    index: int = 0  # remove: first item and count
    count: int = 0
    env_order: tuple[str, ...] = ()  # env: the benchmark's export order
    sources: tuple[SourceSpan, ...] = ()
    targets: tuple[str, ...] = ()  # after merging: every profile demanding the same


@dataclass
class Collected:
    demands: list[Demand] = field(default_factory=list)
    defaults: list[FlagNote] = field(default_factory=list)
    recipe_only: list[FlagNote] = field(default_factory=list)
    benchmark_only: list[FlagNote] = field(default_factory=list)
    front_end: list[FlagNote] = field(default_factory=list)
    unknown: list[FlagNote] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def flag_note(diff: FlagDiff, label: str, node: str | None = None) -> FlagNote:
    return FlagNote(
        kind=diff.kind,
        subject=diff.flag,
        bench=" ".join(diff.bench_tokens) or None,
        recipe=" ".join(diff.recipe_tokens) or None,
        verdict=diff.verdict.value,
        reason=diff.reason,
        target=label,
        node=node,
    )


class Collector:
    def __init__(self, recipes: RecipesRepo, recipe: Recipe, rules: Rules) -> None:
        self.recipes = recipes
        self.recipe = recipe
        self.rules = rules
        self.out = Collected()

    # -- placement ---------------------------------------------------------------------

    def _gen_key(self, profile: Profile, hw: HardwareProfile) -> NodePath:
        """The generation layer that applies to ``profile``: the strategy's own block
        replaces the recipe's (layers.py A7/E9), so a new node goes where it takes effect."""
        so = as_dict(as_dict(self.recipe.data.get("strategy_overrides")).get(profile.strategy))
        chosen = gen_block(so.get("hardware_overrides"), hw)
        if chosen is not None:
            return ("strategy_overrides", profile.strategy, "hardware_overrides", chosen[0])
        block = gen_block(self.recipe.data.get("hardware_overrides"), hw)
        return ("hardware_overrides", block[0] if block is not None else hw.generation)

    def container(self, placement: str, profile: Profile, kind: str) -> NodePath:
        hw = self.recipes.hardware[profile.hardware]
        if placement == "generation":
            return (*self._gen_key(profile, hw), kind)
        if placement == "hardware":
            return ("variants", profile.variant, "hardware_overrides", hw.id, kind)
        if placement == "strategy":
            return ("strategy_overrides", profile.strategy, kind)
        return ("strategy_overrides", profile.strategy, "hardware_overrides", hw.id, kind)

    def flag_placement(self, flag: str) -> tuple[str, str]:
        for rule in self.rules.flags.tuning:
            if rule.flag == flag:
                return rule.placement, f"rules/flags.yaml tuning ({rule.reason})"
        placement = self.rules.flags.new_flag_placement
        return placement, "rules/flags.yaml new_flag_placement"

    # -- one comparison ----------------------------------------------------------------

    def collect(self, target: Target, comparison: Comparison) -> None:
        label = target.profile.label
        for note in comparison.notes:
            self.out.notes.append(f"{label}: {note}")
        self._findings(comparison, label)
        for diff in comparison.report.diffs:
            if diff.key in PARALLELISM_KEYS:
                continue  # representatives run the recipe's parallelism
            if diff.kind == "flag":
                self._flag(target, comparison, diff, label)
            elif diff.kind == "env":
                self._env(target, comparison, diff, label)
            else:
                self._image(comparison, diff, label)

    def _findings(self, comparison: Comparison, label: str) -> None:
        """Flags the parser rejects drop out of the diff; an unknown value (a placeholder
        for something only known at run time) must not pass for agreement."""
        ignored = {r.flag for r in (*self.rules.flags.front_end, *self.rules.flags.benchmark_only)}
        report = comparison.report
        for side, findings in (
            ("benchmark", report.bench_findings),
            ("recipe", report.recipe_findings),
        ):
            for finding in findings:
                if finding.severity != "error":
                    continue
                flag = finding.tokens[0].split("=", 1)[0] if finding.tokens else ""
                if flag in ignored:
                    continue
                if has_placeholder(*finding.tokens):
                    why = "its value is only known at run time, so it is not compared"
                else:
                    why = "vLLM would reject it"
                self.out.skipped.append(f"{label}: the {side}'s {finding.message}: {why}")

    def _listed(self, diff: FlagDiff, label: str, node: str | None = None) -> bool:
        """Differences that are reported, never edited; True when ``diff`` is one."""
        verdict = diff.verdict
        if verdict is Verdict.EQUIVALENT:
            self.out.defaults.append(flag_note(diff, label, node))
        elif verdict is Verdict.BENCHMARK_ONLY:
            self.out.benchmark_only.append(flag_note(diff, label, node))
        elif verdict is Verdict.FRONT_END_ONLY:
            self.out.front_end.append(flag_note(diff, label, node))
        elif verdict is Verdict.UNKNOWN:
            self.out.unknown.append(flag_note(diff, label, node))
        else:
            return False
        return True

    def _unit(self, comparison: Comparison, diff: FlagDiff) -> ArgOrigin | None:
        if not diff.recipe_tokens:
            return None
        first = diff.recipe_tokens[0]
        return next((u for u in comparison.command.args if u.flag == first), None)

    def _flag(self, target: Target, comparison: Comparison, diff: FlagDiff, label: str) -> None:
        unit = self._unit(comparison, diff)
        node = unit.path if unit is not None else None
        if self._listed(diff, label, node):
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
        if diff.bench_tokens and not diff.recipe_tokens:
            # the recipe omits it and vLLM's default is not the benchmark's value
            self.out.defaults.append(flag_note(diff, label))
            self._new_flag(target, diff, label, spans)
            return
        self._change_flag(target, unit, diff, label, spans, comparison.command.args)

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
        value = lookup(self.recipe.data, path)
        self.out.demands.append(
            Demand(
                node=format_path(path),
                value=text_value(value),
                keep=True,
                kind="flag",
                subject=diff.flag,
                before=text_value(value),
                op="keep",
                path=path,
                reason=diff.reason,
                placement="",
                target=label,
            )
        )

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
                Demand(
                    node=format_path(path),
                    value=value,
                    keep=False,
                    kind="flag",
                    subject=diff.flag,
                    before=before,
                    op="set",
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
        if has_placeholder(wanted, *diff.bench_tokens):
            self.out.skipped.append(
                f"{label}: {diff.flag} is not statically known in the launch line "
                f"({' '.join(diff.bench_tokens)}); not copied"
            )
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
            flag_part = diff.recipe_tokens[0].split("=", 1)[0]
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
        before = text_value(lookup(self.recipe.data, path))
        self.out.demands.append(
            Demand(
                node=format_path(path),
                value=value,
                keep=False,
                kind="flag",
                subject=diff.flag,
                before=before,
                op="set",
                path=path,
                reason=diff.reason,
                placement="where the recipe defines the flag (the rendered unit's provenance)",
                target=label,
                sources=spans,
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
        wanted = bench_value_text(diff)
        if has_placeholder(wanted, *diff.bench_tokens):
            self.out.skipped.append(
                f"{label}: {diff.flag} is not statically known in the launch line "
                f"({' '.join(diff.bench_tokens)}); not copied"
            )
            return
        if wanted is not None:
            items: tuple[str, ...] = (diff.flag, wanted)
        elif len(diff.bench_tokens) == 1:
            items = (diff.bench_tokens[0],)
        else:
            self.out.skipped.append(f"{label}: cannot spell {diff.flag} as recipe tokens")
            return
        placement, why = self.flag_placement(diff.flag)
        path = self.container(placement, target.profile, "extra_args")
        if overriding:
            why += f"; overrides {overriding}, defined outside the recipe"
        self.out.demands.append(
            Demand(
                node=f"{format_path(path)}::{diff.flag}",
                value=" ".join(items),
                keep=False,
                kind="flag-new",
                subject=diff.flag,
                before=None,
                op="append",
                path=path,
                reason=diff.reason,
                placement=f"{placement} layer, {why}",
                target=label,
                items=items,
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
            Demand(
                node=format_path(path),
                value=None,
                keep=False,
                kind="flag-remove",
                subject=diff.flag,
                before=" ".join(diff.recipe_tokens),
                op="remove",
                path=path[:-1],
                reason=diff.reason + " (rules/policy.yaml recipe_only_flags: remove)",
                placement="where the recipe defines the flag (the rendered unit's provenance)",
                target=label,
                index=path[-1],
                count=count,
            )
        )

    def _env(self, target: Target, comparison: Comparison, diff: FlagDiff, label: str) -> None:
        origin = next((o for o in comparison.command.env_origins if o.name == diff.key), None)
        node = origin.path if origin is not None else None
        if self._listed(diff, label, node):
            return
        name = diff.key
        if diff.verdict is Verdict.RECIPE_ONLY:
            self.out.recipe_only.append(flag_note(diff, label, node))
            return
        local = origin is not None and in_recipe(origin.path)
        path: NodePath | None = None
        if origin is not None and local and origin.path.endswith("." + name):
            path = (*parse_path(origin.path[: -len(name) - 1]), name)
        if diff.verdict is Verdict.SAME:
            if path is not None:
                value = text_value(lookup(self.recipe.data, path))
                self.out.demands.append(
                    Demand(format_path(path), value, True, "env", name, value, "keep", path,
                            diff.reason, "", label)
                )  # fmt: skip
            return
        wanted = diff.bench_value if isinstance(diff.bench_value, str) else None
        if wanted is None or has_placeholder(wanted):
            self.out.skipped.append(f"{label}: {name} has no statically known value; not copied")
            return
        if path is not None:
            self.out.demands.append(
                Demand(
                    node=format_path(path),
                    value=wanted,
                    keep=False,
                    kind="env",
                    subject=name,
                    before=text_value(lookup(self.recipe.data, path)),
                    op="set",
                    path=path,
                    reason=diff.reason,
                    placement="where the recipe defines the variable (the rendered provenance)",
                    target=label,
                )
            )
            return
        classified = self.rules.env.classify(name)
        if classified is None or classified[0] != "serving":
            self.out.skipped.append(f"{label}: {name} is not a serving variable; not copied")
            return
        rule = classified[1]
        placement = rule.placement or "generation"
        container = self.container(placement, target.profile, "extra_env")
        why = f"{placement} layer, rules/env.yaml {rule.pattern} ({rule.reason})"
        if origin is not None:
            why += f"; overrides {origin.path}, defined outside the recipe"
        self.out.demands.append(
            Demand(
                node=f"{format_path(container)}::{name}",
                value=wanted,
                keep=False,
                kind="env-new",
                subject=name,
                before=None,
                op="env",
                path=container,
                reason=diff.reason,
                placement=why,
                target=label,
                env_order=tuple(comparison.launch.env),
            )
        )

    def _image(self, comparison: Comparison, diff: FlagDiff, label: str) -> None:
        origin = comparison.rendering.image_origin
        if diff.verdict is Verdict.SAME or diff.verdict not in DRIFT:
            if diff.verdict is Verdict.SAME and origin and in_recipe(origin):
                path = parse_path(origin)
                value = text_value(lookup(self.recipe.data, path))
                self.out.demands.append(
                    Demand(format_path(path), value, True, "image", "image", value, "keep",
                            path, diff.reason, "", label)
                )  # fmt: skip
            elif diff.verdict is not Verdict.SAME:
                self.out.unknown.append(flag_note(diff, label, origin))
            return
        if comparison.floating_image:
            return  # a note (Comparison.notes), not drift
        wanted = diff.bench_value if isinstance(diff.bench_value, str) else None
        if not origin or not in_recipe(origin) or wanted is None or has_placeholder(wanted):
            self.out.skipped.append(f"{label}: image {wanted} has no recipe node to pin it at")
            return
        path = parse_path(origin)
        self.out.demands.append(
            Demand(
                node=format_path(path),
                value=wanted,
                keep=False,
                kind="image",
                subject="image",
                before=text_value(lookup(self.recipe.data, path)),
                op="set",
                path=path,
                reason=diff.reason,
                placement="the image's provenance in the rendering",
                target=label,
            )
        )
