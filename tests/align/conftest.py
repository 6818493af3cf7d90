"""The alignment tests' golden files (the seed's CLI fixtures are in :mod:`tests.seed_cli`)."""

from __future__ import annotations

from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
