"""Differences → demands on recipe nodes (docs/alignment.md §5).

Every FlagDiff of a representative comparison becomes a *demand* on one YAML node: change
it (the value where the rendered unit came from), add to it (a new flag or env var at the
placement the rules give), remove from it (policy), or keep it as it is (a point that already
matches pins a shared node). Differences that are never edited are collected as notes.
:class:`Collector` drives it; the flag, env and image rules (``flags.py``, ``variables.py``,
``image.py``) share one :class:`~bot.align.demands.placement.Placement` (where a node goes,
who else draws from it) and one :class:`~bot.align.demands.ledger.Ledger` (what is recorded
besides demands, by the knob policy). The demand types are in :mod:`~bot.align.demands.model`.
"""

from bot.align.demands.collector import Collector

__all__ = ["Collector"]
