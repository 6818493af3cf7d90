"""Differences → demands on recipe nodes (docs/alignment.md §5).

Every FlagDiff of a representative comparison becomes a *demand* on one YAML node: change
it (the value where the rendered unit came from), add to it (a new flag or env var at the
placement the rules give), remove from it (policy), or keep it as it is (a point that already
matches pins a shared node). Differences that are never edited are collected as notes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from bot.align.compare import DRIFT, PARALLELISM_KEYS, Comparison
from bot.align.nodes import (
    MISSING,
    bench_field_tokens,
    bench_spans,
    bench_value_text,
    has_placeholder,
    in_recipe,
    json_holder,
    lookup,
    recipe_renderings,
    text_value,
)
from bot.align.profile import Profile
from bot.align.values import EditKind, FlagNote, Setting, Target
from bot.recipes import ArgOrigin, RecipesRepo
from bot.recipes.edit import NodePath, format_path, parse_path
from bot.recipes.jsvalues import as_dict
from bot.recipes.layers import gen_block
from bot.recipes.render import Scope
from bot.recipes.repo import HardwareProfile, Recipe
from bot.rules import KnobClass, Rules
from bot.shell.result import SourceSpan
from bot.vllm import FlagDiff, Verdict, canonical_flag


def dotted_value(value: Any) -> str:
    """One key of a JSON-valued flag as a dotted unit's value token."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True, kw_only=True)
class _Demand:
    node: str  # conflict key: the node (or container::name) this demand writes
    kind: EditKind
    subject: str
    path: NodePath  # the scalar, or the list / map container written
    reason: str
    placement: str
    target: str
    sources: tuple[SourceSpan, ...] = ()
    targets: tuple[str, ...] = ()  # after merging: every profile demanding the same
    shadows: NodePath | None = None  # a narrower override: the shared node it overrides
    keep: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True)
class SetDemand(_Demand):
    """Change a scalar (``create``: the path does not exist yet, e.g. a new image pin)."""

    value: str
    before: str | None
    create: bool = False


@dataclass(frozen=True, kw_only=True)
class AppendDemand(_Demand):
    """Add flag tokens to a list (created when missing)."""

    items: tuple[str, ...]

    @property
    def value(self) -> str:
        return " ".join(self.items)

    before: None = None


@dataclass(frozen=True, kw_only=True)
class EnvDemand(_Demand):
    """Add a variable to an env map, in the benchmark's export order."""

    value: str
    env_order: tuple[str, ...] = ()
    before: None = None


@dataclass(frozen=True, kw_only=True)
class RemoveDemand(_Demand):
    """Remove ``count`` items of a list from ``index`` (policy: recipe_only_flags remove)."""

    index: int
    count: int
    before: str | None
    value: None = None


@dataclass(frozen=True, kw_only=True)
class KeepDemand(_Demand):
    """A point that already matches pins the node: no edit, but a conflict if changed."""

    value: str | None
    before: str | None = None
    keep: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class FeatureDemand(_Demand):
    """Workload flag tokens behind an opt-in feature's hardware override
    (``features.<f>.hardware_overrides.<hw>.args``); ``base`` is what that list renders now
    (the override replaces the feature's args on that hardware), ``new`` when the feature
    itself is proposed (then ``description`` is its text)."""

    feature: str
    hardware: str
    items: tuple[str, ...]
    base: tuple[str, ...] = ()
    new: bool = False
    description: str = ""
    before: None = None

    @property
    def value(self) -> str:
        return " ".join(self.items)


