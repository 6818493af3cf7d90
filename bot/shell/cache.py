"""Script evaluations reused across commits: the same script, environment and limits give the
same result wherever every file the evaluation read (or tested for existence) is unchanged.

A backtest or the App evaluates the same launch script for the same point again and again:
for a PR's base and head, for the next PR that did not touch it, and for the other config
keys drawing on one recipe node. An entry is keyed by (script, the input environment's names
in order, working directory, environment label, limits, handlers) and valid for a source only
when each path of its read-set (:class:`bot.sources.RecordingSource`: blob SHAs, absent files,
directory listings, symlinks) is in the recorded state, and for an input environment only
when each input variable it read has the value it had (:mod:`bot.shell.usage`: looked up,
compared with what a branch or the launch holds, passed on to a child script; a variable the
library's ``check_env_vars`` model only tests counts by whether it is empty). The points of a
sweep differ in the concurrency and the result file, which no launch line reads: one
evaluation serves them all. Nothing else reaches an evaluation.

A sourced library (a file the handlers register) is the exception to "every byte": an entry
also holds the library's digest with only what the evaluation read of its functions (bodies
run in full, bodies only analysed by their signature, the others by name:
:func:`library_digest`, :mod:`bot.shell.usage`), and holds for a library blob of the same
digest, its library lines moved with their statements when the edit moved them
(:mod:`bot.shell.shift`). InferenceX's benchmark library changes in a third of the PRs,
mostly in helpers run after the launch; every point of every key sourcing it would
otherwise be evaluated again.
"""

from __future__ import annotations

import hashlib
import posixpath
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from bot.errors import InputError
from bot.shell.budget import Limits, charge_job, metered
from bot.shell.errors import BudgetExceeded, ExtractionError
from bot.shell.handlers import Handlers
from bot.shell.parse import ParsedFile, ScriptParser
from bot.shell.result import ScriptResult
from bot.shell.shared import LibraryRead, Reading, SharedEvaluations, Variable, token
from bot.shell.shift import Layout, shift_result
from bot.shell.usage import Usage, recording
from bot.sources import FileSource, ReadKey, RecordingSource, file_state

Key = tuple[object, ...]
_Names = tuple[tuple[str, str], ...]  # the input variables an entry read, and how
# a library whose counted statements moved: its layout then and now, and its blob now
_Moves = dict[str, tuple[Layout, Layout, str]]


@dataclass(frozen=True)
class _Entry:
    reads: tuple[tuple[ReadKey, object], ...]
    result: ScriptResult | None
    error: ExtractionError | None  # a script that cannot be evaluated fails the same way
    steps: int  # what the evaluation charged the job budget
    handlers: Handlers | None  # the registry the key names by id (kept alive with the entry)
    libraries: Mapping[str, LibraryRead]  # sourced libraries, by path
    # the input variables the evaluation read (looked up, compared, listed), with their values
    variables: tuple[Variable, ...]


def library_digest(pf: ParsedFile, reading: Reading, *, placed: bool) -> tuple[str, Layout]:
    """The digest of what running a library can depend on, for an evaluation that read it as
    ``reading`` says, and where its counted statements are: its top-level statements in
    order, each with its text and the column it starts at, except function definitions: of
    a function whose body was read (``reading.bodies``) all counts; of one only analysed, its
    name and the signature of its body (what the analysis reads); of any other, its name
    (defining a function reads neither its body nor its line). Comments never run. Two texts
    of one digest run the same top level, define the same functions, and those the
    evaluation read read the same; a result moves to the other text's lines with its
    statements (:mod:`bot.shell.shift`). ``placed``: the rows count too, for an evaluation
    whose result depends on them (``$LINENO``). A text that does not parse cleanly counts
    whole."""
    digest = hashlib.sha256()

    def piece(data: bytes) -> None:  # length-prefixed: no two cuts give one digest
        digest.update(len(data).to_bytes(8, "big") + data)

    if pf.root.has_error:
        piece(pf.data)
        return "whole:" + digest.hexdigest(), ()
    layout: list[tuple[int, int]] = []
    for child in pf.root.children:
        if child.type == "comment":
            continue
        if not child.is_named:  # `;`, `&`: whether the next statement runs in background
            piece(child.type.encode())
            continue
        if child.type == "function_definition":
            name, body = child.child_by_field_name("name"), child.child_by_field_name("body")
            text = pf.text(name) if name is not None else ""
            if name is not None and body is not None and text not in reading.bodies:
                piece(b"function " + text.encode())
                if text in reading.analysed and reading.signature is not None:
                    piece(repr(reading.signature(body, pf)).encode())
                elif text in reading.analysed:
                    piece(pf.data[body.start_byte : body.end_byte])
                continue
        row, column = child.start_point
        piece((f"{row}:{column}" if placed else f":{column}").encode())
        piece(pf.data[child.start_byte : child.end_byte])
        layout.append((row, child.end_point[0]))
    kind = "placed:" if placed else "projected:"
    return kind + digest.hexdigest(), tuple(layout)


