"""Golden files: compared byte for byte; ``RECIPE_SYNC_UPDATE_GOLDEN=1`` rewrites them.

The one switch for every golden file of the suite. Rewrite only after reading the diff:
golden outputs are review artefacts, not snapshots.
"""

from __future__ import annotations

import os
from pathlib import Path

UPDATE = "RECIPE_SYNC_UPDATE_GOLDEN"


def assert_golden(golden: Path, actual: str) -> None:
    if os.environ.get(UPDATE):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8"), f"differs from {golden} (see {UPDATE})"
