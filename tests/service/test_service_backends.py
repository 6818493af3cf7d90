"""Scale-out backends: Redis queue + PostgreSQL state, two "machines" (runtimes with their
own data directories) consuming the same queue."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.present.posted import VERIFY_MARKER
from bot.service.boot import boot
from bot.service.consumer import EmbeddedConsumer
from bot.service.queue import make_huey
from tests.service.conftest import BENCH, RECIPES, Harness, push
from tests.service.fakegithub import FakeGitHub

pytestmark = pytest.mark.services


def test_redis_and_postgres_with_two_machines(
    fake: FakeGitHub,
    tmp_path: Path,
    app_key: tuple[str, str],
    pg_url: str,
    redis_queue: tuple[str, str],
) -> None:
    redis_url, queue = redis_queue
    web = Harness(
        fake, tmp_path, app_key, redis_url=redis_url, database_url=pg_url, queue_name=queue
    )
    assert type(web.rt.huey).__name__ == "RedisHuey"
    assert web.rt.store.db.engine.dialect.name == "postgresql"
    machines = []
    for index in range(2):
        settings = web.settings.__class__(
            **{**web.settings.__dict__, "data_dir": tmp_path / f"machine-{index}"}
        )
        runtime = boot(settings, huey=make_huey(settings))
        machines.append((runtime, EmbeddedConsumer(runtime, workers=2).start()))
    try:
        push(fake, 256)
        number = fake.open_pull(BENCH, head_ref="bump")
        for _ in range(50):
            assert web.label(number, delivery="same").status_code in (200, 202)
        push(fake, 512)
        fake.refresh_pull_head(BENCH, number)
        for _ in range(5):
            payload = fake.pull_request_payload(BENCH, number, "synchronize", sender="author")
            assert web.deliver("pull_request", payload).status_code == 202

        deadline = time.monotonic() + 90
        while True:
            sync = web.rt.store.syncs.find(BENCH, number)
            idle = len(web.rt.huey.pending()) == 0 and len(web.rt.huey.scheduled()) == 0
            if sync is not None and sync.state == "done" and idle and not sync.dirty:
                break
            assert time.monotonic() < deadline, sync
            time.sleep(0.2)
        time.sleep(0.5)  # let any straggler task finish
        assert len(fake.pulls[RECIPES]) == 1
        comments = [
            c for c in fake.comments_on(BENCH, number) if c["body"].startswith(VERIFY_MARKER)
        ]
        assert len(comments) == 1
        assert web.rt.store.deliveries.count() == 6
    finally:
        for runtime, consumer in machines:
            consumer.stop()
            runtime.close()
        web.close()


def test_redis_queue_keys_are_removed_after_a_test(redis_queue: tuple[str, str]) -> None:
    import redis

    from bot.settings import Settings

    url, name = redis_queue
    huey = make_huey(Settings(redis_url=url, queue_name=name))
    huey.enqueue(huey.task()(lambda: None).s())
    client = redis.Redis.from_url(url)
    assert client.exists(f"huey.redis.{name}") == 1  # the fixture's cleanup pattern matches
