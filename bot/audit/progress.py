"""A one-line progress bar on stderr, drawn only when stderr is a terminal."""

from __future__ import annotations

import time
from typing import TextIO


class ProgressBar:
    def __init__(self, stream: TextIO, *, width: int = 30, interval: float = 0.1) -> None:
        self.stream = stream
        self.width = width
        self.interval = interval
        self.total = 0
        self.done = 0
        self._last = 0.0
        self._started = time.perf_counter()

    @classmethod
    def for_terminal(cls, stream: TextIO) -> ProgressBar | None:
        isatty = getattr(stream, "isatty", None)
        return cls(stream) if callable(isatty) and isatty() else None

    def start(self, total: int) -> None:
        self.total = total
        self._started = time.perf_counter()
        self._draw("", force=True)

    def __call__(self, rows: int, key: str) -> None:
        self.done += rows
        self._draw(key)

    def _draw(self, key: str, *, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self._last < self.interval and self.done < self.total:
            return
        self._last = now
        total = max(self.total, self.done, 1)
        filled = int(self.width * self.done / total)
        bar = "#" * filled + "-" * (self.width - filled)
        rate = self.done / max(now - self._started, 1e-6)
        label = key if len(key) <= 40 else key[:39] + "…"
        self.stream.write(
            f"\raudit [{bar}] {self.done}/{total} launch lines {rate:5.0f}/s {label:<40}"
        )
        self.stream.flush()

    def finish(self) -> None:
        self._draw("", force=True)
        self.stream.write("\n")
        self.stream.flush()
