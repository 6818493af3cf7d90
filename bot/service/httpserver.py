"""The HTTP server of ``serve``: uvicorn, with limits for slow or abusive clients.

uvicorn runs on uvloop with the httptools (C) parser: with the pure-Python h11 parser and
asyncio's loop the HTTP stack alone cost ~1 ms of CPU per request, which is what a burst of
deliveries queued behind on 2 CPUs (``bench/webhook_load.py``).

uvicorn closes idle keep-alive connections (``timeout_keep_alive``) but waits forever for a
request whose headers dribble in a byte at a time, reads headers of any size, and its
``limit_concurrency`` counts idle connections: 300 silent connections made it answer every
signed delivery 503. The protocol here instead (``bench/abuse.py``):

- closes a connection that has not completed its request headers ``header_timeout`` seconds
  after it opened (or after its previous response); the body has its own deadline in the
  endpoint (:data:`bot.service.web.BODY_TIMEOUT`);
- counts a request's line and headers as they arrive and answers 431 past 64 KiB or 100
  lines, with a shared budget beyond each head's first 8 KiB (:mod:`bot.service.heads`);
- takes a slot per connection (:class:`bot.service.slots.ConnectionSlots`): when all
  ``limit_concurrency`` are taken, a newcomer displaces the connection that has shown the
  least, unless its own address already holds its share.

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
from dataclasses import dataclass, replace
from types import FrameType
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from bot.errors import RecipeSyncError
from bot.service.heads import (
    HEAD_LIMIT,
    MAX_HEADER_LINES,
    TOO_LARGE,
    HeadBudget,
    HeadMeter,
    HeadTooLarge,
)
from bot.service.memory import return_freed_memory
from bot.service.slots import GITHUB_HOOK_RANGES, AddressPolicy, ConnectionSlots, Standing


@dataclass(frozen=True)
class ServerLimits:
    limit_concurrency: int = 4096  # connections at once (see ConnectionSlots)
    backlog: int = 2048
    timeout_keep_alive: float = 5.0
    header_timeout: float = 5.0
    timeout_graceful_shutdown: float = 20.0
    trusted_proxies: tuple[str, ...] = ()  # CIDRs whose X-Forwarded-For is believed
    hook_ranges: tuple[str, ...] = GITHUB_HOOK_RANGES


# written to a connection refused a slot, before closing it: cheaper than parsing its request
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n"
    b"content-length: 21\r\nconnection: close\r\n\r\ntoo many connections\n"
)
SIGNATURE_HEADER = b"x-hub-signature-256"


def guarded_protocol(
    header_timeout: float, slots: ConnectionSlots, heads: HeadBudget | None = None
) -> type[HttpToolsProtocol]:
    head_budget = heads if heads is not None else HeadBudget()
    policy = slots.policy

    class Guarded(HttpToolsProtocol):
        _deadline: asyncio.TimerHandle | None = None
        _refused = False
        _in_body = False  # the current request's headers are complete
        _signed = False  # ... and carry a signature header
        _meter: HeadMeter
        _peer = ""

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

        def standing(self) -> Standing:
            if not self._idle():
                if not self.cycle.more_body:
                    return Standing.BUSY
                return Standing.SIGNED if self._signed else Standing.UNSIGNED
            return Standing.PARTIAL if self._meter.received else Standing.SILENT

        def evict(self) -> None:
            if not self.transport.is_closing():
                self.transport.close()

        def _expire(self) -> None:
            self._deadline = None
            if self._idle() and not self.transport.is_closing():
                self.transport.close()  # headers never completed: drop the connection

        def connection_made(self, transport: Any) -> None:
            peer = transport.get_extra_info("peername")
            self._peer = str(peer[0]) if isinstance(peer, tuple) and peer else ""
            self._meter = HeadMeter(head_budget)
            if not slots.admit(self, self._peer):
                self._refused = True  # never registered with uvicorn: nothing else to undo
                transport.write(REFUSED)
                transport.close()
                return
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            """Feed the parser, counting a request's line and headers as they arrive: a head
            that passes its cap is answered 431 before the parser holds more of it. Bytes
            after complete headers (the body) are fed in slices of at most ``HEAD_LIMIT``,
            so a pipelined request's head that follows a body is counted too."""
            if self._refused:
                return
            self._unset_keepalive_if_required()
            view = memoryview(data)
            while view and not self.transport.is_closing():
                if self._in_body:
                    piece, view = view[:HEAD_LIMIT], view[HEAD_LIMIT:]
                else:
                    allowed = min(self._meter.allowance(), len(view))
                    if allowed <= 0 or not self._meter.admit(allowed):
                        self._too_large()
                        return
                    piece, view = view[:allowed], view[allowed:]
                if not self._feed(piece):
                    return
            if not self._idle():
                self._disarm()  # the request line and headers are in

        def _feed(self, piece: memoryview) -> bool:
            """uvicorn's ``data_received`` for one piece; False when the connection ends."""
            try:
                self.parser.feed_data(piece)
            except httptools.HttpParserError:
                if self._meter.lines > MAX_HEADER_LINES:
                    self._too_large()
                else:
                    self.logger.warning("Invalid HTTP request received.")
                    self.send_400_response("Invalid HTTP request received.")
                return False
            except httptools.HttpParserUpgrade:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                else:
                    self._unsupported_upgrade_warning()
                return False
            return True

        def _too_large(self) -> None:
            self._meter.reset()
            self.transport.write(TOO_LARGE)
            self.transport.close()

        def on_header(self, name: bytes, value: bytes) -> None:
            if not self._meter.header_line():
                raise HeadTooLarge  # stops the parser: answered 431 by _feed
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._in_body = True
            self._meter.reset()
            self._signed = False
            forwarded = None
            for name, value in self.headers:
                if name == SIGNATURE_HEADER:
                    self._signed = True
                elif name == b"x-forwarded-for":
                    forwarded = value.decode("latin-1")
            if forwarded is not None and policy.is_proxy(self._peer):
                slots.move(self, policy.client(self._peer, forwarded))
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._in_body = False
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self._idle() and not self.transport.is_closing():
                self._arm()  # waiting for the next request's headers

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            slots.release(self)
            self._meter.reset()
            self._disarm()
            super().connection_lost(exc)

    return Guarded


