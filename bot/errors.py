"""Errors a user can act on.

Every error raised for bad input derives from :class:`RecipeSyncError`; its ``str()`` is one
line naming what is wrong and where (file, key, line). The CLI prints it without a traceback
and exits with status 2. Anything else escaping is a bug.
"""

from __future__ import annotations

from dataclasses import dataclass


class RecipeSyncError(Exception):
    """Base class for expected, user-facing errors."""


@dataclass(frozen=True)
class Location:
    """Where in an input file something is: ``file:line`` plus the dotted key path."""

    file: str
    key: str = ""
    line: int | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: key '{self.key}'" if self.key else where


class InputError(RecipeSyncError):
    """Malformed or invalid input file (YAML, JSON, script, payload)."""

    def __init__(self, location: Location, reason: str) -> None:
        self.location = location
        self.reason = reason
        super().__init__(f"{location}: {reason}")
