"""What an embedding application teaches the evaluator: commands, sourced libraries, the launch.

The evaluator is a generic partial bash interpreter. Everything specific to one benchmark
repository or one server launcher is registered here from outside (``bot.benchmarks``
registers the InferenceX benchmark library and the ``vllm serve`` detector), so a second
repository or launcher is a new registry, not an edit to the interpreter:

* a :class:`CommandHandler` replaces a command by a model function;
* a :class:`SourceHandler` recognises a sourced library by file name: the functions it defines
  are "library functions", which its ``analyse`` decides to inline or to skip as side-effect
  helpers (what they may assign becomes unknown);
* the launch detector says which argv ends the evaluation as the result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from tree_sitter import Node

from bot.shell.parse import ParsedFile
from bot.shell.protocols import Shell
from bot.shell.result import SourceSpan
from bot.shell.state import FunctionDef
from bot.shell.text import Text

# A model runs instead of the command: (shell, arguments without the name, call site). It sets
# ``shell.st.status`` and may raise the signals of :mod:`bot.shell.signals`.
Model = Callable[[Shell, Sequence[Text], SourceSpan], None]
LaunchDetector = Callable[[Sequence[str]], bool]


@dataclass(frozen=True)
class CommandHandler:
    model: Model
    # stands for a library's definition only: called without that library it stays unknown
    defined_only: bool = False


@dataclass(frozen=True)
class LibraryCall:
    """How to treat a call of a library function that has no model."""

    inline: bool  # evaluate its body (it may reach the launch)
    assigns: frozenset[str]  # otherwise: the globals it may assign (become possibly changed)


@dataclass(frozen=True)
class SourceHandler:
    name: str  # key stored on the functions it defines
    label: str  # in explanations: "the benchmark library"
    basenames: frozenset[str]  # sourced files with one of these names are this library
    # repository path used when the sourced path is missing (the job provides the library)
    fallback: str | None
    analyse: Callable[[FunctionDef, Mapping[str, FunctionDef]], LibraryCall]
    # all that ``analyse`` reads of a function's own body (it reads it through
    # ``FunctionDef.analysed_body`` only; callees are analysed in turn): two bodies of one
    # signature analyse alike, so an evaluation cached with one holds with the other. None:
    # an analysed body counts byte for byte
    signature: Callable[[Node, ParsedFile], object] | None = None


@dataclass
class Handlers:
    """The registry the evaluator consults; empty, it evaluates plain bash and finds nothing."""

    commands: dict[str, CommandHandler] = field(default_factory=dict)
    sources: dict[str, SourceHandler] = field(default_factory=dict)
    launch: LaunchDetector | None = None
    launch_label: str = "launch"  # "no {launch_label} found"
    server_label: str = "the launch command"  # "… without starting {server_label}"

    def command(self, name: str, model: Model, *, defined_only: bool = False) -> None:
        self.commands[name] = CommandHandler(model, defined_only)

    def source(self, handler: SourceHandler) -> None:
        self.sources[handler.name] = handler

    def library_of(self, basename: str) -> SourceHandler | None:
        return next((h for h in self.sources.values() if basename in h.basenames), None)

    def is_launch(self, argv: Sequence[str]) -> bool:
        return self.launch is not None and self.launch(argv)


__all__ = [
    "CommandHandler",
    "Handlers",
    "LaunchDetector",
    "LibraryCall",
    "Model",
    "Shell",
    "SourceHandler",
]
