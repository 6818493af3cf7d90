"""The service tests' App key, PostgreSQL schema and Redis queue fixtures, for the smokes."""

from tests.service.conftest import app_key, pg_url, redis_queue

__all__ = ["app_key", "pg_url", "redis_queue"]
