"""The durable queue: Huey on SQLite in the data directory (embedded, no server) or on Redis
when ``REDIS_URL`` is set (several workers on several machines). Same task code for both.

Tasks carry only ids; their state lives in the store. Huey removes a task from the queue
when a worker takes it, so a worker killed mid-task loses it: the reconciler
(:mod:`bot.service.reconcile`) re-enqueues work whose heartbeat stopped.
"""

from __future__ import annotations

from huey import Huey, RedisHuey, SqliteHuey

from bot.settings import Settings


def make_huey(settings: Settings) -> Huey:
    if settings.redis_url:
        return RedisHuey(settings.queue_name, url=settings.redis_url, results=False, utc=True)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return SqliteHuey(
        settings.queue_name,
        filename=str(settings.data_dir / "queue.db"),
        results=False,
        utc=True,
    )


def ping(huey: Huey) -> None:
    """Raise if the queue backend is unreachable."""
    huey.storage.queue_size()
