"""``recipe-sync worker``: run queued jobs (scale out with REDIS_URL + DATABASE_URL)."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from bot.commands.grammar import add_jobs, jobs


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "worker",
        help="run queued sync jobs (separately from `serve`, e.g. on several machines)",
        description=(
            "Consume the job queue (Redis when REDIS_URL is set, else the SQLite queue in "
            "RECIPE_SYNC_DATA_DIR) and resume syncs whose worker died."
        ),
    )
    add_jobs(parser, 2, "job threads (default 2)")
    parser.add_argument("--metrics-port", type=int, help="serve Prometheus metrics on this port")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    parser.set_defaults(func=worker)


def worker(args: argparse.Namespace) -> int:
    from prometheus_client import start_http_server

    from bot.service.boot import boot
    from bot.service.consumer import run_worker
    from bot.service.startup import worker_line
    from bot.settings import Settings

    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    threads = jobs(args)
    settings = Settings.from_env()
    rt = boot(settings)
    logging.getLogger("recipe_sync").info(worker_line(settings, threads, args.metrics_port))
    if args.metrics_port:
        start_http_server(args.metrics_port, registry=rt.metrics.registry)
    try:
        run_worker(rt, threads)
    finally:
        rt.close()
    return 0
