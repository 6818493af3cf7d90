"""Demands → editor edits: conflicts, merging, order, and where new keys go."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace

from bot.align.demands.model import (
    AppendDemand,
    Demand,
    EnvDemand,
    FeatureDemand,
    KeepDemand,
    RemoveDemand,
    SetDemand,
)
from bot.align.model import PlannedEdit
from bot.align.nodes import MISSING, lookup, scope_of
from bot.argv import without_flags
from bot.recipes import RecipesRepo
from bot.recipes.edit import (
    AppendItems,
    Edit,
    EnsurePath,
    InsertKey,
    NodePath,
    RemoveItems,
    SetScalar,
    YamlValue,
    format_path,
)
from bot.recipes.repo import Recipe
from bot.vllm import canonical_flag


def _shown(value: str | None) -> str:
    """A demanded value as one readable code span: an args list as the tokens it renders
    (``--x {"a":1}``), JSON on one line; backticks cannot end the span early."""
    if value is None:
        return "(removed)"
    shown = value
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if isinstance(parsed, list) and all(isinstance(item, str) for item in parsed):
        shown = " ".join(_compact(item) for item in parsed)
    return " ".join(shown.replace("`", "'").split())


def _compact(token: str) -> str:
    try:
        data = json.loads(token)
    except ValueError:
        return token
    return json.dumps(data, separators=(",", ":")) if isinstance(data, dict | list) else token


def resolve_conflicts(demands: Sequence[Demand]) -> tuple[list[Demand], list[str]]:
    """Two points demanding different values of one node: that node is not edited."""
    by_node: dict[str, list[Demand]] = {}
    for demand in demands:
        by_node.setdefault(demand.node, []).append(demand)
    kept: list[Demand] = []
    conflicts: list[str] = []
    for node, group in by_node.items():
        values = list(dict.fromkeys(d.value for d in group))
        wants_change = any(not d.keep for d in group)
        if len(values) > 1 and wants_change:
            who = "; ".join(
                f"{d.target} {'keeps' if d.keep else 'wants'} `{_shown(d.value)}`"
                for d in {(d.target, d.value, d.keep): d for d in group}.values()
            )
            conflicts.append(
                f"conflict at {node.split('::')[0]} ({group[0].subject}): {who}; not edited"
            )
            continue
        kept.extend(d for d in group if not isinstance(d, KeepDemand))
    return kept, conflicts


def merge(demands: Sequence[Demand]) -> list[Demand]:
    """One demand per node (several points may demand the same change)."""
    merged: dict[str, Demand] = {}
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


def _planned(demand: Demand, edit: Edit, recipes: RecipesRepo, after: str | None) -> PlannedEdit:
    node = demand.node.split("::")[0]
    if isinstance(demand, EnvDemand):
        node = format_path((*demand.path, demand.subject))
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
        shadows=demand.shadows,
        wider=demand.wider,
    )


def build_edits(
    demands: Sequence[Demand], recipe: Recipe, recipes: RecipesRepo
) -> tuple[list[PlannedEdit], list[str]]:
    """Edits for the demands, in an order the editor can apply (indices stay valid)."""
    data = recipe.data
    planned: list[PlannedEdit] = []
    problems: list[str] = []
    for demand in demands:
        if isinstance(demand, SetDemand):
            planned.append(_set(demand, recipes))
    appends: dict[NodePath, list[AppendDemand]] = {}
    envs: dict[NodePath, list[EnvDemand]] = {}
    features: dict[NodePath, list[FeatureDemand]] = {}
    for demand in demands:
        if isinstance(demand, AppendDemand):
            appends.setdefault(demand.path, []).append(demand)
        elif isinstance(demand, EnvDemand):
            envs.setdefault(demand.path, []).append(demand)
        elif isinstance(demand, FeatureDemand):
            features.setdefault(demand.path, []).append(demand)
    for path, appended in appends.items():
        current = lookup(data, path)
        items = [token for demand in appended for token in demand.items]
        if current is MISSING:
            edit: Edit = EnsurePath(path, items)
        elif isinstance(current, list):
            edit = AppendItems(path, items)
        else:
            problems.append(f"{format_path(path)} is not a list; flags not added")
            continue
        for demand in appended:
            planned.append(_planned(demand, edit, recipes, demand.value))
    for path, group in envs.items():
        current = lookup(data, path)
        if current is not MISSING and not isinstance(current, Mapping):
            problems.append(f"{format_path(path)} is not a mapping; env not added")
            continue
        existing = list(current) if isinstance(current, Mapping) else []
        if current is MISSING:
            mapping = {d.subject: d.value for d in group}
            edit = EnsurePath(path, mapping)
            for demand in group:
                planned.append(_planned(demand, edit, recipes, demand.value))
            continue
        for demand in group:
            after, before = _after_key(existing, demand.env_order, demand.subject)
            edit = InsertKey(path, demand.subject, demand.value, after=after, before=before)
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
    # a new feature is written whole, once, with every generation's override: profiles on
    # NVIDIA and AMD demanding it are one block (two blocks would both create the feature)
    new_features: dict[str, list[FeatureDemand]] = {}
    for path, wanted in features.items():
        if wanted[0].new:
            new_features.setdefault(wanted[0].feature, []).extend(wanted)
            continue
        try:
            planned.extend(_feature_edits(path, wanted, data, recipes))
        except _NotEdited as err:
            problems.append(str(err))
    for wanted in new_features.values():
        planned.extend(_new_feature_edits(wanted, data, recipes))
    removals = sorted(
        (d for d in demands if isinstance(d, RemoveDemand)), key=lambda d: (d.path, -d.index)
    )
    for removal in removals:
        edit = RemoveItems(removal.path, removal.index, removal.count)
        planned.append(_planned(removal, edit, recipes, None))
    return planned, problems


def _set(demand: SetDemand, recipes: RecipesRepo) -> PlannedEdit:
    """A scalar change; a new override node (``create``) is written whole."""
    value: object = int(demand.value) if demand.kind == "tp" else demand.value
    if not demand.create:
        return _planned(demand, SetScalar(demand.path, value), recipes, demand.value)  # type: ignore[arg-type]
    if demand.value.startswith("["):
        value = json.loads(demand.value)  # a replaced args list (feature hardware override)
    edit = EnsurePath(demand.path, value)  # type: ignore[arg-type]
    return _planned(demand, edit, recipes, demand.value)


class _NotEdited(Exception):
    """A demand the editor cannot express as one edit: reported, not applied."""


def _override_items(wanted: Sequence[FeatureDemand]) -> tuple[list[str], list[str]]:
    """(the override list, the tokens added) of one generation's demands: what the feature
    renders there now, without the demanded flags, then the benchmark's tokens."""
    new = [t for d in wanted for t in d.items]
    flags = {canonical_flag(d.items[0]) for d in wanted}  # any spelling of them goes
    kept = without_flags([str(t) for t in wanted[0].base], flags, name=canonical_flag)
    return [*kept, *new], new


