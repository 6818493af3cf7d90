"""What word expansion (:mod:`bot.shell.words`) needs from the interpreter, and what it hands
back: a parameter's view, the error of ``${x:?message}``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tree_sitter import Node

from bot.shell.parse import ParsedFile
from bot.shell.result import SourceSpan, Unresolved
from bot.shell.text import EMPTY_TAINTS, Text


class ExpansionError(Exception):
    """``${x:?message}`` on an unset variable: bash prints the message and exits."""

    def __init__(self, message: str, span: SourceSpan) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


@dataclass
class VarView:
    """What an expansion sees of one parameter."""

    values: list[Text]
    is_set: bool
    splat: str | None = None  # '@' or '*' for whole-array / positional expansions
    taints: frozenset[Unresolved] = EMPTY_TAINTS  # uncertainty of the whole parameter


class ExpansionHost(Protocol):
    """What word expansion needs from the interpreter: variables, substitutions, budget."""

    def param(self, name: str, index: str | None, span: SourceSpan) -> VarView: ...

    def assign_scalar(self, name: str, value: Text, span: SourceSpan) -> None: ...

    def substitute(self, pf: ParsedFile, node: Node | None, start: int, end: int) -> Text:
        """Run ``$(…)`` (node, or the bytes [start, end) of the inner text) and capture it."""
        ...

    def arithmetic(self, expression: Text, span: SourceSpan) -> Text: ...

    def ifs(self) -> str: ...

    def unbound(self, name: str, view: VarView, span: SourceSpan) -> None:
        """``set -u``: expanding an unset parameter without a default is fatal."""
        ...

    def home(self, span: SourceSpan) -> Text: ...

    def tick(self, pf: ParsedFile, offset: int) -> None: ...

    def check_size(self, text: Text, span: SourceSpan) -> None: ...

    def var_names(self) -> list[str]: ...
