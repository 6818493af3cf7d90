"""Demands of env differences (docs/alignment.md §5: the env rows)."""

from __future__ import annotations

from bot.align.compare import Comparison
from bot.align.demands.model import EnvDemand, SetDemand, flag_note
from bot.align.demands.rule import Rule
from bot.align.family import Setting
from bot.align.model import Target
from bot.align.nodes import (
    has_placeholder,
    in_recipe,
    lookup,
    text_value,
)
from bot.recipes.edit import NodePath, format_path, parse_path
from bot.vllm import FlagDiff, Verdict
from bot.vllm.pairs import canonical_value


class EnvDemands(Rule):
    """An env difference → a demand: the value where the recipe defines the variable,
    overridden for the benchmarked hardware, or a new serving variable at the rules' layer."""

    def collect(self, target: Target, comparison: Comparison, diff: FlagDiff, label: str) -> None:
        origin = next((o for o in comparison.command.env_origins if o.name == diff.key), None)
        node = origin.path if origin is not None else None
        if self.ledger.listed(diff, label, node):
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
                self.ledger.keep(path, "env", diff, label)
            return
        if self.ledger.carry(target, comparison, diff, label) is None:
            return
        wanted = diff.bench_value if isinstance(diff.bench_value, str) else None
        if wanted is None or has_placeholder(wanted):
            self.out.skipped.append(f"{label}: {name} has no statically known value; not copied")
            return
        order = tuple(comparison.launch.env)
        if path is not None:
            users = self.place.others(path, format_path(path), target.profile)
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
            container = self.place.override_container(path, target.profile, "extra_env")
            why = f"overrides {format_path(path)} for {target.profile.hardware} only: it is " + (
                self.place.scope_note(users)
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
        container, placement, why, wider = self.place.narrowed(
            self.place.container(ruled, target.profile, "extra_env"),
            ruled,
            why,
            target,
            setting=Setting.env(name, canonical_value(wanted)),
        )
        why = f"{placement} layer, {why}"
        if origin is not None:
            why += f"; overrides {origin.path}, defined outside the recipe"
        self._env_demand(container, name, wanted, diff, label, why, order, wider=wider)

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
        wider: str = "",
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
                wider=wider,
            )
        )
