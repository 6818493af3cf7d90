"""``recipe-sync serve``: the webhook endpoint, with an in-process consumer by default."""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from bot.commands.grammar import add_jobs, jobs, note
from bot.errors import InputError, Location
from bot.service.slots import GITHUB_HOOK_RANGES, parse_networks


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
        default=4096,
        help=(
            "connections at once; when all are taken a newcomer displaces the connection that "
            "has shown the least (silent, then partial headers, then unsigned), unless its "
            "address already holds its share; 503 only when every one is busy with a complete "
            "request (default 4096; the open-file limit is raised to fit)"
        ),
    )
    limits.add_argument(
        "--trusted-proxies",
        default="",
        metavar="CIDR[,CIDR]",
        help="reverse proxies whose X-Forwarded-For names the client (default: none; "
        "X-Forwarded-For from any other address is ignored)",
    )
    limits.add_argument(
        "--hook-ranges",
        default=",".join(GITHUB_HOOK_RANGES),
        metavar="CIDR[,CIDR]",
        help="GitHub's webhook source ranges (GET https://api.github.com/meta, 'hooks'): "
        "their connections are displaced last and never refused for their address's share "
        "(default: the ranges GitHub publishes; 'none': no address is GitHub's)",
    )
    limits.add_argument("--connections-per-ip", type=int, help=argparse.SUPPRESS)  # old option
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


def _cidrs(value: str, option: str) -> tuple[str, ...]:
    """A comma-separated CIDR list (``none``: empty), checked now: a typo is one line."""
    if value.strip().lower() == "none":
        return ()
    cidrs = tuple(part.strip() for part in value.split(",") if part.strip())
    try:
        parse_networks(cidrs, option)
    except ValueError as err:
        raise InputError(Location("command line", option), str(err).split(": ", 1)[1]) from None
    return cidrs


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

    if args.connections_per_ip is not None:
        note(
            "warning: --connections-per-ip is no longer used: a full server refuses an "
            "address only when it holds its share (--limit-concurrency), and never GitHub's "
            "(--hook-ranges) or a trusted proxy's (--trusted-proxies)"
        )
    limits = ServerLimits(
        limit_concurrency=args.limit_concurrency,
        backlog=args.backlog,
        timeout_keep_alive=args.timeout_keep_alive,
        header_timeout=args.header_timeout,
        trusted_proxies=_cidrs(args.trusted_proxies, "--trusted-proxies"),
        hook_ranges=_cidrs(args.hook_ranges, "--hook-ranges"),
    )
    if args.processes > 1:
        rt.close()  # each process connects on its own after the fork
        run_processes(
            build, args.host, args.port, args.log_level, limits, args.processes, listening
        )
    else:
        run(build, args.host, args.port, args.log_level, limits, listening)
    return 0
