"""Request bodies before their signature is known: capped per request and in total.

The HMAC covers the whole body, so a body must be read before anything about it can be
trusted. Each body is held in one growing buffer (no list of chunks joined at the end, which
doubled the peak) and refused as soon as it passes ``MAX_PAYLOAD`` (the rest is discarded by
the server as it streams). A body's first ``SMALL_BODY`` bytes are always admitted (the
connection slots bound how many); beyond that, bodies share one :class:`BodyBudget`, and a
body that finds it spent is refused with 503 instead of growing the process.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from bot.service.memory import ByteBudget

MAX_PAYLOAD = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
SMALL_BODY = 256 * 1024  # a typical delivery is tens of KB: never refused for memory
BODY_MEMORY = 64 * 1024 * 1024  # the shared budget for the part of bodies beyond SMALL_BODY


class TooLarge(Exception):
    pass


class OverBudget(Exception):
    """The shared budget for unverified bodies is spent (by other requests)."""


@dataclass
class BodyBudget(ByteBudget):
    total: int = BODY_MEMORY


async def read_capped(
    request: Request, limit: int = MAX_PAYLOAD, budget: BodyBudget | None = None
) -> bytearray:
    """The body, counted chunk by chunk; raises :class:`TooLarge` as soon as it would pass
    ``limit`` and :class:`OverBudget` when its part beyond ``SMALL_BODY`` does not fit in
    ``budget`` (never buffering more than either). The budget is returned when it ends:
    the caller verifies and parses the body without yielding to other requests."""
    budget = budget if budget is not None else BodyBudget()
    body = bytearray()
    held = 0
    try:
        async for chunk in request.stream():
            size = len(body) + len(chunk)
            if size > limit:
                raise TooLarge
            more = max(0, size - SMALL_BODY) - held
            if more and not budget.take(more):
                raise OverBudget
            held += more
            body += chunk
    except BaseException:
        # a traceback that outlives the answer (held by a task, in a reference cycle freed
        # only by a collection) keeps this frame: it must not keep the buffer
        body.clear()
        raise
    finally:
        budget.give(held)
    return body
