"""Script evaluations reused across commits: the same script, environment and limits give the
same result wherever every file the evaluation read (or tested for existence) is unchanged.

A backtest or the App evaluates the same launch script for the same point again and again:
for a PR's base and head, for the next PR that did not touch it, and for the other config
keys drawing on one recipe node. An entry is keyed by (script, input environment in order,
working directory, environment label, limits, handlers) and valid for a source only when
each path of its read-set (:class:`bot.sources.RecordingSource`: blob SHAs, absent files,
directory listings, symlinks) is in the recorded state. Nothing else reaches an evaluation.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.shell.budget import Limits, charge_job, metered
from bot.shell.errors import BudgetExceeded, ExtractionError
from bot.shell.handlers import Handlers
from bot.shell.result import ScriptResult
from bot.sources import FileSource, ReadKey, RecordingSource, file_state

Key = tuple[object, ...]


@dataclass(frozen=True)
class _Entry:
    reads: tuple[tuple[ReadKey, object], ...]
    result: ScriptResult | None
    error: ExtractionError | None  # a script that cannot be evaluated fails the same way
    steps: int  # what the evaluation charged the job budget
    handlers: Handlers | None  # the registry the key names by id (kept alive with the entry)


class EvaluationCache:
    """Bounded (least recently used first out) map of evaluations with their read-sets."""

    VARIANTS = 4  # entries per key: a PR's base and head, and neighbouring commits

    def __init__(self, max_entries: int = 4_096) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Key, list[_Entry]] = OrderedDict()
        self._count = 0
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()  # the App's engine runs jobs in worker threads

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
        recording = RecordingSource(source)
        result: ScriptResult | None = None
        error: ExtractionError | None = None
        with metered() as meter:
            try:
                result = run(recording)
            except BudgetExceeded:
                raise  # the step limits: kept out of the cache, as they may depend on timing
            except ExtractionError as err:
                error = err
        reads = tuple(recording.seen.items())
        self._store(key, _Entry(reads, result, error, meter.steps, handlers))
        if error is not None:
            raise error
        assert result is not None
        return result

    def _lookup(self, source: FileSource, key: Key, handlers: Handlers | None) -> _Entry | None:
        with self._lock:
            variants = list(self._entries.get(key, ()))
        for entry in variants:  # the file checks outside the lock: they may read git
            if entry.handlers is handlers and all(
                file_state(source, read) == state for read, state in entry.reads
            ):
                with self._lock:
                    self.hits += 1
                    if key in self._entries:
                        self._entries.move_to_end(key)
                return entry
        with self._lock:
            self.misses += 1
        return None

    def _store(self, key: Key, entry: _Entry) -> None:
        with self._lock:
            self._store_locked(key, entry)

    def _store_locked(self, key: Key, entry: _Entry) -> None:
        variants = self._entries.setdefault(key, [])
        variants.insert(0, entry)
        self._count += 1
        if len(variants) > self.VARIANTS:
            variants.pop()
            self._count -= 1
        self._entries.move_to_end(key)
        while self._count > self.max_entries and self._entries:
            _, dropped = self._entries.popitem(last=False)
            self._count -= len(dropped)
