"""What the benchmark runs for one recipe across a hardware family (issue #31, placement by
the setting's domain): a setting every lane of the family runs with one value belongs at
the family's layer (``hardware_overrides.amd``, ``…blackwell``); one the family's lanes run
differently stays with the benchmarked GPU.

The family is the recipe's generation key (docs/recipe-rendering.md: AMD's generation is
``amd``, NVIDIA's ``hopper``, ``blackwell``, …). Its lanes are every single-node vLLM key of
the benchmark head that serves the recipe (any variant) on a GPU of that generation, one
launch line per lane topology (kernel settings do not follow the concurrency sweep). They
are extracted on the first question about the family and kept for the run.
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
    settings: Mapping[Subject, str]


@dataclass(frozen=True)
class Agreement:
    """Whether the family's lanes run one value of a setting, with the lanes that say so."""

    agreed: bool
    lanes: tuple[FamilyLane, ...]
    differing: tuple[FamilyLane, ...] = ()

    def note(self, generation: str, subject: Subject, value: str) -> str:
        gpus = ", ".join(dict.fromkeys(lane.hardware for lane in self.lanes))
        if self.agreed:
            count = len(self.lanes)
            return (
                f"every {generation} lane of the recipe in the benchmark runs {subject[1]} "
                f"{value} ({count} lane{'s' if count != 1 else ''} on {gpus})"
            )
        other = self.differing[0]
        ran = other.settings.get(subject)
        return f"the {generation} lanes differ: {other.key} on {other.hardware} runs " + (
            f"{subject[1]} {ran}" if ran is not None else f"no {subject[1]}"
        )


class FamilyLanes:
    """The benchmark head's lanes of each (recipe, generation), extracted on demand."""

    def __init__(self, head: BenchRepo, recipes: RecipesRepo, rules: Rules) -> None:
        self.head = head
        self.recipes = recipes
        self.rules = rules
        self._lanes: dict[tuple[str, str], tuple[FamilyLane, ...]] = {}

    def agreement(
        self, recipe_path: str, generation: str, subject: Subject, value: str
    ) -> Agreement:
        lanes = self.lanes(recipe_path, generation)
        differing = tuple(lane for lane in lanes if lane.settings.get(subject) != value)
        return Agreement(bool(lanes) and not differing, lanes, differing)

    def lanes(self, recipe_path: str, generation: str) -> tuple[FamilyLane, ...]:
        found = self._lanes.get((recipe_path, generation))
        if found is None:
            found = self._lanes[(recipe_path, generation)] = tuple(
                self._extract(recipe_path, generation)
            )
        return found

    def _extract(self, recipe_path: str, generation: str) -> list[FamilyLane]:
        out: list[FamilyLane] = []
        for key in sorted(self.head.configs):
            hardware = self._hardware_of(key, recipe_path, generation)
            if hardware is None:
                continue
            try:
                pairs = points(self.head, key)
            except RecipeSyncError:
                continue
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
                    out.append(FamilyLane(key, hardware, line_subjects(line)))
        return out

    def _hardware_of(self, key: str, recipe_path: str, generation: str) -> str | None:
        """The recipes hardware id ``key`` runs on when it is a single-node vLLM key of the
        recipe on that generation, else None."""
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
            return profile.id
        return None
