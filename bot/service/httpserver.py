"""The HTTP server of ``serve``: uvicorn, with limits for slow or abusive clients.

uvicorn runs on uvloop with the httptools (C) parser: with the pure-Python h11 parser and
asyncio's loop the HTTP stack alone cost ~1 ms of CPU per request, which is what a burst of
deliveries queued behind on 2 CPUs (``bench/webhook_load.py``).

uvicorn closes idle keep-alive connections (``timeout_keep_alive``) and answers 503 above
``limit_concurrency``, but waits forever for a request whose headers dribble in a byte at a
time. :class:`HeaderDeadline` closes a connection that has not completed its request headers
``header_timeout`` seconds after it opened (or after its previous response); the body has its
own deadline in the endpoint (:data:`bot.service.web.BODY_TIMEOUT`). Behind a reverse proxy
(nginx ``client_header_timeout`` / ``client_body_timeout``, ``client_max_body_size 25m``)
these limits are a second line.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


@dataclass(frozen=True)
class ServerLimits:
    limit_concurrency: int = 256  # connections + tasks; above: 503 at once
    backlog: int = 2048
    timeout_keep_alive: float = 5.0
    header_timeout: float = 10.0
    timeout_graceful_shutdown: float = 20.0


def deadline_protocol(header_timeout: float) -> type[HttpToolsProtocol]:
    class HeaderDeadline(HttpToolsProtocol):
        _deadline: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(header_timeout, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _idle(self) -> bool:
            """No request in progress: waiting for (the rest of) a request's headers."""
            return self.cycle is None or bool(self.cycle.response_complete)

        def _expire(self) -> None:
            self._deadline = None
            if self._idle() and not self.transport.is_closing():
                self.transport.close()  # headers never completed: drop the connection

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if not self._idle():
                self._disarm()  # the request line and headers are in

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._idle() and not self.transport.is_closing():
                self._arm()  # waiting for the next request's headers

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderDeadline


def run(app: Any, host: str, port: int, log_level: str, limits: ServerLimits) -> None:
    import uvicorn

    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        http=deadline_protocol(limits.header_timeout),
        loop="uvloop",
        limit_concurrency=limits.limit_concurrency,
        backlog=limits.backlog,
        timeout_keep_alive=int(limits.timeout_keep_alive),
        timeout_graceful_shutdown=int(limits.timeout_graceful_shutdown),
    )
