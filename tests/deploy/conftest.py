"""The service tests' App key, PostgreSQL schema and Redis queue fixtures, and the seed
scenario on a fake GitHub, for the smokes."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.fixtures import build_seed_fixtures
from tests.service.conftest import app_key, pg_url, redis_queue
from tests.service.fakegithub import FakeGitHub, ServerThread
from tests.service.seeded import serve_seed

__all__ = ["app_key", "github", "pg_url", "redis_queue"]


@pytest.fixture
def github(tmp_path: Path, app_key: tuple[str, str]) -> Iterator[FakeGitHub]:
    """The seed scenario on a served fake GitHub (``github.built``: its fixtures)."""
    built = build_seed_fixtures(tmp_path / "seed")
    fake = FakeGitHub(tmp_path / "remotes", public_key=app_key[1])
    with ServerThread(fake.app) as server:
        fake.base_url = server.url
        serve_seed(fake, built)
        fake.built = built  # type: ignore[attr-defined]
        yield fake
