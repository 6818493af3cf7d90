"""Script evaluations shared between the processes of one replay, through a directory.

The backtest and the score replay PRs in several worker processes, each with its own
:class:`~bot.shell.cache.EvaluationCache`. Neighbouring PRs share most (script, environment)
pairs, and each worker meets most of them: over 07-01…07-10 two workers evaluated 13,794
pairs, 8,154 of them distinct. With a :class:`SharedEvaluations` store, an evaluation one
worker made is written to the directory, and another worker that misses in its own cache
takes it from there when its read-set holds (the same rule as its own entries:
:meth:`~bot.shell.cache.EvaluationCache._holds`), instead of evaluating it again.

An entry is filed under its key, which names the handlers registry by its place in
``registries`` (the registries the store was made with, before the workers were forked: the
same objects in every worker) rather than by ``id()``, which another process may give to
another object; an evaluation under any other registry is not shared. The directory belongs
to one replay: its owner makes it and removes it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Node

from bot.shell.errors import ExtractionError
from bot.shell.handlers import Handlers
from bot.shell.parse import ParsedFile
from bot.shell.result import ScriptResult
from bot.sources import ReadKey

Key = tuple[object, ...]


@dataclass(frozen=True)
class Reading:
    """What an evaluation read of a library's functions."""

    bodies: frozenset[str]  # functions whose body was read (run, or read whole)
    analysed: frozenset[str]  # functions only analysed by the library's handler
    signature: Callable[[Node, ParsedFile], object] | None  # what an analysis reads


@dataclass(frozen=True)
class Stored:
    """One evaluation as another process wrote it (its handlers are the reader's)."""

    reads: tuple[tuple[ReadKey, object], ...]
    result: ScriptResult | None
    error: tuple[str, int | None, str] | None  # ExtractionError(file, line, reason)
    steps: int
    libraries: Mapping[str, tuple[Reading, str]]

    def extraction_error(self) -> ExtractionError | None:
        return ExtractionError(*self.error) if self.error is not None else None


class SharedEvaluations:
    """A directory of evaluations: ``<key digest>/<read-set digest>.pickle``."""

    def __init__(self, root: Path, registries: Sequence[Handlers | None] = (None,)) -> None:
        self.root = root
        self.registries = tuple(registries)
        self.hits = 0  # evaluations taken from the directory
        self.written = 0

    def _folder(self, key: Key, handlers: Handlers | None) -> Path | None:
        place = next((i for i, r in enumerate(self.registries) if r is handlers), None)
        if place is None or key[-1] != id(handlers):
            return None  # another registry (or a key not made by EvaluationCache.key)
        named = repr((*key[:-1], place)).encode("utf-8", "surrogatepass")
        return self.root / hashlib.sha256(named).hexdigest()

    def candidates(self, key: Key, handlers: Handlers | None) -> list[Stored]:
        """The evaluations of ``key`` stored so far, in a fixed order (by file name)."""
        folder = self._folder(key, handlers)
        if folder is None:
            return []
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".pickle"))
        except OSError:
            return []
        found: list[Stored] = []
        for name in names:
            try:
                with open(folder / name, "rb") as handle:
                    stored = pickle.load(handle)
            except (OSError, pickle.UnpicklingError, EOFError):
                continue  # unreadable: as if not stored
            if isinstance(stored, Stored):
                found.append(stored)
        return found

    def put(
        self,
        key: Key,
        handlers: Handlers | None,
        reads: tuple[tuple[ReadKey, object], ...],
        result: ScriptResult | None,
        error: ExtractionError | None,
        steps: int,
        libraries: Mapping[str, tuple[Reading, str]],
    ) -> None:
        folder = self._folder(key, handlers)
        if folder is None:
            return
        failed = (error.file, error.line, error.reason) if error is not None else None
        try:
            data = pickle.dumps(Stored(reads, result, failed, steps, dict(libraries)))
        except (pickle.PicklingError, TypeError, AttributeError):
            return  # not shareable: the other processes evaluate it themselves
        name = hashlib.sha256(repr(reads).encode("utf-8", "surrogatepass")).hexdigest()
        try:
            folder.mkdir(exist_ok=True)
            # written whole, then renamed: a reader never sees half an entry
            fd, temporary = tempfile.mkstemp(dir=folder, suffix=".part")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, folder / f"{name}.pickle")
        except OSError:
            return  # a full disk loses the sharing, not the evaluation
        self.written += 1
