"""The composition root: a :class:`Runtime` with its queue tasks registered."""

from __future__ import annotations

from typing import Any

from bot.errors import RecipeSyncError
from bot.service.outage import describe
from bot.service.runtime import Runtime
from bot.service.tasks import register
from bot.settings import Settings


class BackendUnavailable(RecipeSyncError):
    """The database cannot be reached at start (one line, no traceback; exit 2)."""


def boot(settings: Settings, **parts: Any) -> Runtime:
    """``Runtime.create(settings, **parts)``, then register the Huey tasks on it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    try:
        runtime = Runtime.create(settings, **parts)
    except (SQLAlchemyError, OSError) as err:
        url = make_url(settings.effective_database_url).render_as_string(hide_password=True)
        raise BackendUnavailable(f"database {url} unreachable: {describe(err)}") from None
    runtime.attach(register(runtime))
    return runtime
