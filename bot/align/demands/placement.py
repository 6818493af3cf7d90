"""Placement and scope of a demand (docs/alignment.md §5, §5a): which layer a new flag or
variable goes to, and who else draws from a node (narrowest scope)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.align.family import FamilyLanes, Setting
from bot.align.model import Target
from bot.align.nodes import (
    MISSING,
    lookup,
    recipe_renderings,
)
from bot.align.profile import Profile
from bot.recipes import RecipesRepo
from bot.recipes.edit import NodePath, format_path
from bot.recipes.jsvalues import as_dict
from bot.recipes.layers import gen_block
from bot.recipes.render import RenderingKey
from bot.recipes.repo import HardwareProfile, Recipe
from bot.rules import Rules
from bot.vllm import canonical_flag


class Placement:
    """Where a demand goes: the layer the rules give, narrowed to the benchmarked hardware
    when renderings nobody benchmarked draw from a node (by the API renderings' provenance)."""

    def __init__(
        self,
        recipes: RecipesRepo,
        recipe: Recipe,
        rules: Rules,
        targets: Sequence[Target] = (),
        family: FamilyLanes | None = None,
    ) -> None:
        self.recipes = recipes
        self.recipe = recipe
        self.rules = rules
        self.targets = tuple(targets)
        self.family = family
        self._drawn: list[tuple[RenderingKey, frozenset[str]]] | None = None
        self._later: frozenset[str] | None = None  # config flags spelled after the variant
        # the answers, by question: a plan asks about the same few nodes many times
        self._users: dict[tuple[str, bool], list[RenderingKey]] = {}
        self._reach: dict[NodePath, list[RenderingKey]] = {}

    def gen_key(self, profile: Profile, hw: HardwareProfile) -> NodePath:
        """The generation layer that applies to ``profile``: the strategy's own block
        replaces the recipe's (layers.py A7/E9), so a new node goes where it takes effect."""
        so = as_dict(as_dict(self.recipe.data.get("strategy_overrides")).get(profile.strategy))
        chosen = gen_block(so.get("hardware_overrides"), hw)
        if chosen is not None:
            return ("strategy_overrides", profile.strategy, "hardware_overrides", chosen[0])
        block = gen_block(self.recipe.data.get("hardware_overrides"), hw)
        return ("hardware_overrides", block[0] if block is not None else hw.generation)

    def container(self, placement: str, profile: Profile, kind: str, subject: str = "") -> NodePath:
        hw = self.recipes.hardware[profile.hardware]
        if placement == "generation":
            return (*self.gen_key(profile, hw), kind)
        if placement == "hardware":
            return self.variant_scope(profile, kind, subject)[0]
        if placement == "strategy":
            return ("strategy_overrides", profile.strategy, kind)
        return ("strategy_overrides", profile.strategy, "hardware_overrides", hw.id, kind)

    def flag_placement(self, flag: str) -> tuple[str, str]:
        for rule in self.rules.flags.tuning:
            if rule.flag == flag:
                return rule.placement, f"rules/flags.yaml tuning ({rule.reason})"
        placement = self.rules.flags.new_flag_placement
        return placement, "rules/flags.yaml new_flag_placement"

    def verified(self) -> set[RenderingKey]:
        return {(t.profile.variant, t.profile.hardware, t.profile.strategy) for t in self.targets}

    def unverified_users(self, node: str, container: bool = False) -> list[RenderingKey]:
        """Renderings drawing from ``node`` (``container``: from anything under it) that no
        benchmarked point of this PR ran."""
        found = self._users.get((node, container))
        if found is not None:
            return list(found)
        verified = self.verified()
        below = (node + ".", node + "[")
        users = {
            ident
            for ident, drawn in self._drawn_by()
            if ident not in verified
            and (node in drawn or (container and any(p.startswith(below) for p in drawn)))
        }
        self._users[(node, container)] = found = sorted(users)
        return list(found)

    def _drawn_by(self) -> list[tuple[RenderingKey, frozenset[str]]]:
        """Every rendering of the recipe (with the PR's features where a target has them) and
        the nodes it draws from, rendered once per plan."""
        if self._drawn is None:
            requests = list(
                {
                    t.profile.key: t.profile.coordinates for t in self.targets if t.profile.features
                }.values()
            )
            self._drawn = recipe_renderings(self.recipes, self.recipe.path, requests)
        return self._drawn

    def others(self, path: NodePath, node: str, profile: Profile) -> list[RenderingKey]:
        """Renderings other than the benchmarked ones drawing from ``node`` (at ``path``);
        none when the node is scoped to the benchmarked hardware already."""
        return [] if self.exact(path, profile) else self.unverified_users(node)

    def narrowed(
        self,
        container: NodePath,
        placement: str,
        why: str,
        target: Target,
        subject: str = "",
        setting: Setting | None = None,
    ) -> tuple[NodePath, str, str, str]:
        """A new flag or variable goes where the rules place it, unless renderings nobody
        benchmarked draw from that layer: then where maintainers put one GPU's settings, the
        benchmarked variant x GPU (every strategy of that variant on that GPU takes it), or
        the variant itself when it runs on that GPU only. A variant this plan adds takes
        the settings of its lane itself.

        A ``setting`` the rules place at the generation stays there when every lane of the
        recipe on that hardware family runs it alike and every variant the block serves has
        such a lane (:meth:`by_family`): its domain is the family, not the GPU (maintainers
        put such settings at ``hardware_overrides.amd`` / ``…blackwell``).

        The fourth value says, for a reviewer, why not the layer the rules named when the
        setting was narrowed ("" otherwise): the family's disagreement, else who else draws
        from that layer."""
        if target.new_variant:
            narrow, placement = self.variant_scope(target.profile, str(container[-1]), subject)
            why += "; the variant is new: the lane's settings are its own"
            return narrow, placement, why, ""
        if self.exact(container, target.profile):
            return container, placement, why, ""
        parent = container[:-1]
        users = self.unverified_users(format_path(parent), container=True)
        if not users and lookup(self.recipe.data, parent) is not MISSING:
            return container, placement, why, ""
        if not users:
            # a new layer: which renderings it would reach is decided by its path
            users = [u for u in self.reach(parent) if u not in self.verified()]
            if not users:
                return container, placement, why, ""
        family = ""
        if placement == "generation" and setting is not None:
            agreed, family = self.by_family(target, setting, container)
            if agreed:
                return container, placement, f"{why}; {family}", ""
            if family:
                why += f"; {family}"
        narrow, placement = self.variant_scope(target.profile, str(container[-1]), subject)
        scope = self.scope_note(users)
        why += f"; not at {format_path(parent)}: it is {scope}"
        return narrow, placement, why, family or f"{format_path(parent)} is {scope}"

    def by_family(self, target: Target, setting: Setting, container: NodePath) -> tuple[bool, str]:
        """Does every lane of the recipe on the target's hardware family run ``setting``
        alike, and does every variant drawing from ``container``'s layer have such a lane
        (the family is a domain of GPUs, not of checkpoints)? With the note that says so or
        names what does not ("" when there are no family lanes to ask)."""
        if self.family is None:
            return False, ""
        generation = self.recipes.hardware[target.profile.hardware].generation
        parent = container[:-1]
        drawing = {ident[0] for ident in self.reach(parent)}
        drawing |= {ident[0] for ident in self.unverified_users(format_path(parent), True)}
        agreement = self.family.agreement(self.recipe.path, generation, setting, frozenset(drawing))
        return agreement.agreed, agreement.note(generation, format_path(parent))

    def variant_scope(self, profile: Profile, kind: str, subject: str = "") -> tuple[NodePath, str]:
        """The benchmarked variant x GPU, or the variant when it is offered on that GPU
        only (``supported_hardware: [mi355x]``): the recipes history places one GPU's
        kernel and serving settings there, not per strategy (issue #24). A flag a later
        layer of the recipe spells (a strategy, a generation block, a feature) stays at the
        benchmarked strategy x GPU: there the later value would win, and a dotted field
        beside a whole JSON of the same config makes vLLM drop the JSON."""
        if subject.startswith("-") and self.spelled_later(subject):
            path = (
                "strategy_overrides", profile.strategy, "hardware_overrides", profile.hardware,
                kind,
            )  # fmt: skip
            return path, "profile"
        variant = as_dict(as_dict(self.recipe.data.get("variants")).get(profile.variant))
        supported = variant.get("supported_hardware")
        if profile.variant != "default" and supported == [profile.hardware]:
            return ("variants", profile.variant, kind), "variant"
        if any(t.new_variant and t.profile.variant == profile.variant for t in self.targets):
            # a variant this plan adds exists for the checkpoint the lane ran: its settings
            # are the variant's own (MiniMax-M3 nvfp4 #605, Kimi-K2.5 mxfp4 #650)
            return ("variants", profile.variant, kind), "variant"
        path = ("variants", profile.variant, "hardware_overrides", profile.hardware, kind)
        return path, "hardware"

    def spelled_later(self, flag: str) -> bool:
        """Does an args list after the variant layers (strategy overrides, generation
        blocks, features) spell ``flag`` or its config (``--x`` for ``--x.key``)?"""
        if self._later is None:
            found: set[str] = set()
            for top in ("strategy_overrides", "hardware_overrides", "features"):
                _flags_under(self.recipe.data.get(top), found)
            self._later = frozenset(found)
        return flag.split(".", 1)[0] in self._later

    def reach(self, parent: NodePath) -> list[RenderingKey]:
        """Renderings a node at ``parent`` would apply to, by its path (hardware_overrides
        keys match the hardware id, generation or brand; strategy_overrides the strategy)."""
        found = self._reach.get(parent)
        if found is not None:
            return list(found)
        parts = [str(p) for p in parent]
        out: list[RenderingKey] = []
        for ident in dict.fromkeys(ident for ident, _ in self._drawn_by()):
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
        self._reach[parent] = found = sorted(set(out))
        return list(found)

    @staticmethod
    def exact(path: NodePath, profile: Profile) -> bool:
        """A node already scoped to the benchmarked variant x hardware or strategy x hardware."""
        parts = [str(p) for p in path]
        return parts[:4] in (
            ["variants", profile.variant, "hardware_overrides", profile.hardware],
            ["strategy_overrides", profile.strategy, "hardware_overrides", profile.hardware],
        )

    def scope_note(self, users: Sequence[RenderingKey]) -> str:
        """``also drawn by 24 renderings no benchmarked point ran (mi300x, mi325x, …)``."""
        hardware = list(dict.fromkeys(hw for _, hw, _ in users))
        return (
            f"also drawn by {len(users)} rendering{'s' if len(users) != 1 else ''} no "
            f"benchmarked point ran (on {', '.join(hardware)})"
        )

    def override_container(self, unit_path: NodePath, profile: Profile, kind: str) -> NodePath:
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


def _flags_under(node: object, found: set[str]) -> None:
    """The canonical config flag of every ``--x`` token in the args lists under ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("args", "extra_args", "vllm_args") and isinstance(value, list):
                found.update(
                    canonical_flag(str(t).split("=", 1)[0]).split(".", 1)[0]
                    for t in value
                    if str(t).startswith("--")
                )
            else:
                _flags_under(value, found)
    elif isinstance(node, list):
        for value in node:
            _flags_under(value, found)
