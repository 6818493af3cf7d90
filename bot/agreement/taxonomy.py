"""Which GPUs a recipe node applies to, and which a piece of prose names.

Read from the recipes repository's ``taxonomy.yaml`` (GPU id → brand, generations, display
name). A ``hardware_overrides`` key is an exact GPU id, a generation (``blackwell``, ``amd``)
or ``nvidia``; a scope without one applies to every GPU.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.recipes.placement import placement_kind


@dataclass(frozen=True)
class Gpu:
    id: str
    brand: str  # lower case
    generations: tuple[str, ...]
    display: str


@dataclass(frozen=True)
class Lanes:
    """The benchmarked lanes an edit is for (empty: unknown, any)."""

    hardware: frozenset[str] = frozenset()
    variants: frozenset[str] = frozenset()
    strategies: frozenset[str] = frozenset()


def opt_in(scope: str) -> bool:
    """Is a node behind a feature (``features.<name>…``), which a user turns on or off,
    rather than forced into the command of every rendering it covers?"""
    return scope == "features" or scope.startswith("features.")


def _named(scope: str, key: str) -> str | None:
    """The name after ``key`` in a dotted scope (``variants.mxfp8…`` → ``mxfp8``)."""
    parts = scope.split(".")
    for index, part in enumerate(parts[:-1]):
        if part == key:
            return parts[index + 1]
    return None


class Taxonomy:
    def __init__(self, gpus: Mapping[str, Gpu]) -> None:
        self.gpus = dict(gpus)

    @classmethod
    def from_yaml(cls, data: Any) -> Taxonomy:
        profiles = data.get("hardware_profiles") if isinstance(data, dict) else None
        gpus: dict[str, Gpu] = {}
        for gpu_id, entry in (profiles or {}).items():
            if not isinstance(entry, dict):
                continue
            generation = entry.get("generation")
            generations = (
                tuple(str(g) for g in generation)
                if isinstance(generation, list)
                else ((str(generation),) if generation else ())
            )
            brand = str(entry.get("brand") or "").lower()
            display = str(entry.get("display_name") or gpu_id)
            gpus[str(gpu_id)] = Gpu(str(gpu_id), brand, generations, display)
        return cls(gpus)

    def gpus_of_key(self, key: str) -> frozenset[str]:
        """The GPUs a ``hardware_overrides`` key selects (exact id, generation, brand)."""
        if key in self.gpus:
            return frozenset({key})
        return frozenset(g.id for g in self.gpus.values() if key in g.generations or key == g.brand)

    def key_kind(self, key: str) -> str:
        return "GPU" if key in self.gpus else "generation"

    def gpus_of_scope(self, scope: str) -> frozenset[str] | None:
        """The GPUs a node at ``scope`` applies to; None when it names no hardware."""
        parts = scope.split(".")
        if parts[:2] == ["meta", "hardware"] and len(parts) > 2:
            return frozenset({parts[2]})
        for index, part in enumerate(parts[:-1]):
            if part == "hardware_overrides":
                return self.gpus_of_key(parts[index + 1])
        return None

    def gpus_named(self, text: str) -> frozenset[str]:
        """GPUs whose display name or id appears in ``text`` as a word (``MI355X``, ``B300``)."""
        found: set[str] = set()
        for gpu in self.gpus.values():
            for name in {gpu.id, gpu.display.split(" ")[0]}:
                if re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text, re.I):
                    found.add(gpu.id)
        return frozenset(found)

    def covers(self, scope: str, lanes: Lanes) -> bool:
        """Does a node at ``scope`` apply to one of ``lanes`` (its renderings include a
        benchmarked GPU, variant and strategy)? A key a scope does not name applies to every
        lane; a lane dimension that is unknown (empty) is not checked. An opt-in feature block
        is a different choice, not a narrower node (:func:`opt_in`), and is not checked here."""
        gpus = self.gpus_of_scope(scope)
        if gpus is not None and lanes.hardware and not gpus & lanes.hardware:
            return False
        variant = _named(scope, "variants")
        if variant is not None and lanes.variants and variant not in lanes.variants:
            return False
        strategy = _named(scope, "strategy_overrides")
        return strategy is None or not lanes.strategies or strategy in lanes.strategies

    def placement(self, scope: str) -> str:
        """The kind of layer a scope is, in maintainers' words (bot.recipes.placement)."""
        return placement_kind(scope, self.gpus)
