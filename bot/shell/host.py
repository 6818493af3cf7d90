"""The evaluator as its collaborators see it (:mod:`bot.shell.interp` composes them): typed
protocols, so that no collaborator imports the evaluator.

The evaluator owns the state of one evaluation (``st``, what is unresolved or assumed, the
budget); each collaborator holds the evaluator and reads the current state from it, since a
fork or a subshell replaces ``st`` while it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from tree_sitter import Node

from bot.shell.fields import Piece
from bot.shell.handlers import Handlers
from bot.shell.parse import ParsedFile
from bot.shell.protocols import Interp
from bot.shell.result import SourceSpan, Unresolved
from bot.shell.state import Capture, State
from bot.shell.text import Text
from bot.sources import FileSource


class Branches(Protocol):
    """Undecidable conditions and new processes (:class:`bot.shell.fork.Explorer`)."""

    returns: list[list[State]]  # states of early `return`s, joined where they land
    breaks: list[list[State]]  # states of early `break`s

    def fork(
        self,
        branches: list[Callable[[], None]],
        why: str,
        span: SourceSpan,
        labels: Sequence[str] = (),
    ) -> None: ...

    def landed(self, pending: list[State], why: str, span: SourceSpan) -> None: ...

    def barrier(self) -> AbstractContextManager[None]: ...

    def in_subshell(self, run: Callable[[], None], out: Capture | None = None) -> int | None: ...

    def in_process(
        self, child: State, run: Callable[[], None], zero: str | None = None
    ) -> int | None: ...


class Host(Interp, Protocol):
    """What the collaborators use of the evaluator."""

    source: FileSource
    script: str
    zero: str  # $0
    handlers: Handlers
    job_env: dict[str, str]
    libraries: list[str]  # the sourced libraries being evaluated, innermost last
    sourced: list[str]
    unknown_commands: dict[str, str]
    orphans: frozenset[Unresolved]
    last_subst_status: int | None
    assumptions: dict[tuple[str, str, str], Unresolved]

    @property
    def paths(self) -> Branches: ...

    def exec_nodes(self, children: Sequence[Node], pf: ParsedFile) -> None: ...

    def exec_stmt(self, node: Node, pf: ParsedFile) -> None: ...

    def run_condition(self, nodes: Sequence[Node], pf: ParsedFile) -> int | None: ...

    def errexit(self, span: SourceSpan) -> None: ...

    def index(self, index: str, span: SourceSpan) -> int | None: ...

    def process_output(self, node: Node, pf: ParsedFile) -> Text: ...

    def arith_pieces(self, pf: ParsedFile, start: int, end: int) -> list[Piece]: ...

    def written_files(self) -> dict[str, str]: ...


__all__ = ["Branches", "Host"]
