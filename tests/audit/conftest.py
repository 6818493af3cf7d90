"""Fixtures shared with the service tests (the App key the fake GitHub verifies)."""

from __future__ import annotations

from tests.service.conftest import app_key  # noqa: F401  (a fixture, re-exported)