class EvaluationCache:
    """Bounded (least recently used first out) map of evaluations with their read-sets."""

    VARIANTS = 4  # entries per key: a PR's base and head, and neighbouring commits
    DIGESTS = 256  # library digests kept, by (blob, functions read, limits)

    def __init__(self, max_entries: int = 4_096, shared: SharedEvaluations | None = None) -> None:
        self.max_entries = max_entries
        # evaluations the other processes of a replay made (and where this one's go)
        self.shared = shared
        # by shape (the key with the input's names, not its values), then by the names an
        # entry read and their values
        self._entries: OrderedDict[Key, dict[_Names, dict[tuple[str | None, ...], list[_Entry]]]]
        self._entries = OrderedDict()
        self._count = 0
        self.hits = 0
        self.misses = 0
        self.library_hits = 0  # hits on another blob of a library, of the same digest
        self.moved_hits = 0  # … of them, those whose library lines moved (bot/shell/shift.py)
        self._lock = threading.Lock()  # the App's engine runs jobs in worker threads
        self._digests: OrderedDict[tuple[str, Reading, Limits, bool], tuple[str, Layout] | None] = (
            OrderedDict()
        )
        self._parsed: OrderedDict[tuple[str, Limits], ParsedFile | None] = OrderedDict()
        self._digest_lock = threading.Lock()  # one tree-sitter parser, one thread at a time

    def __len__(self) -> int:
        return self._count

    @staticmethod
    def key(
        script: str,
        env: Mapping[str, str],
        workdir: str | None,
        env_label: str,
        limits: tuple[Limits, Limits],  # the evaluation's and the parser's
        handlers: Handlers | None,
    ) -> Key:
        return (script, tuple(env.items()), workdir, env_label, limits, id(handlers))

    def evaluate(
        self,
        source: FileSource,
        key: Key,
        handlers: Handlers | None,
        run: Callable[[FileSource], ScriptResult],
    ) -> ScriptResult:
        """``run(source)``'s result, reused when an entry's read-set holds in ``source``."""
        hit = self._lookup(source, key, handlers)
        if hit is not None:
            charge_job(hit.steps)
            if hit.error is not None:
                raise hit.error
            assert hit.result is not None
            return hit.result
        recorder = RecordingSource(source)
        result: ScriptResult | None = None
        error: ExtractionError | None = None
        with metered() as meter, recording() as usage:
            try:
                result = run(recorder)
            except BudgetExceeded:
                raise  # the step limits: kept out of the cache, as they may depend on timing
            except ExtractionError as err:
                error = err
        reads = tuple(recorder.seen.items())
        libraries = self._libraries(source, key, handlers, reads, usage)
        variables = _variables(_items(key), usage)
        entry = _Entry(reads, result, error, meter.steps, handlers, libraries, variables)
        self._store(key, entry)
        if self.shared is not None:
            self.shared.put(
                _shape(key), handlers, variables, reads, result, error, meter.steps, libraries
            )
        if error is not None:
            raise error
        assert result is not None
        return result

    def _lookup(self, source: FileSource, key: Key, handlers: Handlers | None) -> _Entry | None:
        shape, env = _shape(key), dict(_items(key))
        with self._lock:
            group = self._entries.get(shape, {})
            variants = [
                entry
                for names, buckets in group.items()
                for entry in buckets.get(tuple(token(how, env[name]) for name, how in names), ())
            ]
        for entry in variants:  # the file checks outside the lock: they may read git
            if entry.handlers is not handlers:
                continue
            holds, moves = self._holds(source, key, entry)
            found = _moved(entry, moves) if holds else None
            if found is not None:
                with self._lock:
                    self.hits += 1
                    self.library_hits += holds == "library"
                    self.moved_hits += bool(moves)
                    if moves:  # kept as moved: the next lookup on this blob is a plain hit
                        self._store_locked(key, found)
                    elif shape in self._entries:
                        self._entries.move_to_end(shape)
                return found
        if self.shared is not None:
            for stored in self.shared.candidates(shape, handlers, env):
                if any(token(how, env.get(name)) != found for name, how, found in stored.variables):
                    continue  # another value of the same digest (never seen)
                entry = _Entry(
                    stored.reads,
                    stored.result,
                    stored.extraction_error(),
                    stored.steps,
                    handlers,
                    stored.libraries,
                    stored.variables,
                )
                holds, moves = self._holds(source, key, entry)
                found = _moved(entry, moves) if holds else None
                if found is not None:
                    with self._lock:
                        self.shared.hits += 1
                        self._store_locked(key, found)
                    return found
        with self._lock:
            self.misses += 1
        return None

    def _holds(self, source: FileSource, key: Key, entry: _Entry) -> tuple[str, _Moves]:
        """Whether ``entry`` holds in ``source``: "same" (every read in its recorded state),
        "library" (a sourced library differs only in bodies the evaluation did not read, or
        in where the statements it counts are: the moves say how they moved, with the
        library's blob now), or "" (it does not)."""
        how = "same"
        moves: _Moves = {}
        for read, state in entry.reads:
            now = file_state(source, read)
            if now == state:
                continue
            library = entry.libraries.get(read[1]) if read[0] == "file" else None
            if library is None or not isinstance(now, str):
                return "", {}
            found = self._digest(
                source, read[1], now, library.reading, _parser_limits(key), library.placed
            )
            if found is None or found[0] != library.digest:
                return "", {}
            if found[1] != library.layout:
                moves[read[1]] = (library.layout, found[1], now)
            how = "library"
        return how, moves

    def _libraries(
        self,
        source: FileSource,
        key: Key,
        handlers: Handlers | None,
        reads: tuple[tuple[ReadKey, object], ...],
        usage: Usage,
    ) -> dict[str, LibraryRead]:
        """The digest of each registered library the evaluation read only by running it (one
        read as data, ``cat``, counts byte for byte)."""
        if handlers is None:
            return {}
        found: dict[str, LibraryRead] = {}
        for (kind, path), state in reads:
            if kind != "file" or not isinstance(state, str) or path in usage.data:
                continue
            library = handlers.library_of(posixpath.basename(path))
            if library is None:
                continue
            bodies = frozenset(usage.functions)
            reading = Reading(bodies, frozenset(usage.analysed) - bodies, library.signature)
            placed = usage.positions
            digest = self._digest(source, path, state, reading, _parser_limits(key), placed)
            if digest is not None:
                found[path] = LibraryRead(reading, digest[0], digest[1], placed)
        return found

    def _digest(
        self,
        source: FileSource,
        path: str,
        blob: str,
        reading: Reading,
        limits: Limits,
        placed: bool,
    ) -> tuple[str, Layout] | None:
        """:func:`library_digest` of ``path`` (blob ``blob``) in ``source``; None when the
        evaluation's parser would refuse it (too large, not UTF-8, unreadable)."""
        memo = (blob, reading, limits, placed)
        with self._digest_lock:
            if memo in self._digests:
                self._digests.move_to_end(memo)
                return self._digests[memo]
            pf = self._parse(source, path, blob, limits)
            digest = library_digest(pf, reading, placed=placed) if pf is not None else None
            self._digests[memo] = digest
            while len(self._digests) > self.DIGESTS:
                self._digests.popitem(last=False)
            return digest

    def _parse(self, source: FileSource, path: str, blob: str, limits: Limits) -> ParsedFile | None:
        memo = (blob, limits)
        if memo in self._parsed:
            self._parsed.move_to_end(memo)
            return self._parsed[memo]
        try:
            data = source.read_bytes(path)
            data.decode("utf-8")
            pf: ParsedFile | None = ScriptParser(limits).parse_bytes(data, path)
        except (InputError, UnicodeDecodeError, ExtractionError):
            pf = None
        self._parsed[memo] = pf
        while len(self._parsed) > 2:  # a PR's base and head
            self._parsed.popitem(last=False)
        return pf

    def _store(self, key: Key, entry: _Entry) -> None:
        with self._lock:
            self._store_locked(key, entry)

    def _store_locked(self, key: Key, entry: _Entry) -> None:
        shape = _shape(key)
        names = tuple((name, how) for name, how, _ in entry.variables)
        values = tuple(found for _, _, found in entry.variables)
        group = self._entries.setdefault(shape, {})
        variants = group.setdefault(names, {}).setdefault(values, [])
        group[names][values] = group[names].pop(values)  # the newest bucket last
        variants.insert(0, entry)
        self._count += 1
        if len(variants) > self.VARIANTS:
            variants.pop()
            self._count -= 1
        self._entries.move_to_end(shape)
        while self._count > self.max_entries and self._entries:
            # the oldest bucket of the shape used least recently
            oldest_shape, oldest = next(iter(self._entries.items()))
            oldest_names, buckets = next(iter(oldest.items()))
            oldest_values = next(iter(buckets))
            self._count -= len(buckets.pop(oldest_values))
            if not buckets:
                del oldest[oldest_names]
            if not oldest:
                del self._entries[oldest_shape]


