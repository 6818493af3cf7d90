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

    def placement(self, scope: str) -> str:
        """The kind of layer a scope is, in maintainers' words (bot.recipes.placement)."""
        return placement_kind(scope, self.gpus)
