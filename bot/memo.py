"""A bounded memo: the last results by key, least recently used first out.

One type for the per-process caches of parsed blobs, validated entries and loaded recipes
(a backtest meets the same files PR after PR; the App re-syncs). Thread-safe: the App's
engine works in worker threads. A value is made outside the lock, so two threads may make
one key's value at once; the later one stays (the values are equal and read only).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedMemo(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The kept value (None too), else ``make()`` kept (an exception keeps nothing)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        found = make()
        self.put(key, found)
        return found

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