Demand = SetDemand | AppendDemand | EnvDemand | RemoveDemand | KeepDemand | FeatureDemand


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
    settings: list[Setting] = field(default_factory=list)  # benchmark settings not carried
    to_classify: list[str] = field(default_factory=list)  # unclassified: never edited
    features: dict[str, str] = field(default_factory=dict)  # profile label → workload feature


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
    def __init__(
        self,
        recipes: RecipesRepo,
        recipe: Recipe,
        rules: Rules,
        targets: Sequence[Target] = (),
    ) -> None:
        self.recipes = recipes
        self.recipe = recipe
        self.rules = rules
        self.targets = tuple(targets)
        self.out = Collected()
        self._drawn: list[tuple[Scope, frozenset[str]]] | None = None
        self._under: list[frozenset[str]] = []  # per rendering: _containers(drawn)
        # node → (the whole JSON being built, index of its demand) for fields of a config the
        # recipe spells whole: every carried field of one config lands in one value
        self._json_values: dict[str, tuple[dict[str, Any], int]] = {}

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

    # -- scope: who draws from a node --------------------------------------------------

    def _verified(self) -> set[Scope]:
        return {(t.profile.variant, t.profile.hardware, t.profile.strategy) for t in self.targets}

    def unverified_users(self, node: str, container: bool = False) -> list[Scope]:
        """Renderings drawing from ``node`` (``container``: from anything under it) that no
        benchmarked point of this PR ran."""
        if self._drawn is None:
            requests = list(
                {
                    t.profile.key: t.profile.coordinates for t in self.targets if t.profile.features
                }.values()
            )
            self._drawn = recipe_renderings(self.recipes, self.recipe.path, requests)
            self._under = [_containers(drawn) for _, drawn in self._drawn]
        verified = self._verified()
        users = [
            ident
            for (ident, drawn), under in zip(self._drawn, self._under, strict=True)
            if node in drawn or (container and node in under)
        ]
        return sorted({ident for ident in users if ident not in verified})

    def _narrowed(
        self, container: NodePath, placement: str, why: str, target: Target
    ) -> tuple[NodePath, str, str]:
        """A new flag or variable goes where the rules place it, unless renderings nobody
        benchmarked draw from that layer: then at the benchmarked strategy x hardware."""
        if self._exact(container, target.profile):
            return container, placement, why
        parent = container[:-1]
        users = self.unverified_users(format_path(parent), container=True)
        if not users and lookup(self.recipe.data, parent) is not MISSING:
            return container, placement, why
        if not users:
            # a new layer: which renderings it would reach is decided by its path
            users = [u for u in self._reach(parent) if u not in self._verified()]
            if not users:
                return container, placement, why
        narrow = self.container("profile", target.profile, str(container[-1]))
        why += f"; not at {format_path(parent)}: it is {self._scope_note(users)}"
        return narrow, "profile", why

    def _reach(self, parent: NodePath) -> list[Scope]:
        """Renderings a node at ``parent`` would apply to, by its path (hardware_overrides
        keys match the hardware id, generation or brand; strategy_overrides the strategy)."""
        if self._drawn is None:
            self.unverified_users("")
        assert self._drawn is not None
        parts = [str(p) for p in parent]
        out: list[Scope] = []
        for ident, _ in self._drawn:
            variant, hw_id, strategy = ident
            hw = self.recipes.hardware.get(hw_id)
            if hw is None:
                continue
            keys = (hw.id, hw.generation, hw.brand_lower, "default")
            if parts[:1] == ["hardware_overrides"] and len(parts) > 1 and parts[1] in keys:
                out.append(ident)
            elif parts[:1] == ["strategy_overrides"] and len(parts) > 1 and parts[1] == strategy:
                if len(parts) < 4 or parts[3] in keys:
                    out.append(ident)
            elif parts[:2] == ["variants", variant] and (len(parts) < 4 or parts[3] in keys):
                out.append(ident)
        return sorted(set(out))

    @staticmethod
    def _exact(path: NodePath, profile: Profile) -> bool:
        """A node already scoped to the benchmarked variant x hardware or strategy x hardware."""
        parts = [str(p) for p in path]
        return parts[:4] in (
            ["variants", profile.variant, "hardware_overrides", profile.hardware],
            ["strategy_overrides", profile.strategy, "hardware_overrides", profile.hardware],
        )

    def _scope_note(self, users: Sequence[Scope]) -> str:
        """``also drawn by 24 renderings no benchmarked point ran (mi300x, mi325x, …)``."""
        hardware = list(dict.fromkeys(hw for _, hw, _ in users))
        return (
            f"also drawn by {len(users)} rendering{'s' if len(users) != 1 else ''} no "
            f"benchmarked point ran (on {', '.join(hardware)})"
        )

    def _override_container(self, unit_path: NodePath, profile: Profile, kind: str) -> NodePath:
        """The narrowest layer after ``unit_path``'s that applies only to the benchmarked
        hardware (layers.py: later layers win): variant x hardware after the model and variant
        layers, strategy x hardware after the generation and strategy layers."""
        head = [str(p) for p in unit_path[:2]]
        early = head[0] == "model" or (
            head[0] == "variants" and unit_path[2:3] != ("hardware_overrides",)
        )
        if early:
            return ("variants", profile.variant, "hardware_overrides", profile.hardware, kind)
        return (
            "strategy_overrides",
            profile.strategy,
            "hardware_overrides",
            profile.hardware,
            kind,
        )

    # -- policy per knob class ---------------------------------------------------------

    def _carry(
        self, target: Target, comparison: Comparison, diff: FlagDiff, label: str
    ) -> str | None:
        """How a differing benchmark setting is carried: ``edit``, ``pin`` or ``feature``;
        None when it is not (then it is recorded as a benchmark setting with its reason)."""
        cls = comparison.knob(diff)
        if cls is None:
            return "edit"  # the image: its own policy (_image)
        action = self.rules.policy.knob_policy.action(cls)
        why = self.rules.knobs.reason("env" if diff.kind == "env" else "flag", diff.flag)
        if action is None:
            self.out.to_classify.append(diff.flag)
            self._setting(diff, label, cls, "rules/knobs.yaml does not classify it; not edited")
            return None
        if action == "recipe":
            return "edit"
        if action == "pin":
            return "pin"
        if action == "recipe-with-eval":
            if target.evidence is not None:
                return "edit"
            self._setting(diff, label, cls, f"{why}; no passing eval at these settings")
            return None
        if action == "feature":
            workload = self.rules.policy.workload_feature(comparison.launch.point.scenario)
            if workload is not None and diff.kind == "flag":
                return "feature"
            if workload is None:
                scenario = comparison.launch.point.scenario
                self._setting(diff, label, cls, f"{why}; no workload feature for {scenario}")
            else:
                self._setting(diff, label, cls, f"{why}; a recipe feature carries args, not env")
            return None
        self._setting(diff, label, cls, why)
        return None

    def _setting(self, diff: FlagDiff, label: str, cls: KnobClass, why: str) -> None:
        self.out.settings.append(
            Setting(
                knob=cls.value,
                kind=diff.kind,
                subject=diff.flag,
                bench=" ".join(bench_field_tokens(diff)) or None,
                recipe=" ".join(diff.recipe_tokens) or None,
                reason=why,
                target=label,
            )
        )

    # -- one comparison ----------------------------------------------------------------

    def tp(self, target: Target) -> None:
        """The variant's tp on the benchmarked hardware (only under the stated evidence)."""
        if target.tp is None:
            return
        profile = target.profile
        path: NodePath = ("variants", profile.variant, "tp", profile.hardware)
        current = lookup(self.recipe.data, path[:-1])
        if current is not MISSING and not isinstance(current, Mapping):
            self.out.skipped.append(
                f"{profile.label}: variants.{profile.variant}.tp is one number for every GPU; "
                f"TP{target.tp} on {profile.hardware} is not written there"
            )
            return
        before = lookup(self.recipe.data, path)
        self.out.demands.append(
            SetDemand(
                node=format_path(path),
                value=str(target.tp),
                kind="tp",
                subject="--tensor-parallel-size",
                before=text_value(before) if before is not MISSING else None,
                path=path,
                create=before is MISSING,
                reason=f"every benchmarked point of variant {profile.variant} on "
                f"{profile.hardware} runs TP{target.tp} and its eval passed",
                placement="the variant's tp, keyed by the benchmarked hardware",
                target=profile.label,
            )
        )

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
                self._image(target, comparison, diff, label)

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
        carry = self._carry(target, comparison, diff, label)
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
        self._keep(path, "flag", diff, label)

    def _keep(self, path: NodePath, kind: EditKind, diff: FlagDiff, label: str) -> None:
        value = text_value(lookup(self.recipe.data, path))
        self.out.demands.append(
            KeepDemand(node=format_path(path), value=value, kind=kind, subject=diff.flag,
                       path=path, reason=diff.reason, placement="", target=label)
        )  # fmt: skip

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
        if self._run_time_value(diff, label):
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
        unit_path = parse_path(unit.path)
        users = [] if self._exact(unit_path, target.profile) else self.unverified_users(unit.path)
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
        if self._run_time_value(diff, label):
            return
        flag = holder.flag or diff.flag  # as the recipe spells it: the renderer dedupes by text
        subject = diff.flag.split(".", 1)[0]  # the config's canonical flag
        unit_path = parse_path(holder.path)
        value_path = self._value_path(holder)
        users = [] if self._exact(unit_path, target.profile) else self.unverified_users(holder.path)
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
            path = self._override_container(unit_path, target.profile, "extra_args")
            node = f"{format_path(path)}::{flag}"
            placement = (
                f"the whole JSON overrides {format_path(unit_path)} for "
                f"{target.profile.hardware} only: it is {self._scope_note(users)}"
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

    def _run_time_value(self, diff: FlagDiff, label: str) -> bool:
        """True (and said) when the benchmark's value is known only at run time."""
        if not has_placeholder(bench_value_text(diff), *diff.bench_tokens):
            return False
        self.out.skipped.append(
            f"{label}: {diff.flag} is not statically known in the launch line "
            f"({' '.join(diff.bench_tokens)}); not copied"
        )
        return True

    def _bench_items(self, diff: FlagDiff, label: str) -> tuple[str, ...] | None:
        if self._run_time_value(diff, label):
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
        users: Sequence[Scope],
        items: tuple[str, ...],
    ) -> None:
        """The value lives in a node other renderings share: override it for the benchmarked
        hardware only (the broad node stays as it is)."""
        if unit_path and unit_path[0] == "features":
            self._override_feature_args(target, unit_path, diff, label, spans, users, items)
            return
        path = self._override_container(unit_path, target.profile, "extra_args")
        self.out.demands.append(
            AppendDemand(
                node=f"{format_path(path)}::{diff.flag}",
                items=items,
                kind="flag-new",
                subject=diff.flag,
                path=path,
                reason=diff.reason,
                placement=f"overrides {format_path(unit_path)} for {target.profile.hardware} "
                f"only: it is {self._scope_note(users)}",
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
        users: Sequence[Scope],
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
                f"only (a hardware override replaces the list): it is {self._scope_note(users)}",
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
        placement, why = self.flag_placement(diff.flag)
        path, placement, why = self._narrowed(
            self.container(placement, target.profile, "extra_args"), placement, why, target
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
            )
        )

    # -- workload features -------------------------------------------------------------

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

    # -- env -----------------------------------------------------------------------------

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
                self._keep(path, "env", diff, label)
            return
        if self._carry(target, comparison, diff, label) is None:
            return
        wanted = diff.bench_value if isinstance(diff.bench_value, str) else None
        if wanted is None or has_placeholder(wanted):
            self.out.skipped.append(f"{label}: {name} has no statically known value; not copied")
            return
        order = tuple(comparison.launch.env)
        if path is not None:
            users = (
                []
                if self._exact(path, target.profile)
                else self.unverified_users(format_path(path))
            )
            if not users:
                self.out.demands.append(
                    SetDemand(
                        node=format_path(path),
                        value=wanted,
                        kind="env",
                        subject=name,
                        before=text_value(lookup(self.recipe.data, path)),
                        path=path,
                        reason=diff.reason,
                        placement="where the recipe defines the variable (the rendered "
                        "provenance); every rendering drawing from it was benchmarked",
                        target=label,
                    )
                )
                return
            container = self._override_container(path, target.profile, "extra_env")
            why = f"overrides {format_path(path)} for {target.profile.hardware} only: it is " + (
                self._scope_note(users)
            )
            self._env_demand(container, name, wanted, diff, label, why, order, shadows=path)
            return
        classified = self.rules.env.classify(name)
        if classified is None or classified[0] != "serving":
            self.out.skipped.append(f"{label}: {name} is not a serving variable; not copied")
            return
        rule = classified[1]
        ruled = rule.placement or "generation"
        why = f"rules/env.yaml {rule.pattern} ({rule.reason})"
        container, placement, why = self._narrowed(
            self.container(ruled, target.profile, "extra_env"), ruled, why, target
        )
        why = f"{placement} layer, {why}"
        if origin is not None:
            why += f"; overrides {origin.path}, defined outside the recipe"
        self._env_demand(container, name, wanted, diff, label, why, order)

    def _env_demand(
        self,
        container: NodePath,
        name: str,
        wanted: str,
        diff: FlagDiff,
        label: str,
        why: str,
        order: tuple[str, ...],
        shadows: NodePath | None = None,
    ) -> None:
        self.out.demands.append(
            EnvDemand(
                node=f"{format_path(container)}::{name}",
                value=wanted,
                kind="env-new",
                subject=name,
                path=container,
                reason=diff.reason,
                placement=why,
                target=label,
                env_order=order,
                shadows=shadows,
            )
        )

    # -- image ---------------------------------------------------------------------------

    def _image(self, target: Target, comparison: Comparison, diff: FlagDiff, label: str) -> None:
        """A floating recipe image (``latest``, ``nightly``, none) keeps floating: the
        benchmark's tag is cited, not pinned. A pinned tag gets the newer pin when the
        benchmark ran it and its eval passed, at the narrowest layer that covers what was
        verified."""
        origin = comparison.rendering.image_origin
        if diff.verdict is Verdict.SAME or diff.verdict not in DRIFT:
            if diff.verdict is Verdict.SAME and origin and in_recipe(origin):
                self._keep(parse_path(origin), "image", diff, label)
            elif diff.verdict is not Verdict.SAME:
                self.out.unknown.append(flag_note(diff, label, origin))
            return
        wanted = diff.bench_value if isinstance(diff.bench_value, str) else None
        current = comparison.rendering.image or ""
        if comparison.floating_image or floating_tag(current):
            self.out.settings.append(
                Setting("image", "image", "image", wanted, current or None,
                        f"the recipe floats on {current or 'the default image'}: it keeps "
                        "floating; the benchmark's tag is cited, not pinned", label)
            )  # fmt: skip
            return
        if not origin or not in_recipe(origin) or wanted is None or has_placeholder(wanted):
            self.out.skipped.append(f"{label}: image {wanted} has no recipe node to pin it at")
            return
        if target.evidence is None:
            self.out.settings.append(
                Setting("image", "image", "image", wanted, current or None,
                        "no passing eval on that image: the recipe's pin is kept", label)
            )  # fmt: skip
            return
        path = parse_path(origin)
        users = [] if self._exact(path, target.profile) else self.unverified_users(origin)
        placement = "the image's provenance in the rendering; every rendering drawing from it "
        placement += "was benchmarked"
        create = False
        shadows: NodePath | None = None
        if users:
            create = True
            placement = (
                f"overrides {origin} for {target.profile.hardware} only: it is "
                + self._scope_note(users)
            )
            shadows = path
            path = ("variants", target.profile.variant, "hardware_overrides",
                    target.profile.hardware, "docker_image")  # fmt: skip
        self.out.demands.append(
            SetDemand(
                node=format_path(path),
                value=wanted,
                kind="image",
                subject="image",
                before=text_value(lookup(self.recipe.data, path)) if not create else None,
                path=path,
                create=create,
                reason=diff.reason,
                placement=placement,
                target=label,
                shadows=shadows,
            )
        )


def _set_field(data: dict[str, Any], keys: Sequence[str], value: Any) -> None:
    """``data[k1][k2]… = value``, creating the mappings on the way."""
    for key in keys[:-1]:
        inner = data.get(key)
        data[key] = inner = dict(inner) if isinstance(inner, dict) else {}
        data = inner
    data[keys[-1]] = value


def floating_tag(image: str) -> bool:
    """``repo``, ``repo:latest``, ``repo:nightly``: a tag that moves with releases."""
    tail = image.rsplit("/", 1)[-1]
    if "@" in tail:
        return False
    tag = tail.split(":", 1)[1] if ":" in tail else ""
    return tag in ("", "latest", "nightly")


def _containers(paths: frozenset[str]) -> frozenset[str]:
    """Every node that contains one of ``paths``: each prefix ending before a ``.`` or ``[``
    (``a.b[0].c`` → ``a``, ``a.b``, ``a.b[0]``), so "is anything drawn under ``node``" is
    one set lookup instead of a scan of every path per question."""
    return frozenset(p[:i] for p in paths for i, ch in enumerate(p) if ch in ".[")
