"""Typed errors of static shell evaluation.

Anything the evaluator cannot *know* is reported as an :class:`~bot.shell.result.Unresolved`
item inside a normal result. These exceptions are for inputs the evaluator refuses to go on
with: pathological scripts that exceed the step/size budget, unreadable files.
"""

from __future__ import annotations

from bot.errors import RecipeSyncError


class ExtractionError(RecipeSyncError):
    """A script could not be evaluated at all; ``str()`` names file:line and the reason."""

    def __init__(self, file: str, line: int | None, reason: str) -> None:
        self.file = file
        self.line = line
        self.reason = reason
        where = file if line is None else f"{file}:{line}"
        super().__init__(f"{where}: {reason}")


class BudgetExceeded(ExtractionError):
    """The step, size, depth or loop budget ran out (deep recursion, huge loops, blow-up)."""


class JobTooLarge(RecipeSyncError):
    """A whole job (every point of a PR) ran out of its shared step budget or deadline: the
    PR is reported as "too large to analyse", not retried point by point."""
