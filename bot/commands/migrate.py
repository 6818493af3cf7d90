"""``recipe-sync migrate``: bring the state database up to date, then exit.

``serve`` and ``worker`` apply pending migrations at start too (serialised: several may start
at once); compose.yaml runs this first, so a schema problem stops the stack with one line
before any server accepts a delivery."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "migrate",
        help="apply the state database's migrations (DATABASE_URL), then exit",
        description=__doc__,
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.service.boot import migrate
    from bot.service.startup import hide_password
    from bot.settings import Settings

    settings = Settings.from_env()
    revision = migrate(settings)
    print(f"migrate: {hide_password(settings.effective_database_url)} at revision {revision}")
    return 0
