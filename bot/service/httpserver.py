"""The HTTP server of ``serve``: uvicorn, with limits for slow or abusive clients.

uvicorn runs on uvloop with the httptools (C) parser: with the pure-Python h11 parser and
asyncio's loop the HTTP stack alone cost ~1 ms of CPU per request, which is what a burst of
deliveries queued behind on 2 CPUs (``bench/webhook_load.py``).

uvicorn closes idle keep-alive connections (``timeout_keep_alive``) but waits forever for a
request whose headers dribble in a byte at a time, and its ``limit_concurrency`` counts idle
connections: 300 silent connections made it answer every signed delivery 503. The protocol
here instead (``bench/abuse.py``):

- closes a connection that has not completed its request headers ``header_timeout`` seconds
  after it opened (or after its previous response); the body has its own deadline in the
  endpoint (:data:`bot.service.web.BODY_TIMEOUT`);
- takes a slot per connection (:class:`bot.service.slots.ConnectionSlots`): at most
  ``connections_per_ip`` per client address, and at ``limit_concurrency`` a new connection
  displaces the oldest one without a complete request, so a delivery always gets in.

Behind a reverse proxy (nginx ``client_header_timeout`` / ``client_body_timeout``,
``client_max_body_size 25m``, ``limit_conn``) these limits are a second line.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import errno
import gc
import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from bot.errors import RecipeSyncError
from bot.service.memory import return_freed_memory
from bot.service.slots import ConnectionSlots


@dataclass(frozen=True)
class ServerLimits:
    limit_concurrency: int = 256  # connections at once (see ConnectionSlots)
    connections_per_ip: int = 64  # 0: no bound (behind a reverse proxy)
    backlog: int = 2048
    timeout_keep_alive: float = 5.0
    header_timeout: float = 5.0
    timeout_graceful_shutdown: float = 20.0


# written to a connection refused a slot, before closing it: cheaper than parsing its request
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n"
    b"content-length: 21\r\nconnection: close\r\n\r\ntoo many connections\n"
)


def guarded_protocol(header_timeout: float, slots: ConnectionSlots) -> type[HttpToolsProtocol]:
    class Guarded(HttpToolsProtocol):
        _deadline: asyncio.TimerHandle | None = None
        _refused = False

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

        def evictable(self) -> bool:
            return self._idle() or bool(self.cycle.more_body)

        def evict(self) -> None:
            if not self.transport.is_closing():
                self.transport.close()

        def _expire(self) -> None:
            self._deadline = None
            if self._idle() and not self.transport.is_closing():
                self.transport.close()  # headers never completed: drop the connection

        def connection_made(self, transport: Any) -> None:
            peer = transport.get_extra_info("peername")
            ip = str(peer[0]) if isinstance(peer, tuple) and peer else ""
            if not slots.admit(self, ip):
                self._refused = True  # never registered with uvicorn: nothing else to undo
                transport.write(REFUSED)
                transport.close()
                return
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            super().data_received(data)
            if not self._idle():
                self._disarm()  # the request line and headers are in

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._idle() and not self.transport.is_closing():
                self._arm()  # waiting for the next request's headers

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            slots.release(self)
            self._disarm()
            super().connection_lost(exc)

    return Guarded


log = logging.getLogger("recipe_sync.serve")
RESTART_PAUSE = 5.0  # seconds: a server process that lived less is restarted after a pause


def _config(app: Any, host: str, port: int, log_level: str, limits: ServerLimits) -> Any:
    import uvicorn

    slots = ConnectionSlots(limits.limit_concurrency, limits.connections_per_ip)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        http=guarded_protocol(limits.header_timeout, slots),
        loop="uvloop",
        limit_concurrency=None,  # the slots bound connections without counting idle ones
        backlog=limits.backlog,
        timeout_keep_alive=int(limits.timeout_keep_alive),
        timeout_graceful_shutdown=int(limits.timeout_graceful_shutdown),
    )


def _ready(app: Any) -> Any:
    # the ~160k objects of the imports and the app never become garbage: moved out of the
    # collector's reach, a full collection no longer stalls requests behind scanning them
    gc.collect()
    gc.freeze()
    return_freed_memory()  # large request bodies give their memory back when freed
    return app


class CannotListen(RecipeSyncError):
    """The port cannot be bound (in use, or not allowed): one line and exit 2 (``main``)."""


def listen(host: str, port: int, backlog: int) -> socket.socket:
    """The listening socket, bound before anything starts (app, consumer, children), so a
    port in use is one line, not uvicorn's late ``sys.exit(1)`` or an OSError traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(backlog)
    except OSError as err:
        listener.close()
        why = (err.strerror or str(err)).lower()
        hint = " (is another server running on it?)" if err.errno == errno.EADDRINUSE else ""
        raise CannotListen(f"cannot listen on {host}:{port}: {why}{hint}") from None
    listener.set_inheritable(True)
    return listener


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(parent: int) -> None:
    """Ask Linux to send this (forked) process SIGTERM when its parent dies, so server
    processes never outlive a supervisor that was SIGKILLed (or crashed) and keep the port.
    Elsewhere a no-op. If the parent is already gone (it died before the prctl), exit now."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return  # not Linux / no prctl
    if os.getppid() != parent:
        os._exit(0)


def run(
    build: Callable[[], Any],
    host: str,
    port: int,
    log_level: str,
    limits: ServerLimits,
    on_listening: Callable[[], None] = lambda: None,
) -> None:
    """One server process: the app ``build()`` returns (``on_listening``: once bound)."""
    import uvicorn

    listener = listen(host, port, limits.backlog)
    on_listening()
    # uvicorn shuts down gracefully on SIGINT, then re-raises it
    try:
        with contextlib.suppress(KeyboardInterrupt):
            config = _config(_ready(build()), host, port, log_level, limits)
            uvicorn.Server(config).run(sockets=[listener])
    finally:
        listener.close()


def run_processes(
    build: Callable[[], Any],
    host: str,
    port: int,
    log_level: str,
    limits: ServerLimits,
    processes: int,
    on_listening: Callable[[], None] = lambda: None,
) -> None:
    """``processes`` server processes on one listening socket (pre-fork), each with the app
    its own ``build()`` returns after the fork (its own database and queue connections).

    One Python process is one core at most: on 2 cores a burst of deliveries queued behind
    the one event loop. The parent only supervises: SIGINT or SIGTERM stops every child
    (gracefully, as uvicorn does), a child that dies otherwise is replaced; the children get
    SIGTERM if the parent itself dies (:func:`die_with_parent`)."""
    import uvicorn

    listener = listen(host, port, limits.backlog)
    on_listening()
    parent = os.getpid()

    def start() -> int:
        pid = os.fork()
        if pid == 0:  # the child: its own app, then the server until a signal stops it
            die_with_parent(parent)  # SIGTERM: uvicorn's graceful shutdown
            signal.signal(signal.SIGINT, signal.default_int_handler)  # not the parent's
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            code = 0
            try:
                config = _config(_ready(build()), host, port, log_level, limits)
                uvicorn.Server(config).run(sockets=[listener])
            except KeyboardInterrupt:
                pass  # stopped by SIGINT, after uvicorn's graceful shutdown
            except BaseException:
                log.exception("server process %d failed", os.getpid())
                code = 1
            finally:
                os._exit(code)
        started[pid] = time.monotonic()
        return pid

    started: dict[int, float] = {}
    children = {start() for _ in range(processes)}
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            for pid in children:
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        while children:
            pid, status = os.wait()
            children.discard(pid)
            lived = time.monotonic() - started.pop(pid, 0.0)
            if not stopping:
                log.error("server process %d ended (status %d); starting another", pid, status)
                if lived < RESTART_PAUSE:  # failing at start-up: do not spin
                    time.sleep(RESTART_PAUSE)
                if not stopping:
                    children.add(start())
    finally:
        listener.close()
