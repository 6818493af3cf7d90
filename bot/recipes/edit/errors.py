"""Errors of the recipe editor: one line naming file, line, path and reason."""

from __future__ import annotations

from bot.errors import InputError, Location


class EditError(InputError):
    """An edit cannot be applied to this recipe text (missing path, wrong node kind, bad YAML).

    ``str()`` is one line: ``<file>:<line>: key '<path>': <reason>`` (the line when known).
    """

    def __init__(self, file: str, path: str, reason: str, line: int | None = None) -> None:
        self.file = file
        self.path = path
        # Parser messages can span lines; the contract is one line.
        super().__init__(Location(file, path, line), " ".join(reason.split()))


class EditVerificationError(EditError):
    """The edited text does not re-parse to the expected data; nothing may be written."""


class PathSyntaxError(EditError):
    """A path string such as ``a.b[0]`` is malformed."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__("<path>", path, reason)
