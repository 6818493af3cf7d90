"""The state store on SQLite and PostgreSQL: atomic claims, the per-PR state machine,
resumption of dead runs, and migrations that match the models."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from bot.state.migrate import upgrade
from bot.state.models import Base
from bot.state.records import Approval
from bot.state.store import Store


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'state.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    opened = Store.open(url, clock=Clock())
    yield opened
    opened.close()


def clock_of(store: Store) -> Clock:
    assert isinstance(store.db.clock, Clock)
    return store.db.clock


def test_migrations_match_the_models_and_are_idempotent(store: Store) -> None:
    upgrade(store.db.engine)  # a second start changes nothing
    with store.db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_a_delivery_is_claimed_exactly_once_under_concurrency(store: Store) -> None:
    results: list[bool] = []
    barrier = threading.Barrier(8)

    def claim() -> None:
        barrier.wait()
        results.append(
            store.deliveries.claim("guid-1", event="e", action="a", repo="o/r", trigger="{}")
        )

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 7 + [True]
    # a failed delivery can be redelivered; a done one cannot
    store.deliveries.set_status("guid-1", "failed", "boom")
    assert store.deliveries.claim("guid-1", event="e", action="a", repo="o/r", trigger="{}")
    store.deliveries.set_status("guid-1", "done")
    assert not store.deliveries.claim("guid-1", event="e", action="a", repo="o/r", trigger="{}")


def test_requests_coalesce_per_pr(store: Store) -> None:
    approval = Approval("a" * 40, "maintainer", False)
    assert store.syncs.request("o/r", 1, approval=None, dry_run=False) is None  # unapproved
    first = store.syncs.request("o/r", 1, approval=approval, dry_run=True)
    assert first is not None and first.enqueue
    again = store.syncs.request("o/r", 1, approval=None, dry_run=True)
    assert again is not None and not again.enqueue  # absorbed while pending
    lease = store.syncs.acquire(first.sync_id, "w1", stale_after=60)
    assert lease is not None and lease.dry_run and lease.generation == 1
    assert store.syncs.acquire(first.sync_id, "w2", stale_after=60) is None  # one runner per PR

    moved = Approval("b" * 40, "label", False)
    during = store.syncs.request("o/r", 1, approval=moved, dry_run=False)
    assert during is not None and not during.enqueue and during.state == "running"
    assert store.syncs.finish(first.sync_id, "w1")  # dirty: the runner re-queues it
    after = store.syncs.get(first.sync_id)
    assert after is not None
    assert (after.state, after.generation, after.approved_sha, after.dry_run) == (
        "pending",
        2,
        "b" * 40,
        False,
    )


def test_a_dead_runner_is_resumed_with_the_same_generation(store: Store) -> None:
    ticket = store.syncs.request("o/r", 2, approval=Approval("c" * 40, "m", True), dry_run=False)
    assert ticket is not None
    lease = store.syncs.acquire(ticket.sync_id, "dead-worker", stale_after=30)
    assert lease is not None
    clock_of(store).now += 10
    assert store.syncs.heartbeat(ticket.sync_id, "dead-worker")
    assert store.syncs.requeue_stale(30) == []  # heartbeat is fresh
    clock_of(store).now += 31
    assert store.syncs.requeue_stale(30) == [ticket.sync_id]
    assert store.syncs.requeue_stale(30) == []  # only once
    resumed = store.syncs.acquire(ticket.sync_id, "new-worker", stale_after=30)
    assert resumed is not None and resumed.generation == lease.generation
    assert resumed.external_id == lease.external_id
    assert not store.syncs.heartbeat(ticket.sync_id, "dead-worker")  # its lease is gone
    assert not store.syncs.finish(ticket.sync_id, "dead-worker")
    assert not store.syncs.finish(ticket.sync_id, "new-worker")
    done = store.syncs.get(ticket.sync_id)
    assert done is not None and done.state == "done" and done.lease_owner is None


def test_alignment_records_declines_stickies_refusals(store: Store) -> None:
    record = store.alignments.save(
        bench_repo="o/b",
        bench_pr=1,
        recipe_path="models/a/b.yaml",
        recipes_repo="o/r",
        branch="recipe-sync/b-1/a-b",
        pr_number=5,
        fingerprint="f" * 64,
    )
    assert record.state == "open" and store.alignments.count_open("o/r") == 1
    assert store.alignments.count_created_since("o/r", clock_of(store).now - 10) == 1
    store.alignments.decline("o/r", "models/a/b.yaml", "f" * 64, 5)
    store.alignments.decline("o/r", "models/a/b.yaml", "f" * 64, 5)
    assert store.alignments.is_declined("o/r", "models/a/b.yaml", "f" * 64)
    assert not store.alignments.is_declined("o/r", "models/a/b.yaml", "e" * 64)
    store.conversation.set_sticky_comment(
        "o/b", 1, "verify", 3_000_000_000
    )  # GitHub ids exceed 2**31
    assert store.conversation.sticky_comment("o/b", 1, "verify") == 3_000_000_000
    store.conversation.set_sticky_comment("o/b", 1, "verify", None)
    assert store.conversation.sticky_comment("o/b", 1, "verify") is None
    assert store.conversation.claim_refusal(
        "o/b", 1, "visitor"
    ) and not store.conversation.claim_refusal("o/b", 1, "visitor")


def test_dropped_hunks_per_alignment_pr(store: Store) -> None:
    store.alignments.save(
        bench_repo="o/b", bench_pr=1, recipe_path="models/a/b.yaml", recipes_repo="o/r",
        branch="recipe-sync/b-1/a-b", pr_number=5,
    )  # fmt: skip
    record = store.alignments.by_pr("o/r", 5)
    assert record is not None and (record.bench_pr, record.recipe_path) == (1, "models/a/b.yaml")
    assert store.alignments.by_pr("o/r", 6) is None
    assert store.choices.drop("o/b", 1, "models/a/b.yaml", "--moe-backend", login="m")
    assert not store.choices.drop("o/b", 1, "models/a/b.yaml", "--moe-backend", login="n")
    assert store.choices.drop("o/b", 1, "*", "AITER_TRITON_LOG_LEVEL", login="n")
    assert store.choices.drop("o/b", 2, "*", "--moe-backend", login="n")  # another benchmark PR
    assert store.choices.dropped("o/b", 1) == {
        "models/a/b.yaml": {"--moe-backend": "m"},
        "*": {"AITER_TRITON_LOG_LEVEL": "n"},
    }
    # keep on the alignment PR forgets its file's drop and the benchmark PR's one for all files
    assert store.choices.keep("o/b", 1, "models/a/b.yaml", "AITER_TRITON_LOG_LEVEL")
    assert store.choices.keep("o/b", 1, None, "--moe-backend")
    assert not store.choices.keep("o/b", 1, None, "--moe-backend")
    assert store.choices.dropped("o/b", 1) == {}
    # an add is the other choice for the same hunk: it replaces a drop, keep forgets it
    assert store.choices.drop("o/b", 1, "*", "--linear-backend", login="m")
    assert store.choices.choose("o/b", 1, "*", "--linear-backend", "add", login="n")
    assert not store.choices.choose("o/b", 1, "*", "--linear-backend", "add", login="n")
    assert store.choices.dropped("o/b", 1) == {}
    assert store.choices.added("o/b", 1) == {"*": {"--linear-backend": "n"}}
    assert store.choices.keep("o/b", 1, None, "--linear-backend")
    assert store.choices.added("o/b", 1) == {}
    assert store.choices.dropped("o/b", 2) == {"*": {"--moe-backend": "n"}}
