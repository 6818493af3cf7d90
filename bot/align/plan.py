"""The alignment planner: comparisons of benchmark points → the smallest recipe edit.

docs/alignment.md §5. Pure: the recipes repository (before), its source (for the file's
bytes), the rules and the :class:`Target` profiles of one recipe file go in; an
:class:`AlignmentPlan` comes out with the edits (each with the FlagDiff reason a reviewer can
check and the node it lands on), what was left alone and why, and the edited text. After the
edits the target profiles are re-rendered and re-compared: exactly one of each flag, and no
drift left that the plan meant to close — otherwise the plan fails with the reason.

Every difference becomes a *demand* on one YAML node (change it, add to it, keep it as it
is). Two representative points demanding different values of one node is a conflict: that
node is not edited and the conflict is reported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bot.align.compare import DRIFT, PARALLELISM_KEYS, Comparison, compare, recipe_side
from bot.align.overlay import OverlaySource
from bot.align.profile import Profile
from bot.benchmarks import LaunchLine
from bot.errors import RecipeSyncError
from bot.evidence import markdown as md
from bot.evidence.model import Evidence, EvidenceReport
from bot.recipes import RecipesRepo, Rendering, load_recipes, render
from bot.recipes.edit import (
    AppendItems,
    Edit,
    EditError,
    EditResult,
    EnsurePath,
    InsertKey,
    NodePath,
    RemoveItems,
    SetScalar,
    apply_edits,
    format_path,
    parse_path,
)
from bot.recipes.jsvalues import as_dict
from bot.recipes.layers import gen_block
from bot.recipes.repo import HardwareProfile, Recipe
from bot.rules import Rules
from bot.shell.result import SourceSpan
from bot.shell.text import PLACEHOLDER_RE
from bot.sources import FileSource
from bot.vllm import FlagDiff, LaunchSide, Verdict, diff_launch

from bot.align.compare import recipe_min_version, taxonomy_vram  # isort: skip

EditKind = Literal["image", "flag", "flag-new", "env", "env-new", "verified", "flag-remove"]
VerificationState = Literal["verified", "already", "not-verified", "no-evidence", "policy-off"]
_EXTERNAL = re.compile(r"^(generated|request|default-image):|^[\w./-]+\.ya?ml:")
_MISSING = object()


@dataclass(frozen=True)
class Target:
    """One recipe profile a benchmark PR ran, with the points that represent it."""

    key: str  # master-config key
    profile: Profile
    representatives: tuple[Comparison, ...]  # non-empty; the first is the one cited
    evidence: Evidence | None = None  # the verifying eval job for this profile
    evidence_note: str = ""  # why there is none
    report: EvidenceReport | None = field(default=None, compare=False, repr=False)  # its jobs

    @property
    def comparison(self) -> Comparison:
        return self.representatives[0]


@dataclass(frozen=True)
class PlannedEdit:
    edit: Edit
    kind: EditKind
    subject: str  # "--moe-backend", "AITER_TRITON_LOG_LEVEL", "image", "mi355x"
    before: str | None  # the recipe's value (None: absent)
    after: str | None  # the new value (None: removed)
    node: str  # YAML path of the node written
    scope: str  # which renderings draw from that node, in words
    reason: str  # the FlagDiff reason (or the evidence), quoted
    placement: str  # why this node: provenance, or the rule that places a new one
    targets: tuple[str, ...]  # labels of the profiles that demand it
    sources: tuple[SourceSpan, ...] = ()  # benchmark script lines of the value


@dataclass(frozen=True)
class FlagNote:
    """A difference reported without an edit (equivalent, benchmark-only, recipe-only, …)."""

    kind: str  # flag | env | image
    subject: str
    bench: str | None
    recipe: str | None
    verdict: str
    reason: str
    target: str  # profile label
    node: str | None = None  # where the recipe defines it


@dataclass(frozen=True)
class Verification:
    """Whether ``meta.hardware.<hw>: verified`` is written, and why (not)."""

    hardware: str
    state: VerificationState
    reason: str
    evidence: Evidence | None = None
    serving_match: str | None = None  # the computed sentence for the evidence section


@dataclass(frozen=True)
class AlignmentPlan:
    recipe_path: str
    targets: tuple[Target, ...]
    edits: tuple[PlannedEdit, ...]
    defaults: tuple[FlagNote, ...]  # one side omits a flag: equivalent or not, with the default
    recipe_only: tuple[FlagNote, ...]
    benchmark_only: tuple[FlagNote, ...]
    front_end: tuple[FlagNote, ...]
    unknown: tuple[FlagNote, ...]
    skipped: tuple[str, ...]  # drift left unedited and why (conflict, no node, unknown value)
    notes: tuple[str, ...]
    verifications: tuple[Verification, ...]
    failure: str | None = None  # the plan cannot be applied (invariants, editor)
    result: EditResult | None = None
    after: RecipesRepo | None = field(default=None, compare=False, repr=False)

    @property
    def status(self) -> Literal["patch", "aligned", "blocked", "failed"]:
        if self.failure is not None:
            return "failed"
        if self.result is not None and not self.result.unchanged:
            return "patch"
        return "blocked" if self.skipped else "aligned"


# ------------------------------------------------------------------------------ helpers


def in_recipe(path: str | None) -> bool:
    """Provenance inside the recipe file (not a strategy file, generated, or a default)."""
    return bool(path) and not _EXTERNAL.match(path or "")


def lookup(data: Any, path: NodePath) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(data, list) or not -len(data) <= part < len(data):
                return _MISSING
            data = data[part]
        else:
            if not isinstance(data, Mapping) or part not in data:
                return _MISSING
            data = data[part]
    return data


def exists(data: Any, path: NodePath) -> bool:
    return lookup(data, path) is not _MISSING


def hw_label(recipes: RecipesRepo, hw_id: str) -> str:
    hw = recipes.hardware.get(hw_id)
    name = hw.data.get("display_name") if hw is not None else None
    return str(name) if isinstance(name, str) and name else hw_id.upper()


def _key_label(recipes: RecipesRepo, key: str) -> str:
    """A hardware_overrides key in words: a hardware id, a generation or a brand."""
    if key in recipes.hardware:
        return hw_label(recipes, key)
    return {"amd": "AMD", "nvidia": "NVIDIA", "intel": "Intel", "default": "default"}.get(
        key, key.capitalize()
    )


def scope_of(path: NodePath, recipes: RecipesRepo) -> str:
    """Which renderings draw from ``path``, in words (the regression matrix lists them)."""
    parts = [str(p) for p in path]
    if not parts:
        return "the whole recipe"
    head = parts[0]
    if head == "meta":
        return "recipe metadata (no rendering changes)"
    if head == "model" and len(parts) >= 3 and parts[1] == "docker_image":
        return f"every {_key_label(recipes, parts[2])} rendering"
    if head == "model":
        return "every rendering of the recipe"
    if head == "hardware_overrides" and len(parts) > 1:
        return f"every {_key_label(recipes, parts[1])} rendering"
    if head == "strategy_overrides" and len(parts) > 1:
        if len(parts) > 3 and parts[2] == "hardware_overrides":
            return f"{_key_label(recipes, parts[3])} + {parts[1]} only"
        return f"every {parts[1]} rendering"
    if head == "variants" and len(parts) > 1:
        return f"variant {parts[1]}" + (
            f" on {_key_label(recipes, parts[3])}"
            if len(parts) > 3 and parts[2] == "hardware_overrides"
            else ""
        )
    if head == "features" and len(parts) > 1:
        where = ""
        if "hardware_overrides" in parts:
            where = f" on {_key_label(recipes, parts[parts.index('hardware_overrides') + 1])}"
        return f"renderings with {parts[1]}{where}"
    return "renderings drawing from it"


def _text_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def bench_value_text(diff: FlagDiff) -> str | None:
    """The value as the benchmark spells it (``--x v`` or ``--x=v``); None for a bare flag."""
    tokens = diff.bench_tokens
    if diff.benchmark_only_keys and isinstance(diff.bench_value, Mapping):
        kept = {k: v for k, v in diff.bench_value.items() if k not in diff.benchmark_only_keys}
        return json.dumps(kept, separators=(",", ":"))
    if len(tokens) == 2:
        return tokens[1]
    if len(tokens) == 1 and tokens[0].startswith("-") and "=" in tokens[0]:
        return tokens[0].split("=", 1)[1]
    return None


def _placeholder(*values: str | None) -> bool:
    return any(v is not None and PLACEHOLDER_RE.search(v) for v in values)


def bench_spans(launch: LaunchLine, diff: FlagDiff) -> tuple[SourceSpan, ...]:
    """Script lines of the benchmark tokens of ``diff`` (where the flag and value are set)."""
    argv = launch.argv
    sources = launch.argv_sources
    tokens = diff.bench_tokens
    if not tokens or diff.kind != "flag" or len(sources) != len(argv):
        return ()
    for start in range(len(argv) - len(tokens) + 1):
        if tuple(argv[start : start + len(tokens)]) == tuple(tokens):
            return tuple(dict.fromkeys(sources[start : start + len(tokens)]))
    return ()


# ------------------------------------------------------------------------------ demands


@dataclass(frozen=True)
class _Demand:
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
class _Collected:
    demands: list[_Demand] = field(default_factory=list)
    defaults: list[FlagNote] = field(default_factory=list)
    recipe_only: list[FlagNote] = field(default_factory=list)
    benchmark_only: list[FlagNote] = field(default_factory=list)
    front_end: list[FlagNote] = field(default_factory=list)
    unknown: list[FlagNote] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _note(diff: FlagDiff, label: str, node: str | None = None) -> FlagNote:
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


class _Planner:
    def __init__(self, recipes: RecipesRepo, recipe: Recipe, rules: Rules) -> None:
        self.recipes = recipes
        self.recipe = recipe
        self.rules = rules
        self.out = _Collected()

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
                if _placeholder(*finding.tokens):
                    why = "its value is only known at run time, so it is not compared"
                else:
                    why = "vLLM would reject it"
                self.out.skipped.append(f"{label}: the {side}'s {finding.message}: {why}")

    def _listed(self, diff: FlagDiff, label: str, node: str | None = None) -> bool:
        """Differences that are reported, never edited; True when ``diff`` is one."""
        verdict = diff.verdict
        if verdict is Verdict.EQUIVALENT:
            self.out.defaults.append(_note(diff, label, node))
        elif verdict is Verdict.BENCHMARK_ONLY:
            self.out.benchmark_only.append(_note(diff, label, node))
        elif verdict is Verdict.FRONT_END_ONLY:
            self.out.front_end.append(_note(diff, label, node))
        elif verdict is Verdict.UNKNOWN:
            self.out.unknown.append(_note(diff, label, node))
        else:
            return False
        return True

    def _unit(self, comparison: Comparison, diff: FlagDiff) -> Any:
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
            self.out.recipe_only.append(_note(diff, label, node))
            if self.rules.policy.recipe_only_flags == "remove":
                self._remove(unit, diff, label)
            return
        # DIFFERS
        if diff.bench_tokens and not diff.recipe_tokens:
            if diff.verdict is Verdict.DIFFERS and not diff.recipe_tokens:
                self.out.defaults.append(_note(diff, label))
            self._new_flag(target, diff, label, spans)
            return
        self._change_flag(target, unit, diff, label, spans)

    def _value_path(self, unit: Any) -> NodePath | None:
        """The YAML path of a recipe unit's value token (``P[i+1]`` after the flag ``P[i]``)."""
        if unit is None or not in_recipe(unit.path) or unit.value is None:
            return None
        path = parse_path(unit.path)
        if not path or not isinstance(path[-1], int):
            return None
        value_path = (*path[:-1], path[-1] + 1)
        return value_path if lookup(self.recipe.data, value_path) == unit.value else None

    def _keep_flag(self, unit: Any, diff: FlagDiff, label: str) -> None:
        path = self._value_path(unit)
        if path is None and unit is not None and in_recipe(unit.path):
            path = parse_path(unit.path)
        if path is None:
            return
        value = lookup(self.recipe.data, path)
        self.out.demands.append(
            _Demand(
                node=format_path(path),
                value=_text_value(value),
                keep=True,
                kind="flag",
                subject=diff.flag,
                before=_text_value(value),
                op="keep",
                path=path,
                reason=diff.reason,
                placement="",
                target=label,
            )
        )

    def _change_flag(
        self,
        target: Target,
        unit: Any,
        diff: FlagDiff,
        label: str,
        spans: tuple[SourceSpan, ...],
    ) -> None:
        wanted = bench_value_text(diff)
        if _placeholder(wanted, *diff.bench_tokens):
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
        else:
            self.out.skipped.append(
                f"{label}: {diff.flag} is spelled {' '.join(diff.recipe_tokens)!r} in the "
                f"recipe and {' '.join(diff.bench_tokens)!r} in the benchmark; no single value "
                "node to change"
            )
            return
        before = _text_value(lookup(self.recipe.data, path))
        self.out.demands.append(
            _Demand(
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
        if _placeholder(wanted, *diff.bench_tokens):
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
            _Demand(
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

    def _remove(self, unit: Any, diff: FlagDiff, label: str) -> None:
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
            _Demand(
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
            self.out.recipe_only.append(_note(diff, label, node))
            return
        local = origin is not None and in_recipe(origin.path)
        path: NodePath | None = None
        if origin is not None and local and origin.path.endswith("." + name):
            path = (*parse_path(origin.path[: -len(name) - 1]), name)
        if diff.verdict is Verdict.SAME:
            if path is not None:
                value = _text_value(lookup(self.recipe.data, path))
                self.out.demands.append(
                    _Demand(format_path(path), value, True, "env", name, value, "keep", path,
                            diff.reason, "", label)
                )  # fmt: skip
            return
        wanted = diff.bench_value if isinstance(diff.bench_value, str) else None
        if wanted is None or _placeholder(wanted):
            self.out.skipped.append(f"{label}: {name} has no statically known value; not copied")
            return
        if path is not None:
            self.out.demands.append(
                _Demand(
                    node=format_path(path),
                    value=wanted,
                    keep=False,
                    kind="env",
                    subject=name,
                    before=_text_value(lookup(self.recipe.data, path)),
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
            _Demand(
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
                value = _text_value(lookup(self.recipe.data, path))
                self.out.demands.append(
                    _Demand(format_path(path), value, True, "image", "image", value, "keep",
                            path, diff.reason, "", label)
                )  # fmt: skip
            elif diff.verdict is not Verdict.SAME:
                self.out.unknown.append(_note(diff, label, origin))
            return
        if comparison.floating_image:
            return  # a note (Comparison.notes), not drift
        wanted = diff.bench_value if isinstance(diff.bench_value, str) else None
        if not origin or not in_recipe(origin) or wanted is None or _placeholder(wanted):
            self.out.skipped.append(f"{label}: image {wanted} has no recipe node to pin it at")
            return
        path = parse_path(origin)
        self.out.demands.append(
            _Demand(
                node=format_path(path),
                value=wanted,
                keep=False,
                kind="image",
                subject="image",
                before=_text_value(lookup(self.recipe.data, path)),
                op="set",
                path=path,
                reason=diff.reason,
                placement="the image's provenance in the rendering",
                target=label,
            )
        )


# ------------------------------------------------------------------------------ edits


def _resolve_conflicts(demands: Sequence[_Demand]) -> tuple[list[_Demand], list[str]]:
    by_node: dict[str, list[_Demand]] = {}
    for demand in demands:
        by_node.setdefault(demand.node, []).append(demand)
    kept: list[_Demand] = []
    conflicts: list[str] = []
    for node, group in by_node.items():
        values = list(dict.fromkeys(d.value for d in group))
        wants_change = any(not d.keep for d in group)
        if len(values) > 1 and wants_change:
            who = "; ".join(
                f"{d.target} {'keeps' if d.keep else 'wants'} {d.value!r}"
                for d in {(d.target, d.value, d.keep): d for d in group}.values()
            )
            conflicts.append(
                f"conflict at {node.split('::')[0]} ({group[0].subject}): {who}; not edited"
            )
            continue
        kept.extend(d for d in group if not d.keep)
    return kept, conflicts


def _merge(demands: Sequence[_Demand]) -> list[_Demand]:
    """One demand per node (several points may demand the same change)."""
    merged: dict[str, _Demand] = {}
    targets: dict[str, list[str]] = {}
    for demand in demands:
        merged.setdefault(demand.node, demand)
        targets.setdefault(demand.node, []).append(demand.target)
    return [replace(merged[node], targets=tuple(dict.fromkeys(targets[node]))) for node in merged]


def _after_key(
    existing: Sequence[str], order: Sequence[str], name: str
) -> tuple[str | None, str | None]:
    """(after, before) for a new env var: the nearest preceding var of the benchmark's
    export order already in the map, else the nearest following one."""
    if name in order:
        position = order.index(name)
        for previous in reversed(order[:position]):
            if previous in existing:
                return previous, None
        for following in order[position + 1 :]:
            if following in existing:
                return None, following
    return None, None


def _planned(demand: _Demand, edit: Edit, recipes: RecipesRepo, after: str | None) -> PlannedEdit:
    node = demand.node.split("::")[0]
    if demand.op in ("append", "env"):
        node = format_path((*demand.path, demand.subject)) if demand.op == "env" else node
    return PlannedEdit(
        edit=edit,
        kind=demand.kind,
        subject=demand.subject,
        before=demand.before,
        after=after,
        node=node,
        scope=scope_of(demand.path, recipes),
        reason=demand.reason,
        placement=demand.placement,
        targets=demand.targets or (demand.target,),
        sources=demand.sources,
    )


def build_edits(
    demands: Sequence[_Demand], recipe: Recipe, recipes: RecipesRepo
) -> tuple[list[PlannedEdit], list[str]]:
    """Edits for the demands, in an order the editor can apply (indices stay valid)."""
    data = recipe.data
    planned: list[PlannedEdit] = []
    problems: list[str] = []
    for demand in demands:
        if demand.op == "set":
            planned.append(
                _planned(demand, SetScalar(demand.path, demand.value), recipes, demand.value)
            )
    appends: dict[NodePath, list[_Demand]] = {}
    envs: dict[NodePath, list[_Demand]] = {}
    for demand in demands:
        if demand.op == "append":
            appends.setdefault(demand.path, []).append(demand)
        elif demand.op == "env":
            envs.setdefault(demand.path, []).append(demand)
    for path, group in envs.items():
        current = lookup(data, path)
        if current is not _MISSING and not isinstance(current, Mapping):
            problems.append(f"{format_path(path)} is not a mapping; env not added")
            continue
        existing = list(current) if isinstance(current, Mapping) else []
        if current is _MISSING:
            mapping = {d.subject: d.value or "" for d in group}
            edit: Edit = EnsurePath(path, mapping)
            for demand in group:
                planned.append(_planned(demand, edit, recipes, demand.value))
            continue
        for demand in group:
            after, before = _after_key(existing, demand.env_order, demand.subject)
            edit = InsertKey(path, demand.subject, demand.value or "", after=after, before=before)
            placement = demand.placement + (
                f"; after {after}, as in the benchmark's export order"
                if after
                else f"; before {before}, as in the benchmark's export order"
                if before
                else ""
            )
            planned.append(
                _planned(replace(demand, placement=placement), edit, recipes, demand.value)
            )
            position = (
                existing.index(after) + 1
                if after
                else (existing.index(before) if before else len(existing))
            )
            existing.insert(position, demand.subject)
    for path, group in appends.items():
        current = lookup(data, path)
        items = [token for demand in group for token in demand.items]
        if current is _MISSING:
            edit = EnsurePath(path, items)
        elif isinstance(current, list):
            edit = AppendItems(path, items)
        else:
            problems.append(f"{format_path(path)} is not a list; flags not added")
            continue
        for demand in group:
            planned.append(_planned(demand, edit, recipes, " ".join(demand.items)))
    removals = sorted((d for d in demands if d.op == "remove"), key=lambda d: (d.path, -d.index))
    for demand in removals:
        edit = RemoveItems(demand.path, demand.index, demand.count)
        planned.append(_planned(demand, edit, recipes, None))
    return planned, problems


def _unique_edits(planned: Sequence[PlannedEdit]) -> list[Edit]:
    """Each editor edit once (several planned entries share one AppendItems/EnsurePath)."""
    seen: list[Edit] = []
    for item in planned:
        if not any(item.edit is other for other in seen):
            seen.append(item.edit)
    return seen


def verified_edit(recipe: Recipe, recipes: RecipesRepo, hw: str) -> Edit | None:
    meta_hw = lookup(recipe.data, ("meta", "hardware"))
    if isinstance(meta_hw, Mapping):
        if meta_hw.get(hw) == "verified":
            return None
        if hw in meta_hw:
            return SetScalar(("meta", "hardware", hw), "verified")
        order = list(recipes.hardware)
        present = [h for h in order if h in meta_hw]
        position = order.index(hw) if hw in order else len(order)
        after = next((h for h in reversed(order[:position]) if h in meta_hw), None)
        before = next((h for h in order[position + 1 :] if h in meta_hw), None)
        if after is None and before is None and present:
            after = present[-1]
        return InsertKey(
            ("meta", "hardware"),
            hw,
            "verified",
            after=after,
            before=before if after is None else None,
        )
    return EnsurePath(("meta", "hardware", hw), "verified")


# ------------------------------------------------------------------------------ checks


def repeated_flags(argv: Sequence[str]) -> list[str]:
    """Flags the command spells more than once (``--x`` and ``--x=…`` count together)."""
    counts: dict[str, int] = {}
    for token in argv[3:] if tuple(argv[:2]) == ("vllm", "serve") else argv:
        if token.startswith("--"):
            name = token.split("=", 1)[0].replace("_", "-")
            counts[name] = counts.get(name, 0) + 1
    return [name for name, count in counts.items() if count > 1]


def run_image(launcher_image: str | None, image: str | None) -> str | None:
    """The image a job ran, as an image reference: the launcher's ``--container-image`` may
    be a pyxis squash file named after the image with ``/ : @ #`` turned into ``+``
    (``…/vllm+vllm-openai-rocm+nightly-eed1….sqsh``); it stands for ``image`` when the name
    is exactly that encoding."""
    if launcher_image is None or not launcher_image.endswith(".sqsh") or image is None:
        return launcher_image
    name = launcher_image.rsplit("/", 1)[-1].removesuffix(".sqsh")
    return image if name == re.sub(r"[/:@#]", "+", image) else launcher_image


def serving_match(
    evidence: Evidence, rendering: Rendering, profile: Profile, recipes: RecipesRepo, rules: Rules
) -> tuple[bool, str]:
    """Does the cited job's launch line (argv + image) match the edited rendering? And the
    sentence that says so, listing what was compared (trusted Markdown; values escaped)."""
    assert evidence.launch is not None
    ran = run_image(evidence.context.image, rendering.image)
    bench = LaunchSide(argv=tuple(evidence.launch.argv), env={}, image=ran)
    report = diff_launch(
        bench,
        recipe_side(rendering),
        hardware=profile.hardware,
        rules=rules,
        taxonomy_vram=taxonomy_vram(recipes),
        recipe_min_version=recipe_min_version(recipes, profile),
    )
    diffs = [d for d in report.diffs if d.kind in ("flag", "image")]
    if ran is None:
        diffs = [d for d in diffs if d.kind != "image"]
    bad = [d for d in diffs if d.verdict in DRIFT or d.verdict is Verdict.UNKNOWN]
    if bad:
        reasons = "; ".join(md.text(d.reason) for d in bad[:5])
        return False, f"Its launch line does not match the serving subset above: {reasons}."
    shown: list[str] = []
    if ran is not None:
        shown.append("same image")
    shown.append(md.text(hw_label(recipes, profile.hardware)))
    more = 0
    equivalent: list[str] = []
    front: list[str] = []
    for diff in diffs:
        if diff.key == "model" or diff.kind == "image":
            continue
        if diff.key == "parallel.tensor_parallel_size" and diff.verdict is Verdict.SAME:
            shown.append(f"TP{md.text(str(diff.recipe_value))}")
        elif diff.verdict is Verdict.SAME and diff.category == "engine":
            if isinstance(diff.recipe_value, Mapping):
                shown.append(f"{md.code(diff.flag)} (equal as data)")
            else:
                shown.append(md.code(" ".join(diff.recipe_tokens)))
        elif diff.verdict is Verdict.SAME:
            more += 1
        elif diff.verdict is Verdict.EQUIVALENT:
            equivalent.append(md.code(" ".join(diff.bench_tokens or diff.recipe_tokens)))
        elif diff.verdict in (Verdict.FRONT_END_ONLY, Verdict.BENCHMARK_ONLY):
            front.append(md.code(diff.flag))
    text = "Its launch line matches the serving subset above — " + ", ".join(shown)
    if more:
        text += f", and {more} more flag{'s' if more > 1 else ''} equal"
    text += "."
    if equivalent:
        verb = "is" if len(equivalent) == 1 else "are"
        text += f" {', '.join(equivalent)} {verb} vLLM's default here."
    if front:
        verb = "is" if len(front) == 1 else "are"
        text += f" {', '.join(front)} {verb} front-end or benchmark-only."
    return True, text


def _verification(
    target: Target, rendering: Rendering, recipes: RecipesRepo, rules: Rules, recipe: Recipe
) -> Verification:
    hw = target.profile.hardware
    current = as_dict(as_dict(recipe.data.get("meta")).get("hardware")).get(hw)
    if target.evidence is None or target.evidence.launch is None:
        reason = target.evidence_note or "no workflow-run evidence was given"
        if current == "verified":
            return Verification(hw, "already", f"meta.hardware.{hw} is already verified; {reason}")
        return Verification(hw, "no-evidence", reason)
    matched, sentence = serving_match(target.evidence, rendering, target.profile, recipes, rules)
    if not matched:
        return Verification(hw, "not-verified", sentence, target.evidence, sentence)
    if current == "verified":
        return Verification(
            hw, "already", f"meta.hardware.{hw} is already verified", target.evidence, sentence
        )
    if not rules.policy.mark_verified:
        return Verification(
            hw, "policy-off", "rules/policy.yaml mark_verified is false", target.evidence, sentence
        )
    item = target.evidence
    reason = (
        f"run {item.run_id} (attempt {item.attempt}), job {item.job_name!r}: the eval passed, "
        "its launch line is the extracted one and matches the edited rendering, and the "
        "script blob is the one the PR ships"
    )
    return Verification(hw, "verified", reason, item, sentence)


# ------------------------------------------------------------------------------ the plan


def plan_recipe(
    recipes: RecipesRepo, source: FileSource, rules: Rules, targets: Sequence[Target]
) -> AlignmentPlan:
    """The plan for one recipe file (all ``targets`` share ``recipe_path``)."""
    assert targets, "a plan needs at least one target"
    path = targets[0].profile.recipe_path
    recipe = recipes.by_path[path]
    planner = _Planner(recipes, recipe, rules)
    for target in targets:
        for comparison in target.representatives:
            planner.collect(target, comparison)
    out = planner.out
    demands, conflicts = _resolve_conflicts(out.demands)
    planned, problems = build_edits(_merge(demands), recipe, recipes)
    skipped = [*out.skipped, *conflicts, *problems]
    base = AlignmentPlan(
        recipe_path=path,
        targets=tuple(targets),
        edits=(),
        defaults=tuple(_dedupe_notes(out.defaults)),
        recipe_only=tuple(_dedupe_notes(out.recipe_only)),
        benchmark_only=tuple(_dedupe_notes(out.benchmark_only)),
        front_end=tuple(_dedupe_notes(out.front_end)),
        unknown=tuple(_dedupe_notes(out.unknown)),
        skipped=tuple(dict.fromkeys(skipped)),
        notes=tuple(dict.fromkeys(out.notes)),
        verifications=(),
    )
    text = source.read_bytes(path)
    try:
        result = apply_edits(text, _unique_edits(planned), file=path)
    except EditError as err:
        return replace(base, edits=tuple(planned), failure=f"the edit cannot be applied: {err}")
    try:
        after = _edited_repo(source, path, result.text)
        renderings = [render(after, t.profile.request()) for t in targets]
    except RecipeSyncError as err:
        reason = f"the edited recipe does not render: {err}"
        return replace(base, edits=tuple(planned), failure=reason, result=result)
    failure = _invariants(after, rules, targets, renderings, planned)
    if failure is not None:
        return replace(base, edits=tuple(planned), failure=failure, result=result, after=after)
    verifications = _verifications(targets, renderings, recipes, rules, recipe)
    for verification in verifications:
        if verification.state != "verified":
            continue
        edit = verified_edit(recipe, recipes, verification.hardware)
        if edit is None:
            continue
        planned.append(
            PlannedEdit(
                edit=edit,
                kind="verified",
                subject=verification.hardware,
                before=_text_value(
                    as_dict(as_dict(recipe.data.get("meta")).get("hardware")).get(
                        verification.hardware
                    )
                ),
                after="verified",
                node=f"meta.hardware.{verification.hardware}",
                scope=scope_of(("meta",), recipes),
                reason=verification.reason,
                placement="rules/policy.yaml mark_verified",
                targets=tuple(
                    t.profile.label for t in targets if t.profile.hardware == verification.hardware
                ),
            )
        )
    if any(p.kind == "verified" for p in planned):
        result = apply_edits(text, _unique_edits(planned), file=path)
        after = _edited_repo(source, path, result.text)
    return replace(
        base,
        edits=tuple(planned),
        verifications=tuple(verifications),
        result=result,
        after=after,
    )


def _dedupe_notes(notes: Sequence[FlagNote]) -> list[FlagNote]:
    seen: dict[tuple[str, str, str | None, str | None], FlagNote] = {}
    for note in notes:
        seen.setdefault((note.kind, note.subject, note.bench, note.recipe), note)
    return list(seen.values())


def _edited_repo(source: FileSource, path: str, text: str) -> RecipesRepo:
    return load_recipes(OverlaySource(source, {path: text.encode("utf-8")}))


def _invariants(
    after: RecipesRepo,
    rules: Rules,
    targets: Sequence[Target],
    renderings: Sequence[Rendering],
    planned: Sequence[PlannedEdit],
) -> str | None:
    """None when every target renders each flag once and no planned drift is left."""
    meant = {p.subject for p in planned}
    for target, rendering in zip(targets, renderings, strict=True):
        label = target.profile.label
        for command in rendering.commands:
            repeated = repeated_flags(command.argv)
            if repeated:
                return f"after the edit, {label} renders {', '.join(repeated)} more than once"
        for representative in target.representatives:
            again = compare(after, rules, representative.launch, target.profile)
            left = [d for d in again.drift if d.flag in meant]
            if left:
                reasons = "; ".join(d.reason for d in left)
                return f"after the edit, {label} still differs: {reasons}"
    return None


def _verifications(
    targets: Sequence[Target],
    renderings: Sequence[Rendering],
    recipes: RecipesRepo,
    rules: Rules,
    recipe: Recipe,
) -> list[Verification]:
    """One per hardware: the first target of that hardware with evidence decides."""
    chosen: dict[str, Verification] = {}
    for target, rendering in zip(targets, renderings, strict=True):
        found = _verification(target, rendering, recipes, rules, recipe)
        hw = target.profile.hardware
        if hw not in chosen or (chosen[hw].evidence is None and found.evidence is not None):
            chosen[hw] = found
    return list(chosen.values())
