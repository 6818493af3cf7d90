"""What one evaluation took from the libraries it sourced, so its cached result can outlive an
edit of a library in a part it never read.

Sourcing a library runs its top level and defines its functions; a function's body counts
only when something reads it (a call inlines it, the library's handler analyses it). A change
to InferenceX's benchmark library mostly touches helpers that run after the vLLM launch (the
benchmark clients, evals), which no launch-line evaluation ever reads; a cache keyed by the
library's whole blob would re-evaluate every point of every key for it.

It also records the variables it looked up (:func:`variable_read`), or that it listed them
all (a child script inheriting the exports): an input variable it never read
cannot change its result, so the cache reuses it for another value of that variable (the
points of one config key differ mostly in the client's concurrency).

The evaluation records into the :class:`Usage` of the current context (a thread of the App's
worker has its own): the library functions whose bodies were read (run, or read whole), those
only analysed by their library's handler (which reads a signature of the body, not its text:
:attr:`bot.shell.handlers.SourceHandler.signature`), and the repository files read as data
(``cat``, ``$(<file)``), whose every byte counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Usage:
    functions: set[str] = field(default_factory=set)  # library functions whose body was read
    analysed: set[str] = field(default_factory=set)  # library functions analysed by a handler
    data: set[str] = field(default_factory=set)  # repository paths read as data
    variables: set[str] = field(default_factory=set)  # variables looked up (or compared)
    every_variable: bool = False  # the variables were listed (or passed on) wholesale
    tested: set[str] = field(default_factory=set)  # input variables only tested for emptiness
    quiet: int = 0  # >0: lookups are not recorded (a model records what it read itself)
    positions: bool = False  # the result depends on where lines are, not only on their text


_CURRENT: ContextVar[Usage | None] = ContextVar("bot_shell_usage", default=None)


@contextmanager
def recording() -> Iterator[Usage]:
    """Record what the evaluation inside the block reads (a nested block records apart)."""
    usage = Usage()
    token = _CURRENT.set(usage)
    try:
        yield usage
    finally:
        _CURRENT.reset(token)


def function_read(name: str) -> None:
    usage = _CURRENT.get()
    if usage is not None:
        usage.functions.add(name)


def function_analysed(name: str) -> None:
    usage = _CURRENT.get()
    if usage is not None:
        usage.analysed.add(name)


def variable_read(name: str) -> None:
    usage = _CURRENT.get()
    if usage is not None and not usage.quiet:
        usage.variables.add(name)


def variable_tested(name: str) -> None:
    """An input variable as the job gave it, read only for whether it is empty."""
    usage = _CURRENT.get()
    if usage is not None:
        usage.tested.add(name)


@contextmanager
def unrecorded() -> Iterator[None]:
    """Lookups inside are not recorded: the caller records what it read."""
    usage = _CURRENT.get()
    if usage is None:
        yield
        return
    usage.quiet += 1
    try:
        yield
    finally:
        usage.quiet -= 1


def positions_read() -> None:
    """The evaluation used a line number as a value (``$LINENO``) or compared two (an exit
    message echoed a few lines before): its result holds only where the lines are."""
    usage = _CURRENT.get()
    if usage is not None:
        usage.positions = True


def every_variable_read() -> None:
    usage = _CURRENT.get()
    if usage is not None:
        usage.every_variable = True


def data_read(path: str) -> None:
    usage = _CURRENT.get()
    if usage is not None:
        usage.data.add(path)
