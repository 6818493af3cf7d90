"""What the benchmark runs for one recipe across a hardware family (issue #31, placement by
the setting's domain): a setting every lane of the family runs with one value belongs at
the family's layer (``hardware_overrides.amd``, ``…blackwell``); one the family's lanes run
differently stays with the benchmarked GPU.

The family is the recipe's generation key (docs/recipe-rendering.md: AMD's generation is
``amd``, NVIDIA's ``hopper``, ``blackwell``, …). Its lanes are every single-node vLLM key of
the benchmark head that serves the recipe (any variant) on a GPU of that generation, one
launch line per lane topology (kernel settings do not follow the concurrency sweep). Which
keys those are comes from the master configs alone; a key's lines are extracted when a
question first needs them, and kept for the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.align.delta import Subject, Topology, line_subjects
from bot.align.profile import find_recipe
from bot.benchmarks import BenchRepo, extract, points
from bot.errors import RecipeSyncError
from bot.recipes import RecipesRepo
from bot.rules import Rules
from bot.shell import JobTooLarge


@dataclass(frozen=True)
class FamilyLane:
    key: str
    hardware: str
    variant: str  # the recipe variant the lane's checkpoint maps to
    settings: Mapping[Subject, str]


@dataclass(frozen=True)
class Setting:
    """What a demand sets, as the benchmark's pairs: an env variable, or a flag with every
    field of it the lane runs (``--attention-config`` covers ``--attention-config.*``; a
    dotted field stands for itself)."""

    name: str
    kind: str  # "env" | "flag"
    pairs: Mapping[Subject, str]

    def covers(self, subject: Subject) -> bool:
        kind, name = subject
        if kind != self.kind:
            return False
        return name == self.name or (kind == "flag" and name.startswith(self.name + "."))

    def of(self, lane: FamilyLane) -> dict[Subject, str]:
        return {s: v for s, v in lane.settings.items() if self.covers(s)}

    def words(self, pairs: Mapping[Subject, str]) -> str:
        if not pairs:
            return f"no {self.name}"
        return ", ".join(f"{name} {value}".rstrip() for (_, name), value in sorted(pairs.items()))

    @classmethod
    def env(cls, name: str, value: str) -> Setting:
        return cls(name, "env", {("env", name): value})


@dataclass(frozen=True)
class Agreement:
    """Whether the family's lanes run a setting alike, with the lanes that say so. Asked
    lane by lane: it stops at the first lane that differs (``lanes`` then ends with it)."""

    setting: Setting
    lanes: tuple[FamilyLane, ...]
    differing: tuple[FamilyLane, ...] = ()
    # variants drawing from the family's block that no lane of the family runs
    uncovered: tuple[str, ...] = ()

    @property
    def agreed(self) -> bool:
        return (
            bool(self.lanes)
            and bool(self.setting.pairs)
            and not self.differing
            and not self.uncovered
        )

    def note(self, generation: str, block: str) -> str:
        """Why the setting does or does not go to the family's ``block`` ("" when no lane of
        the family was there to ask)."""
        generation = generation_words(generation)
        if self.uncovered:
            return (
                f"{block} also serves variant {', '.join(self.uncovered)}, which no "
                f"{generation} lane runs"
            )
        if self.differing:
            other = self.differing[0]
            return (
                f"the {generation} lanes differ: {other.key} on {other.hardware} runs "
                + self.setting.words(self.setting.of(other))
            )
        if not self.lanes:
            return ""
        gpus = ", ".join(dict.fromkeys(lane.hardware for lane in self.lanes))
        count = len(self.lanes)
        return (
            f"every {generation} lane of the recipe in the benchmark runs "
            f"{self.setting.words(self.setting.pairs)} "
            f"({count} lane{'s' if count != 1 else ''} on {gpus})"
        )


def generation_words(generation: str) -> str:
    """A generation key as a reader writes it: ``amd`` → AMD (a brand's acronym),
    ``blackwell`` → Blackwell."""
    return generation.upper() if len(generation) <= 3 else generation.capitalize()


class FamilyLanes:
    """The benchmark head's lanes of each (recipe, generation): which keys (from the master
    configs alone), and each key's launch lines when a question first needs them."""

    def __init__(self, head: BenchRepo, recipes: RecipesRepo, rules: Rules) -> None:
        self.head = head
        self.recipes = recipes
        self.rules = rules
        self._keys: dict[tuple[str, str], tuple[tuple[str, str, str], ...]] = {}
        self._lines: dict[str, tuple[FamilyLane, ...]] = {}

    def agreement(
        self,
        recipe_path: str,
        generation: str,
        setting: Setting,
        drawing: frozenset[str] = frozenset(),
    ) -> Agreement:
        """Do the family's lanes run ``setting`` alike, and has every variant in
        ``drawing`` (those the family's block would reach) a lane of the family? The
        variants are known from the master configs, so a block serving a checkpoint no lane
        runs is answered without extracting anything; then lanes are extracted key by key
        until one differs."""
        keys = self.keys(recipe_path, generation)
        if not keys:
            return Agreement(setting, ())
        uncovered = tuple(sorted(drawing - {variant for _, _, variant in keys}))
        if uncovered:
            return Agreement(setting, (), uncovered=uncovered)
        wanted = dict(setting.pairs)
        lanes: list[FamilyLane] = []
        for key, hardware, variant in keys:
            for lane in self.lines(key, hardware, variant):
                lanes.append(lane)
                if setting.of(lane) != wanted:
                    return Agreement(setting, tuple(lanes), (lane,))
        return Agreement(setting, tuple(lanes))

    def keys(self, recipe_path: str, generation: str) -> tuple[tuple[str, str, str], ...]:
        """(key, hardware id, variant) of every single-node vLLM key serving the recipe on
        that generation."""
        found = self._keys.get((recipe_path, generation))
        if found is None:
            served = (
                (key, self._served(key, recipe_path, generation)) for key in self.head.configs
            )
            found = self._keys[(recipe_path, generation)] = tuple(
                (key, *where) for key, where in sorted(served, key=lambda kv: kv[0]) if where
            )
        return found

    def lines(self, key: str, hardware: str, variant: str) -> tuple[FamilyLane, ...]:
        """One launched line per lane topology of ``key`` (its throughput arm)."""
        found = self._lines.get(key)
        if found is None:
            found = self._lines[key] = tuple(self._extract(key, hardware, variant))
        return found

    def _extract(self, key: str, hardware: str, variant: str) -> list[FamilyLane]:
        out: list[FamilyLane] = []
        try:
            pairs = points(self.head, key)
        except RecipeSyncError:
            return out
        seen: set[Topology] = set()
        for point, arm in pairs:
            topology = Topology.of(point, arm)
            if arm != "throughput" or topology in seen:
                continue
            seen.add(topology)
            try:
                line = extract(self.head, key, point, arm)
            except JobTooLarge:
                raise
            except RecipeSyncError:
                continue
            if line.status == "launched":
                out.append(FamilyLane(key, hardware, variant, line_subjects(line)))
        return out

    def _served(self, key: str, recipe_path: str, generation: str) -> tuple[str, str] | None:
        """(recipes hardware id, variant) ``key`` runs when it is a single-node vLLM key of
        the recipe on that generation, else None."""
        try:
            entry = self.head.entry(key)
        except RecipeSyncError:
            return None
        if entry.multinode or entry.disagg or entry.framework != "vllm":
            return None
        hardware = self.rules.hardware.hardware_for_runner(entry.runner)
        profile = self.recipes.hardware.get(hardware) if hardware is not None else None
        if profile is None or profile.generation != generation:
            return None
        found = find_recipe(self.recipes, self.rules, entry.model, entry.precision)
        if isinstance(found, tuple) and found[0].path == recipe_path:
            return profile.id, found[1]
        return None
