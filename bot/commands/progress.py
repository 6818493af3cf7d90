"""Progress of long commands (``audit``, ``backtest``, ``score``) on stderr.

On a terminal: one bar redrawn in place. Anywhere else (a CI log, a file, a pipe): a plain
line every few seconds, so a ten-minute run is never silent, and nothing in between.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

PLAIN_EVERY = 5.0  # seconds between plain lines off a terminal
BAR_EVERY = 0.1  # seconds between redraws of the bar
BAR_WIDTH = 30
LABEL_WIDTH = 40


class Progress:
    """``start(total)``, then ``advance(n, label)`` or ``reach(done, total, label)``, then
    ``finish()``. ``what`` names the command, ``unit`` what is counted."""

    def __init__(
        self,
        stream: TextIO,
        what: str,
        unit: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        plain_every: float | None = None,
    ) -> None:
        self.stream = stream
        self.what = what
        self.unit = unit
        self.clock = clock
        isatty = getattr(stream, "isatty", None)
        self.tty = bool(callable(isatty) and isatty())
        self.every = BAR_EVERY if self.tty else PLAIN_EVERY if plain_every is None else plain_every
        self.total = 0
        self.done = 0
        self._started = clock()
        self._last = self._started

    def start(self, total: int) -> None:
        self.total = total
        if self.tty:
            self._bar("")

    def advance(self, count: int, label: str) -> None:
        self.reach(self.done + count, self.total, label)

    def reach(self, done: int, total: int, label: str) -> None:
        self.done, self.total = done, max(total, self.total)
        now = self.clock()
        if now - self._last < self.every and self.done < self.total:
            return
        if not self.tty and self.done >= self.total:
            return  # the command's own summary line says it is done
        self._last = now
        if self.tty:
            self._bar(label)
        else:
            self._line(label, now)

    def finish(self) -> None:
        if self.tty:
            self._bar("")
            self.stream.write("\n")
            self.stream.flush()

    def _counts(self, now: float) -> str:
        total = max(self.total, self.done, 1)
        elapsed = now - self._started
        return f"{self.done}/{total} {self.unit}, {elapsed:.0f} s"

    def _line(self, label: str, now: float) -> None:
        self.stream.write(f"{self.what}: {self._counts(now)}; last {label}\n")
        self.stream.flush()

    def _bar(self, label: str) -> None:
        total = max(self.total, self.done, 1)
        filled = int(BAR_WIDTH * self.done / total)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        text = label if len(label) <= LABEL_WIDTH else label[: LABEL_WIDTH - 1] + "…"
        self.stream.write(
            f"\r{self.what} [{bar}] {self._counts(self.clock())} {text:<{LABEL_WIDTH}}"
        )
        self.stream.flush()
