"""Script evaluations shared between the processes of one replay, through a directory.

The backtest and the score replay PRs in several worker processes, each with its own
:class:`~bot.shell.cache.EvaluationCache`. Neighbouring PRs share most (script, environment)
pairs, and each worker meets most of them: over 07-01…07-10 two workers evaluated 13,794
pairs, 8,154 of them distinct. With a :class:`SharedEvaluations` store, an evaluation one
worker made is written to the directory, and another worker that misses in its own cache
takes it from there when its read-set holds (the same rule as its own entries:
:meth:`~bot.shell.cache.EvaluationCache._holds`), instead of evaluating it again.

An entry is filed under its key's shape (the input's names, not its values) and the input
variables it read with what it found (:attr:`~bot.shell.cache._Entry.variables`), so another
point of a sweep finds the entries whose variables have their values in its environment. The
key names the handlers registry by its place in ``registries`` (the registries the store was
made with: every worker builds the same ones) rather than by ``id()``, which another process
may give to another object; an evaluation under any other registry is not shared. The
directory belongs to one replay: its owner makes it and removes it.
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
from bot.shell.shift import Layout
from bot.sources import ReadKey

Key = tuple[object, ...]
# an input variable an evaluation read: its name, how ("=": its value, "?": only whether it
# is empty, by a library model such as check_env_vars) and what it found (:func:`token`)
Variable = tuple[str, str, str]


def token(how: str, value: str | None) -> str | None:
    """What a read of ``how`` finds in an input value (None: the variable is not set). A value
    with an opaque placeholder is unknown, so never empty: "set" too."""
    if how == "=" or value is None:
        return value
    return "empty" if value == "" else "set"


@dataclass(frozen=True)
class Reading:
    """What an evaluation read of a library's functions."""

    bodies: frozenset[str]  # functions whose body was read (run, or read whole)
    analysed: frozenset[str]  # functions only analysed by the library's handler
    signature: Callable[[Node, ParsedFile], object] | None  # what an analysis reads


@dataclass(frozen=True)
class LibraryRead:
    """What an evaluation read of a sourced library, as its cache entry holds it."""

    reading: Reading
    digest: str  # :func:`bot.shell.cache.library_digest` of the blob it read
    layout: Layout  # where the counted statements were in that blob
    placed: bool  # the digest counts positions (the result depends on them)


@dataclass(frozen=True)
class Stored:
    """One evaluation as another process wrote it (its handlers are the reader's)."""

    reads: tuple[tuple[ReadKey, object], ...]
    result: ScriptResult | None
    error: tuple[str, int | None, str] | None  # ExtractionError(file, line, reason)
    steps: int
    libraries: Mapping[str, LibraryRead]
    variables: tuple[Variable, ...]  # the input variables read, with what was found

    def extraction_error(self) -> ExtractionError | None:
        return ExtractionError(*self.error) if self.error is not None else None


class SharedEvaluations:
    """A directory of evaluations: ``<shape>/<names read>/<their values>.<read-set>.pickle``
    (digests), each names folder with the names themselves in ``names``."""

    def __init__(self, root: Path, registries: Sequence[Handlers | None] = (None,)) -> None:
        self.root = root
        self.registries = tuple(registries)
        self.hits = 0  # evaluations taken from the directory
        self.written = 0
        # a names folder's names and how each was read (they never change)
        self._names: dict[Path, tuple[tuple[str, str], ...]] = {}

    def _folder(self, shape: Key, handlers: Handlers | None) -> Path | None:
        place = next((i for i, r in enumerate(self.registries) if r is handlers), None)
        if place is None or shape[-1] != id(handlers):
            return None  # another registry (or a key not made by EvaluationCache.key)
        return self.root / _digest((*shape[:-1], place))

    def _names_of(self, folder: Path) -> tuple[tuple[str, str], ...] | None:
        names = self._names.get(folder)
        if names is None:
            try:
                loaded = pickle.loads((folder / "names").read_bytes())
            except (OSError, pickle.UnpicklingError, EOFError):
                return None
            if not isinstance(loaded, tuple):
                return None
            names = self._names[folder] = loaded
        return names

    def candidates(
        self, shape: Key, handlers: Handlers | None, env: Mapping[str, str]
    ) -> list[Stored]:
        """The evaluations of this shape stored so far whose variables have their value in
        ``env``, in a fixed order (by file name)."""
        folder = self._folder(shape, handlers)
        if folder is None:
            return []
        try:
            groups = sorted(os.listdir(folder))
        except OSError:
            return []
        found: list[Stored] = []
        for group in groups:
            names = self._names_of(folder / group)
            if names is None:
                continue
            prefix = _digest(tuple(token(how, env.get(name)) for name, how in names)) + "."
            try:
                files = sorted(n for n in os.listdir(folder / group) if n.startswith(prefix))
            except OSError:
                continue
            for file in files:
                try:
                    stored = pickle.loads((folder / group / file).read_bytes())
                except (OSError, pickle.UnpicklingError, EOFError):
                    continue  # unreadable: as if not stored
                if isinstance(stored, Stored):
                    found.append(stored)
        return found

    def put(
        self,
        shape: Key,
        handlers: Handlers | None,
        variables: tuple[Variable, ...],
        reads: tuple[tuple[ReadKey, object], ...],
        result: ScriptResult | None,
        error: ExtractionError | None,
        steps: int,
        libraries: Mapping[str, LibraryRead],
    ) -> None:
        folder = self._folder(shape, handlers)
        if folder is None:
            return
        failed = (error.file, error.line, error.reason) if error is not None else None
        names = tuple((name, how) for name, how, _ in variables)
        try:
            stored = Stored(reads, result, failed, steps, dict(libraries), variables)
            data = pickle.dumps(stored)
        except (pickle.PicklingError, TypeError, AttributeError):
            return  # not shareable: the other processes evaluate it themselves
        group = folder / _digest(names)
        values = _digest(tuple(found for _, _, found in variables))
        try:
            group.mkdir(parents=True, exist_ok=True)
            if not (group / "names").exists():
                _write(group, "names", pickle.dumps(names))
            _write(group, f"{values}.{_digest(reads)}.pickle", data)
        except OSError:
            return  # a full disk loses the sharing, not the evaluation
        self.written += 1


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()


def _write(folder: Path, name: str, data: bytes) -> None:
    """Written whole, then renamed: a reader never sees half a file."""
    fd, temporary = tempfile.mkstemp(dir=folder, suffix=".part")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(temporary, folder / name)
