"""Apply the alembic migrations in ``bot/state/migrations`` (at every start; idempotent).

Several processes may start at once (web + workers on several machines): PostgreSQL
serialises them with an advisory lock, SQLite with its ``BEGIN IMMEDIATE`` write lock.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_LOCK_ID = 0x5EC1_9E5  # arbitrary, constant: "recipe-sync migrations"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    config = alembic_config()
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
