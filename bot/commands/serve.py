"""``recipe-sync serve``: the webhook endpoint, with an in-process consumer by default."""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from bot.commands.grammar import add_jobs, jobs


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
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    parser.set_defaults(func=serve)


def serve(args: argparse.Namespace) -> int:
    # heavy imports here, so other subcommands start fast
    import uvicorn
    from fastapi import FastAPI

    from bot.service.boot import boot
    from bot.service.consumer import EmbeddedConsumer
    from bot.service.web import create_app
    from bot.settings import Settings

    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    threads = jobs(args)
    settings = Settings.from_env()
    settings.require_webhook_secret()
    rt = boot(settings)
    consumer = None if args.no_consumer else EmbeddedConsumer(rt, workers=threads)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if consumer is not None:
            consumer.start()
        try:
            yield
        finally:
            if consumer is not None:
                consumer.stop()
            rt.close()

    app = create_app(rt)
    app.router.lifespan_context = lifespan
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
