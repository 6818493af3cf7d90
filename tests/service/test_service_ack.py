"""The ack's group commit: deliveries arriving together are recorded in one transaction and
enqueued together, each answered with its own outcome; on both deployments."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from bot.service.ack import AckGroups, accept_group
from bot.service.boot import boot
from bot.service.events import LabelAdded, event_json
from bot.service.runtime import Runtime
from bot.settings import Settings
from bot.state.records import DeliveryClaim
from tests.service.conftest import SECRET

TRIGGER = LabelAdded(
    repo="o/bench",
    action="labeled",
    pr_number=7,
    head_sha="a" * 40,
    head_ref="b",
    head_repo="o/bench",
    is_fork=False,
)


def claim(delivery_id: str) -> DeliveryClaim:
    return DeliveryClaim(delivery_id, "pull_request", "labeled", "o/bench", event_json(TRIGGER))


def queued_ids(rt: Runtime) -> list[str]:
    """The delivery ids of the queued ``handle_delivery`` jobs, in queue order."""
    return [task.args[0] for task in rt.huey.pending()]


@pytest.fixture
def sqlite_rt(tmp_path: Path) -> Iterator[Runtime]:
    rt = boot(Settings(webhook_secret=SECRET, data_dir=tmp_path / "data"))
    yield rt
    rt.close()


@pytest.fixture
def services_rt(tmp_path: Path, pg_url: str, redis_queue: tuple[str, str]) -> Iterator[Runtime]:
    redis_url, queue = redis_queue
    settings = Settings(
        webhook_secret=SECRET,
        data_dir=tmp_path / "data",
        database_url=pg_url,
        redis_url=redis_url,
        queue_name=queue,
    )
    rt = boot(settings)
    yield rt
    rt.close()


def check_group_outcomes(rt: Runtime) -> None:
    assert accept_group(rt, [claim("old")]) == ["accepted"]
    outcomes = accept_group(rt, [claim("a"), claim("old"), claim("b"), claim("a")])
    # new, replayed, new, the same id twice in one group
    assert outcomes == ["accepted", "duplicate", "accepted", "duplicate"]
    assert sorted(queued_ids(rt)) == ["a", "b", "old"]  # one job per delivery
    assert rt.store.deliveries.count() == 3


def test_a_group_answers_each_delivery_on_sqlite(sqlite_rt: Runtime) -> None:
    check_group_outcomes(sqlite_rt)


@pytest.mark.services
def test_a_group_answers_each_delivery_on_redis_and_postgres(services_rt: Runtime) -> None:
    check_group_outcomes(services_rt)


@pytest.mark.services
def test_a_redis_group_is_enqueued_in_one_round_trip_as_huey_would(services_rt: Runtime) -> None:
    rt = services_rt
    sent: list[int] = []
    connection = rt.huey.storage.conn
    execute = connection.execute_command

    def counting(*args: object, **kwargs: object) -> object:
        sent.append(1)
        return execute(*args, **kwargs)

    connection.execute_command = counting  # single commands; a pipeline bypasses this
    rt.enqueue_deliveries(["x", "y", "z"])
    assert sent == []  # no LPUSH of its own per delivery
    # the worker's side reads them as Huey's own enqueue writes them, oldest first
    assert queued_ids(rt) == ["x", "y", "z"]
    sent.clear()
    rt.enqueue_delivery("w")  # one delivery: Huey's own enqueue
    assert len(sent) == 1 and queued_ids(rt) == ["x", "y", "z", "w"]
    task = rt.huey.dequeue()
    assert task is not None and task.name == "recipe_sync.handle_delivery" and task.args == ("x",)


def test_a_failed_enqueue_fails_the_groups_new_deliveries_and_releases_them(
    sqlite_rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = sqlite_rt
    assert accept_group(rt, [claim("old")]) == ["accepted"]

    def broken(delivery_ids: Sequence[str]) -> None:
        raise ConnectionError("queue down")

    monkeypatch.setattr(rt, "enqueue_deliveries", broken)
    outcomes = accept_group(rt, [claim("n1"), claim("old"), claim("n2")])
    assert isinstance(outcomes[0], ConnectionError) and isinstance(outcomes[2], ConnectionError)
    assert outcomes[1] == "duplicate"
    monkeypatch.undo()
    # released: GitHub's retries of n1 and n2 are accepted
    assert accept_group(rt, [claim("n1"), claim("n2")]) == ["accepted", "accepted"]


def test_deliveries_arriving_during_a_write_are_the_next_group(
    sqlite_rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = sqlite_rt
    groups: list[list[str]] = []
    first_write = threading.Event()
    claim_deliveries = rt.store.deliveries.claim_all

    def slow_first(claims: Sequence[DeliveryClaim]) -> set[str]:
        groups.append([c.delivery_id for c in claims])
        if len(groups) == 1:
            first_write.set()
            time.sleep(0.2)  # the rest arrive while this group is being written
        return claim_deliveries(claims)

    monkeypatch.setattr(rt.store.deliveries, "claim_all", slow_first)

    async def burst() -> list[str]:
        acks = AckGroups(rt)
        try:
            first = asyncio.ensure_future(acks.accept("d0", "pull_request", TRIGGER))
            await asyncio.get_running_loop().run_in_executor(None, first_write.wait)
            rest = [acks.accept(f"d{i}", "pull_request", TRIGGER) for i in range(1, 20)]
            rest.append(acks.accept("d3", "pull_request", TRIGGER))  # a replay in the group
            return list(await asyncio.gather(first, *rest))
        finally:
            acks.close()

    outcomes = asyncio.run(burst())
    assert groups == [["d0"], [f"d{i}" for i in range(1, 20)] + ["d3"]]
    assert outcomes == ["accepted"] * 20 + ["duplicate"]
    assert sorted(queued_ids(rt)) == sorted(f"d{i}" for i in range(20))


def test_a_failed_insert_fails_every_request_of_its_group(
    sqlite_rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = sqlite_rt

    def down(claims: Sequence[DeliveryClaim]) -> set[str]:
        raise OSError("database is gone")

    monkeypatch.setattr(rt.store.deliveries, "claim_all", down)

    async def two() -> list[object]:
        acks = AckGroups(rt)
        try:
            calls = [acks.accept(f"e{i}", "pull_request", TRIGGER) for i in range(2)]
            return await asyncio.gather(*calls, return_exceptions=True)
        finally:
            acks.close()

    results = asyncio.run(two())
    assert all(isinstance(result, OSError) for result in results)
    assert queued_ids(rt) == []


def test_after_close_a_delivery_is_refused_not_left_waiting(sqlite_rt: Runtime) -> None:
    async def after_close() -> list[object]:
        acks = AckGroups(sqlite_rt)
        acks.close()
        calls = [acks.accept(f"c{i}", "pull_request", TRIGGER) for i in range(2)]
        return await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5)

    assert all(isinstance(result, RuntimeError) for result in asyncio.run(after_close()))
    assert sqlite_rt.store.deliveries.count() == 0
