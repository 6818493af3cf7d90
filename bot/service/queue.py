"""The durable queue: Huey on SQLite in the data directory (embedded, no server) or on Redis
when ``REDIS_URL`` is set (several workers on several machines). Same task code for both.

Tasks carry only ids; their state lives in the store. Huey removes a task from the queue
when a worker takes it, so a worker killed mid-task loses it: the reconciler
(:mod:`bot.service.reconcile`) re-enqueues work whose heartbeat stopped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from huey import Huey, RedisHuey, SqliteHuey
from huey.api import Task
from huey.storage import RedisStorage, SqliteStorage

from bot.settings import Settings


class _SqliteStorage(SqliteStorage):  # type: ignore[misc]
    """WAL with ``synchronous=NORMAL``, as the store: survives any process crash (what we
    design for) without an fsync per enqueue (huey's default FULL cost ~8 ms per ack)."""

    def _create_connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection = super()._create_connection()
        conn.execute("pragma synchronous=NORMAL")
        return conn


class _SqliteHuey(SqliteHuey):  # type: ignore[misc]
    storage_class = _SqliteStorage


def make_huey(settings: Settings) -> Huey:
    if settings.redis_url:
        return RedisHuey(settings.queue_name, url=settings.redis_url, results=False, utc=True)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return _SqliteHuey(
        settings.queue_name,
        filename=str(settings.data_dir / "queue.db"),
        results=False,
        utc=True,
    )


def ping(huey: Huey) -> None:
    """Raise if the queue backend is unreachable."""
    huey.storage.queue_size()


def enqueue_all(huey: Huey, tasks: Sequence[Task]) -> None:
    """Enqueue ``tasks``; on Redis in one round trip. Huey's own enqueue is one LPUSH round
    trip per task (~0.2 ms of the ack's CPU each); a pipeline sends the same LPUSHes of the
    same serialised messages together. Tasks with a priority or an expiry (which Huey's
    enqueue resolves first) and Huey's immediate mode take Huey's path."""
    storage = huey.storage
    plain = all(task.priority is None and task.expires is None for task in tasks)
    if isinstance(storage, RedisStorage) and plain and not huey.immediate and len(tasks) > 1:
        with storage.conn.pipeline(transaction=False) as pipe:
            for task in tasks:
                pipe.lpush(storage.queue_key, huey.serialize_task(task))
            pipe.execute()
        return
    for task in tasks:
        huey.enqueue(task)