def _new_feature_edits(
    wanted: Sequence[FeatureDemand], data: Mapping[str, object], recipes: RecipesRepo
) -> list[PlannedEdit]:
    """The new feature with an override per demanded generation, and its name in
    ``opt_in_features``."""
    first = wanted[0]
    by_hardware: dict[str, list[FeatureDemand]] = {}
    for demand in wanted:
        by_hardware.setdefault(demand.hardware, []).append(demand)
    overrides: dict[str, YamlValue] = {
        hw: {"args": _override_items(group)[0]} for hw, group in by_hardware.items()
    }
    block: dict[str, YamlValue] = {
        "description": first.description,
        "hardware_overrides": overrides,
    }
    edit: Edit = EnsurePath(("features", first.feature), block)
    planned = [_planned(demand, edit, recipes, demand.value) for demand in wanted]
    opt_in = lookup(data, ("opt_in_features",))
    if isinstance(opt_in, list) and first.feature in opt_in:
        return planned
    optin: Edit = (
        AppendItems(("opt_in_features",), [first.feature])
        if isinstance(opt_in, list)
        else EnsurePath(("opt_in_features",), [first.feature])
    )
    planned.append(
        PlannedEdit(
            edit=optin,
            kind="flag-new",
            subject=first.feature,
            before=None,
            after=first.feature,
            node="opt_in_features",
            scope="recipe metadata (opt-in: no default rendering changes)",
            reason=f"{first.feature} is an opt-in workload feature",
            placement="opt_in_features: off unless a user picks it",
            targets=tuple(dict.fromkeys(d.target for d in wanted)),
        )
    )
    return planned


def _feature_edits(
    path: NodePath,
    wanted: Sequence[FeatureDemand],
    data: Mapping[str, object],
    recipes: RecipesRepo,
) -> list[PlannedEdit]:
    """The override list of an existing feature on one generation, as one hunk."""
    first = wanted[0]
    items, new = _override_items(wanted)
    current = lookup(data, path)
    if isinstance(current, list) and [str(t) for t in current] == list(first.base):
        if len(items) != len(first.base) + len(new):
            raise _NotEdited(f"{format_path(path)} already sets {first.subject}; not edited")
        edit: Edit = AppendItems(path, new)
    else:
        edit = EnsurePath(path, items)
    return [_planned(demand, edit, recipes, demand.value) for demand in wanted]


def unique_edits(planned: Sequence[PlannedEdit]) -> list[Edit]:
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
