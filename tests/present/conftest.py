"""The presentation tests share the evidence fixtures (the seed runs, materialised)."""

from tests.evidence.conftest import seed_dir, seed_expected

__all__ = ["seed_dir", "seed_expected"]
