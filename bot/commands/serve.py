"""``recipe-sync serve``: the webhook endpoint, with an in-process consumer by default."""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from bot.commands.grammar import add_jobs, jobs
from bot.errors import InputError, Location


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the GitHub App webhook endpoint (POST /webhooks/github)",
        description=(
            "Serve POST /webhooks/github, /healthz, /readyz and /metrics. Needs only "
            "RECIPE_SYNC_WEBHOOK_SECRET: the queue and state default to SQLite files in "
            "RECIPE_SYNC_DATA_DIR and jobs run in this process. With REDIS_URL, run "
            "`recipe-sync worker` processes and pass --no-consumer."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    add_jobs(parser, 2, "in-process job threads (default 2)")
    parser.add_argument(
        "--no-consumer", action="store_true", help="only accept deliveries; workers run jobs"
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help=(
            "web server processes on one port (default 1; one per core with PostgreSQL: "
            "needs DATABASE_URL and --no-consumer)"
        ),
    )
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    limits = parser.add_argument_group(
        "limits for slow or abusive clients (behind a reverse proxy, set its timeouts too)"
    )
    limits.add_argument(
        "--limit-concurrency",
        type=int,
        default=256,
        help=(
            "connections at once; a new one displaces the oldest without a complete request "
            "(idle or still sending), else gets 503 (default 256)"
        ),
    )
    limits.add_argument(
        "--connections-per-ip",
        type=int,
        default=64,
        help="connections at once from one client address, 0: no bound (default 64; "
        "behind a reverse proxy use 0 and its per-client limit)",
    )
    limits.add_argument(
        "--body-memory",
        type=int,
        default=64,
        help="MiB shared by the request bodies not yet verified, beyond each one's first "
        "256 KiB; a body that does not fit gets 503 (default 64)",
    )
    limits.add_argument(
        "--header-timeout",
        type=float,
        default=5.0,
        help="seconds for a client to send its request headers, else closed (default 5)",
    )
    limits.add_argument(
        "--body-timeout",
        type=float,
        default=10.0,
        help="seconds for a client to send the request body, else 408 (default 10)",
    )
    limits.add_argument(
        "--timeout-keep-alive",
        type=float,
        default=5.0,
        help="seconds an idle keep-alive connection stays open (default 5)",
    )
    limits.add_argument("--backlog", type=int, default=2048, help="listen backlog (default 2048)")
    parser.set_defaults(func=serve)


def serve(args: argparse.Namespace) -> int:
    # heavy imports here, so other subcommands start fast
    from fastapi import FastAPI

    from bot.service.boot import boot
    from bot.service.consumer import EmbeddedConsumer
    from bot.service.httpserver import ServerLimits, run, run_processes
    from bot.service.startup import serve_line
    from bot.service.web import create_app
    from bot.settings import Settings

    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    threads = jobs(args)
    settings = Settings.from_env()
    settings.require_webhook_secret()
    on_sqlite = settings.effective_database_url.startswith("sqlite")
    if args.processes > 1 and (on_sqlite or not args.no_consumer):
        raise InputError(
            Location("command line", "--processes"),
            "more than one web process needs PostgreSQL (DATABASE_URL: SQLite admits one "
            "writer) and --no-consumer (jobs run in `recipe-sync worker` processes)",
        )
    rt = boot(settings)  # also applies migrations, once, before any server process starts
    jobs_by = (
        "run by `recipe-sync worker` processes"
        if args.no_consumer
        else f"run in this process ({threads} threads)"
    )

    def listening() -> None:
        line = serve_line(settings, args.host, args.port, args.processes, jobs_by)
        logging.getLogger("recipe_sync").info(line)

    def build() -> Any:
        """The app of one server process, with its own runtime (connections)."""
        own = rt if args.processes == 1 else boot(settings)
        consumer = None if args.no_consumer else EmbeddedConsumer(own, workers=threads)

        @asynccontextmanager
        async def lifespan(_: FastAPI) -> AsyncIterator[None]:
            if consumer is not None:
                consumer.start()
            try:
                yield
            finally:
                if consumer is not None:
                    consumer.stop()
                own.close()

        return create_app(
            own,
            body_timeout=args.body_timeout,
            body_memory=args.body_memory * 1024 * 1024,
            lifespan=lifespan,
        )

    limits = ServerLimits(
        limit_concurrency=args.limit_concurrency,
        connections_per_ip=args.connections_per_ip,
        backlog=args.backlog,
        timeout_keep_alive=args.timeout_keep_alive,
        header_timeout=args.header_timeout,
    )
    if args.processes > 1:
        rt.close()  # each process connects on its own after the fork
        run_processes(
            build, args.host, args.port, args.log_level, limits, args.processes, listening
        )
    else:
        run(build, args.host, args.port, args.log_level, limits, listening)
    return 0
