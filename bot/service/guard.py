"""What a write to GitHub calls first: a guard raises when the work must stop (the head,
base or approval moved: ``HeadMoved``; the lease was lost: ``LeaseLost``). A sync passes its
:class:`bot.service.sync.HeadGuard`; writes outside a sync pass :func:`unguarded`."""

from __future__ import annotations

from collections.abc import Callable

Guard = Callable[[], None]


def unguarded() -> None:
    """Nothing to check: the write belongs to no sync."""
