"""What the flag, env and image rules share: the recipe, where a node goes, what is recorded."""

from __future__ import annotations

from bot.align.demands.ledger import Ledger
from bot.align.demands.placement import Placement


class Rule:
    def __init__(self, place: Placement, ledger: Ledger) -> None:
        self.place = place
        self.ledger = ledger
        self.recipes = place.recipes
        self.recipe = place.recipe
        self.rules = place.rules
        self.out = ledger.out
