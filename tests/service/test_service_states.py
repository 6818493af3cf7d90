"""The two state machines: every state has its moves, the store's statements agree with
them, and an illegal move raises before anything is written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.state.records import Approval
from bot.state.states import (
    ALIGNMENT_MOVES,
    ALIGNMENT_STARTS,
    RESTARTABLE,
    SYNC_MOVES,
    AlignmentState,
    IllegalTransition,
    SyncState,
)
from bot.state.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'state.db'}")
    yield opened
    opened.close()


def test_every_state_has_its_moves() -> None:
    assert set(SYNC_MOVES) == set(SyncState)
    assert set(ALIGNMENT_MOVES) == set(AlignmentState)
    assert set(AlignmentState) >= ALIGNMENT_STARTS


def test_the_sync_statements_follow_the_table() -> None:
    assert all(SyncState.PENDING in SYNC_MOVES[state] for state in RESTARTABLE)
    # the lease is taken from pending, or from running when its heartbeat stopped
    assert SyncState.sources(SyncState.RUNNING) == (SyncState.PENDING, SyncState.RUNNING)
    assert SyncState.RUNNING.check(SyncState.DONE) is SyncState.DONE


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (SyncState.IDLE, SyncState.RUNNING),
        (SyncState.DONE, SyncState.RUNNING),
        (SyncState.PENDING, SyncState.DONE),
        (SyncState.RUNNING, SyncState.IDLE),
    ],
)
def test_an_illegal_sync_move_raises(source: SyncState, target: SyncState) -> None:
    with pytest.raises(IllegalTransition, match=f"from {source} to {target}"):
        source.check(target)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (AlignmentState.MERGED, AlignmentState.AUTOCLOSED),
        (AlignmentState.MERGED, AlignmentState.CLOSED),
        (AlignmentState.AUTOCLOSED, AlignmentState.ABANDONED),
        (AlignmentState.CLOSED, AlignmentState.ABANDONED),
    ],
)
def test_an_illegal_alignment_move_raises(source: AlignmentState, target: AlignmentState) -> None:
    with pytest.raises(IllegalTransition):
        source.check(target)


def test_a_sync_finishes_done_or_failed_only(store: Store) -> None:
    ticket = store.syncs.request("o/b", 1, approval=Approval("a" * 40, "m", False), dry_run=False)
    assert ticket is not None and ticket.state is SyncState.PENDING
    assert store.syncs.acquire(ticket.sync_id, "w", 60.0) is not None
    with pytest.raises(IllegalTransition):
        store.syncs.finish(ticket.sync_id, "w", state=SyncState.IDLE)
    snapshot = store.syncs.get(ticket.sync_id)
    assert snapshot is not None and snapshot.state is SyncState.RUNNING  # nothing written
    store.syncs.finish(ticket.sync_id, "w", state=SyncState.FAILED)
    snapshot = store.syncs.get(ticket.sync_id)
    assert snapshot is not None and snapshot.state is SyncState.FAILED


def test_an_illegal_alignment_move_writes_nothing(store: Store) -> None:
    where = {"bench_repo": "o/b", "bench_pr": 1, "recipe_path": "r.yaml", "recipes_repo": "o/r"}
    record = store.alignments.save(branch="b", pr_number=5, **where)
    assert record.state is AlignmentState.OPEN and record.state.is_live
    store.alignments.save(branch="b", state=AlignmentState.MERGED, **where)
    with pytest.raises(IllegalTransition, match="from merged to autoclosed"):
        store.alignments.save(branch="b", state=AlignmentState.AUTOCLOSED, pr_number=6, **where)
    found = store.alignments.by_branch("o/r", "b")
    assert found is not None and (found.state, found.pr_number) == (AlignmentState.MERGED, 5)
    with pytest.raises(IllegalTransition, match="cannot start closed"):
        store.alignments.save(branch="c", state=AlignmentState.CLOSED, **where)
    assert store.alignments.by_branch("o/r", "c") is None
    # a new change for the same branch is proposed again
    reopened = store.alignments.save(branch="b", state=AlignmentState.OPEN, **where)
    assert reopened.state is AlignmentState.OPEN