def _moved(entry: _Entry, moves: _Moves) -> _Entry | None:
    """``entry`` as it holds for the libraries' blobs now: its library lines where they are
    now, its reads and layouts those of the blobs; None when the lines cannot be moved (a
    failed evaluation's message is not moved: it is evaluated again)."""
    if not moves:
        return entry
    if entry.result is None:
        return None
    result = shift_result(entry.result, {path: move[:2] for path, move in moves.items()})
    if result is None:
        return None
    reads = tuple(
        (read, moves[read[1]][2] if read[0] == "file" and read[1] in moves else state)
        for read, state in entry.reads
    )
    libraries = {
        path: replace(library, layout=moves[path][1]) if path in moves else library
        for path, library in entry.libraries.items()
    }
    return replace(entry, result=result, reads=reads, libraries=libraries)


def _variables(items: tuple[tuple[str, str], ...], usage: Usage) -> tuple[Variable, ...]:
    """The input variables an evaluation read and what it found in each."""
    found: list[Variable] = []
    for name, value in items:
        if usage.every_variable or name in usage.variables:
            found.append((name, "=", value))
        elif name in usage.tested:
            found.append((name, "?", "empty" if value == "" else "set"))
    return tuple(found)


def _items(key: Key) -> tuple[tuple[str, str], ...]:
    """The input environment a key names (:meth:`EvaluationCache.key`), in order."""
    items = key[1]
    assert isinstance(items, tuple)
    return items


def _shape(key: Key) -> Key:
    """The key with the input's names in place of the environment: the entries of one shape
    differ in the values of the variables each read (those it never read cannot matter)."""
    return (key[0], tuple(name for name, _ in _items(key)), *key[2:])


def _parser_limits(key: Key) -> Limits:
    """The parser's limits, named by the key (:meth:`EvaluationCache.key`)."""
    limits = key[4]
    assert isinstance(limits, tuple) and isinstance(limits[1], Limits)
    return limits[1]
