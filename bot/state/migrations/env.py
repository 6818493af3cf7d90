"""Alembic environment: migrations always run on a connection handed in by bot.state.migrate
(``alembic`` CLI use is not supported: the service migrates itself at start)."""

from __future__ import annotations

from alembic import context

from bot.state.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through bot.state.migrate.upgrade(engine)")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
