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


def migrate(settings: Settings) -> str:
    """Apply pending migrations to the configured database; its revision after."""
    from bot.state.outage import BACKEND_ERRORS
    from bot.state.store import Store

    try:
        settings.data_dir.mkdir(parents=True, exist_ok=True)  # the SQLite default lives there
        store = Store.open(settings.effective_database_url)
    except BACKEND_ERRORS as err:
        raise _unavailable(settings, err) from None
    try:
        return store.revision()
    finally:
        store.close()


def _unavailable(settings: Settings, err: BaseException) -> BackendUnavailable:
    from bot.state.outage import is_migration_error, shown_url

    url = shown_url(settings.effective_database_url)
    if is_migration_error(err):  # e.g. migrated by a newer recipe-sync
        return BackendUnavailable(f"database {url} cannot be migrated: {err}")
    return BackendUnavailable(f"database {url} unreachable: {describe(err)}")


def boot(settings: Settings, **parts: Any) -> Runtime:
    """``Runtime.create(settings, **parts)``, then register the Huey tasks on it."""
    from bot.state.outage import BACKEND_ERRORS

    try:
        runtime = Runtime.create(settings, **parts)
    except BACKEND_ERRORS as err:
        raise _unavailable(settings, err) from None
    runtime.attach(register(runtime))
    return runtime
