"""The interpreter as its helpers see it: typed protocols instead of importing the evaluator.

Builtins, ``[[ … ]]`` conditions and registered command models receive the evaluator through
these protocols, so none of them imports :mod:`bot.shell.interp` (which imports them).
"""

from __future__ import annotations

from typing import Protocol

from tree_sitter import Node

from bot.shell.budget import Budget
from bot.shell.parse import ParsedFile, ScriptParser
from bot.shell.result import SourceSpan, Unresolved
from bot.shell.state import State, Var
from bot.shell.text import Text
from bot.shell.words import Expander, VarView


class Shell(Protocol):
    """The part of the evaluator a model function may use."""

    st: State
    input_vars: dict[str, Var]  # the job's variables as the script started with them

    def param(self, name: str, index: str | None, span: SourceSpan) -> VarView: ...

    def set_var(
        self, name: str, value: Text, span: SourceSpan, *, export: bool = False
    ) -> None: ...

    def write_out(self, text: Text, span: SourceSpan) -> None: ...

    def arithmetic(self, expression: Text, span: SourceSpan) -> Text: ...

    def assume(self, span: SourceSpan, category: str, what: str, why: str) -> None: ...

    def unresolved(self, span: SourceSpan, what: str, why: str) -> Unresolved: ...


class Files(Protocol):
    """How the evaluator reaches files (in the spirit of mvdan/sh's ``OpenHandler`` and
    ``StatHandler``): resolve a path, read one, test one, write one (in memory)."""

    def repo_path(self, path: Text) -> str | None: ...

    def fs_key(self, path: str) -> str: ...

    def read_file(self, path: Text, span: SourceSpan) -> Text | None: ...

    def file_test(self, op: str, path: Text, span: SourceSpan) -> bool | None: ...

    def write_file(self, path: str, content: Text, *, append: bool) -> None: ...


class Interp(Shell, Protocol):
    """What builtins and conditions use of the evaluator."""

    parser: ScriptParser
    budget: Budget
    expander: Expander
    control: dict[Unresolved, None]
    last_message: tuple[str, SourceSpan] | None

    def ifs(self) -> str: ...

    def pwd(self, span: SourceSpan) -> Text: ...

    def exec_block(self, node: Node, pf: ParsedFile) -> None: ...

    def opaque_command(self, argv: list[Text], span: SourceSpan, why: str) -> None: ...

    def set_array(
        self, name: str, values: list[Text], span: SourceSpan, *, append: bool
    ) -> None: ...

    @property
    def files(self) -> Files: ...

    def source_file(self, argv: list[Text], span: SourceSpan) -> None: ...


__all__ = ["Files", "Interp", "Shell"]
