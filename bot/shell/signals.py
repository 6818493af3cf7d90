"""Control flow of the evaluated script, as exceptions that unwind Python frames.

Kept apart from the evaluator so that builtins, conditions and command handlers raise them
through a plain import: ``exit``, ``return``, ``break``/``continue`` and the launch that ends
the evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.shell.result import SourceSpan
from bot.shell.text import Text


class ExitSignal(Exception):
    """``exit`` (or a fatal error): ends the script with ``code`` (None: unknown)."""

    def __init__(self, code: int | None, span: SourceSpan, message: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.span = span
        self.message = message


class ReturnSignal(Exception):
    """``return`` from a function or a sourced file."""

    def __init__(self, status: int | None) -> None:
        super().__init__()
        self.status = status


class LoopSignal(Exception):
    """``break``/``continue`` (``kind``) through ``levels`` enclosing loops."""

    def __init__(self, kind: str, levels: int) -> None:
        super().__init__(kind)
        self.kind = kind
        self.levels = levels


@dataclass
class Launch:
    """The command that ends the evaluation, with the environment it would see."""

    argv: list[Text]
    sources: list[SourceSpan]
    env: list[tuple[str, Text]]
    env_unset: list[str]
    span: SourceSpan
    files: dict[str, str]
    glob_fields: list[int]


class LaunchSignal(Exception):
    def __init__(self, launch: Launch) -> None:
        super().__init__("launch")
        self.launch = launch


__all__ = ["ExitSignal", "Launch", "LaunchSignal", "LoopSignal", "ReturnSignal"]
