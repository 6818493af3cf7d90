"""A delivery refused during a queue or database outage is one log line naming the delivery
and the error, over real HTTP: no traceback, no SQL statement, no payload in the log."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from bot.service.boot import boot
from bot.service.web import create_app
from bot.settings import Settings
from tests.service.conftest import SECRET, free_port
from tests.service.fakegithub import ServerThread
from tests.service.test_service_numbers import deliver

pytestmark = pytest.mark.services

UNREACHABLE_PG = "postgresql+psycopg://postgres@127.0.0.1:{port}/test?connect_timeout=2"


def _outage(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Any, Any]:
    values: dict[str, Any] = {"webhook_secret": SECRET, "data_dir": tmp_path / "data"}
    if kind == "redis":  # a Redis that is down: the claim is made, the enqueue fails
        values["redis_url"] = f"redis://127.0.0.1:{free_port()}/0"
        return boot(Settings(**values)), None
    values["database_url"] = request.getfixturevalue("pg_url")
    rt = boot(Settings(**values))
    if kind == "postgresql":  # PostgreSQL goes away after start
        healthy = (rt.store.db.engine, rt.store.db.autocommit)
        gone = create_engine(UNREACHABLE_PG.format(port=free_port()))
        rt.store.db.engine, rt.store.db.autocommit = gone, gone
        return rt, healthy
    # a failing statement: SQLAlchemy's message carries the SQL and its parameters
    with rt.store.db.engine.begin() as conn:
        conn.execute(text("DROP TABLE deliveries CASCADE"))
    return rt, None


@pytest.mark.parametrize("kind", ["redis", "postgresql", "failing-statement"])
def test_a_refused_delivery_is_one_line_naming_it(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    rt, healthy = _outage(kind, tmp_path, request)
    try:
        with (
            ServerThread(create_app(rt)) as server,
            httpx.Client(base_url=server.url) as http,
            caplog.at_level(logging.INFO, logger="recipe_sync"),
        ):
            statuses = [deliver(http, "issue_comment", 4242).status_code for _ in range(3)]
    finally:
        if healthy is not None:
            rt.store.db.engine, rt.store.db.autocommit = healthy
        rt.close()
    assert statuses == [503] * 3
    records = [r for r in caplog.records if r.name.startswith("recipe_sync")]
    assert len(records) == 3, [r.getMessage() for r in records]
    for record in records:
        message = record.getMessage()
        assert record.exc_info is None and "\n" not in message, message
        assert message.startswith("delivery ") and " (issue_comment) refused with 503: " in message
        assert "Error" in message.split("refused with 503: ", 1)[1], message
        assert "[SQL" not in message and "parameters" not in message and "4242" not in message
    assert len({r.getMessage().split()[1] for r in records}) == 3  # each names its delivery
