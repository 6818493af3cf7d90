"""Request lines and headers before they are complete: capped per request and in total.

uvicorn bounds the time a client may take to send its headers (``--header-timeout``), not
their size: one connection sending header lines without end grew the server by 2.4 GB in
5 s, and an endless header value held the event loop for seconds. A :class:`HeadMeter` counts
the bytes of a request's line and headers as they arrive, before the parser sees them, and
the number of header lines the parser has produced:

- a head over ``HEAD_LIMIT`` bytes or ``MAX_HEADER_LINES`` lines is answered 431 and the
  connection closed (a GitHub delivery's head is ~1 KiB and ~15 lines);
- a head's first ``SMALL_HEAD`` bytes are always admitted; beyond that, heads share one
  :class:`HeadBudget` (like unverified bodies, :mod:`bot.service.bodies`), so many
  connections each sending just under the cap cannot add up to more than the budget.

Nothing kept per connection grows with what the peer sends beyond these bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.service.memory import ByteBudget

HEAD_LIMIT = 64 * 1024  # bytes of a request line and its headers
MAX_HEADER_LINES = 100
SMALL_HEAD = 8 * 1024  # always admitted: a GitHub delivery's head is ~1 KiB
HEAD_MEMORY = 16 * 1024 * 1024  # shared by the part of heads beyond SMALL_HEAD

TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain\r\n"
    b"content-length: 35\r\nconnection: close\r\n\r\nrequest line and headers too large\n"
)


class HeadTooLarge(Exception):
    """Raised from a parser callback past ``MAX_HEADER_LINES``: stops the parser."""


@dataclass
class HeadBudget(ByteBudget):
    total: int = HEAD_MEMORY


@dataclass
class HeadMeter:
    """One connection's current head: how much of it may still be fed to the parser."""

    budget: HeadBudget
    received: int = 0
    lines: int = 0
    held: int = 0  # taken from the budget (the part beyond SMALL_HEAD)

    def allowance(self) -> int:
        """Bytes of the head that may still arrive (0: it is too large)."""
        if self.lines > MAX_HEADER_LINES:
            return 0
        return HEAD_LIMIT - self.received

    def admit(self, size: int) -> bool:
        """Count ``size`` more bytes of the head; False when they do not fit the budget."""
        self.received += size
        more = max(0, self.received - SMALL_HEAD) - self.held
        if more and not self.budget.take(more):
            self.received -= size
            return False
        self.held += more
        return True

    def header_line(self) -> bool:
        """Count one parsed header line; False past ``MAX_HEADER_LINES`` (drop it)."""
        self.lines += 1
        return self.lines <= MAX_HEADER_LINES

    def reset(self) -> None:
        """The head is complete (or the connection gone): its budget is returned."""
        self.budget.give(self.held)
        self.received = self.lines = self.held = 0