log = logging.getLogger("recipe_sync.serve")
RESTART_PAUSE = 5.0  # seconds: a server process that lived less is restarted after a pause


def _config(app: Any, host: str, port: int, log_level: str, limits: ServerLimits) -> Any:
    import uvicorn

    policy = AddressPolicy.of(limits.trusted_proxies, limits.hook_ranges)
    slots = ConnectionSlots(limits.limit_concurrency, policy)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        http=guarded_protocol(limits.header_timeout, slots),
        loop="uvloop",
        limit_concurrency=None,  # the slots bound connections without counting idle ones
        # X-Forwarded-For is believed from the trusted proxies only (uvicorn's default
        # trusts 127.0.0.1)
        proxy_headers=bool(policy.trusted_proxies),
        forwarded_allow_ips=[str(net) for net in policy.trusted_proxies] or "",
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


SPARE_DESCRIPTORS = 256  # files, database and queue sockets, the listener, git pipes


def fit_descriptors(limits: ServerLimits) -> ServerLimits:
    """Raise this process's open-file limit (soft, up to the hard one) so that
    ``limit_concurrency`` connections fit; where the hard limit is lower, bound the
    connections by it (said once in the log) instead of failing accept() at run time."""
    import resource

    wanted = limits.limit_concurrency + SPARE_DESCRIPTORS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
            soft = ceiling
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return limits
    fits = max(16, soft - SPARE_DESCRIPTORS)
    log.warning(
        "open-file limit %d: at most %d connections at once (--limit-concurrency %d)",
        soft,
        fits,
        limits.limit_concurrency,
    )
    return replace(limits, limit_concurrency=fits)


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
    limits = fit_descriptors(limits)
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
    limits = fit_descriptors(limits)  # inherited by the children
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
