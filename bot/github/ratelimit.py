"""When to retry a GitHub request, and after how long (pure; the gateway sleeps).

GitHub's rules (docs "Rate limits for the REST API", "Best practices for integrators"):

* a 403/429 with ``retry-after`` → wait that many seconds;
* ``x-ratelimit-remaining: 0`` → primary limit: wait until ``x-ratelimit-reset`` (epoch s);
* otherwise a 403/429 that says "secondary rate limit" (or any 429) → wait at least 60 s,
  then back off exponentially;
* a plain 403 (permission) is not retryable.

Server errors and network failures are retried with exponential backoff for reads only: a
write that failed with a 5xx may still have happened, so the job is retried from the top
instead, where every side effect is found before it is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SECONDARY_MINIMUM = 60.0
MAX_ATTEMPTS = 5  # tries per request, the first one included
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class Backoff:
    seconds: float
    reason: str  # retry-after | primary-reset | secondary | server-error | network


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return str(value)
    return None


def rate_limit_wait(
    status: int, headers: Mapping[str, str], message: str, attempt: int, now: float
) -> Backoff | None:
    """Wait before retry number ``attempt`` (1-based) after a 403/429, or None."""
    if status not in (403, 429):
        return None
    retry_after = _header(headers, "retry-after")
    if retry_after is not None:
        try:
            return Backoff(max(1.0, float(retry_after)), "retry-after")
        except ValueError:
            pass  # an HTTP date: fall through to the other signals
    if _header(headers, "x-ratelimit-remaining") == "0":
        reset = _header(headers, "x-ratelimit-reset")
        try:
            until = float(reset) - now if reset is not None else SECONDARY_MINIMUM
        except ValueError:
            until = SECONDARY_MINIMUM
        # +1 s: the reset instant has one-second resolution
        return Backoff(max(1.0, until + 1.0), "primary-reset")
    lowered = message.lower()
    if status == 429 or "secondary rate limit" in lowered or "abuse" in lowered:
        return Backoff(SECONDARY_MINIMUM * 2 ** (attempt - 1), "secondary")
    return None


def transient_wait(method: str, status: int | None, attempt: int) -> Backoff | None:
    """Wait before retrying a read after a 5xx (``status``) or a network error (None)."""
    if method.upper() not in IDEMPOTENT:
        return None
    if status is None:
        return Backoff(float(2 ** (attempt - 1)), "network")
    if status in (500, 502, 503, 504):
        return Backoff(float(2 ** (attempt - 1)), "server-error")
    return None
