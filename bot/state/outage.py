"""What a database that cannot be reached or migrated raises, as the service may name it at
start (one line, no traceback) without speaking SQL itself."""

from __future__ import annotations

from alembic.util.exc import CommandError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

# the database (or its SQLite file's directory) unreachable, or not migratable
BACKEND_ERRORS: tuple[type[Exception], ...] = (SQLAlchemyError, CommandError, OSError)


def shown_url(url: str) -> str:
    """The database URL as a log line may show it (no password)."""
    return make_url(url).render_as_string(hide_password=True)


def is_migration_error(err: BaseException) -> bool:
    """The database is reachable but cannot be migrated (e.g. by a newer recipe-sync)."""
    return isinstance(err, CommandError)
