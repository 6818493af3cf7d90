"""The composition root: a :class:`Runtime` with its queue tasks registered."""

from __future__ import annotations

from typing import Any

from bot.service.runtime import Runtime
from bot.service.tasks import register
from bot.settings import Settings


def boot(settings: Settings, **parts: Any) -> Runtime:
    """``Runtime.create(settings, **parts)``, then register the Huey tasks on it."""
    runtime = Runtime.create(settings, **parts)
    runtime.attach(register(runtime))
    return runtime
