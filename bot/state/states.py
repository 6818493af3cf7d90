"""The two state machines of the service's records, and what each may move to.

The store moves a state only through these tables: the conditional ``UPDATE … WHERE state
IN …`` statements name their sources from them, and a move a caller asks for is checked
first (:meth:`SyncState.check`, :meth:`AlignmentState.check`): an illegal one raises
:class:`IllegalTransition` before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from bot.errors import RecipeSyncError


class IllegalTransition(RecipeSyncError):
    """A record was asked to move to a state its machine does not allow from where it is."""


class SyncState(StrEnum):
    """One benchmark PR's sync: idle → pending (enqueued) → running (lease + heartbeat) →
    done | failed. A request while running marks the run dirty, and the run goes back to
    pending when it finishes; a stale lease is taken over (running → running)."""

    IDLE = "idle"
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"

    def check(self, target: SyncState) -> SyncState:
        """``target`` when this state may move there; else :class:`IllegalTransition`."""
        if target not in SYNC_MOVES[self]:
            raise IllegalTransition(f"a sync cannot move from {self} to {target}")
        return target

    @classmethod
    def sources(cls, target: SyncState) -> tuple[SyncState, ...]:
        """The states that may move to ``target`` (for a conditional UPDATE's WHERE)."""
        return tuple(state for state in cls if target in SYNC_MOVES[state])


SYNC_MOVES: Mapping[SyncState, frozenset[SyncState]] = {
    SyncState.IDLE: frozenset({SyncState.PENDING}),
    SyncState.PENDING: frozenset({SyncState.RUNNING}),
    SyncState.RUNNING: frozenset(
        # running → running: a stale lease taken over; → pending: dirty, retry or stale
        {SyncState.RUNNING, SyncState.PENDING, SyncState.DONE, SyncState.FAILED}
    ),
    SyncState.DONE: frozenset({SyncState.PENDING}),
    SyncState.FAILED: frozenset({SyncState.PENDING}),
}

# a request starts a new run from these; from running it marks the run dirty instead
RESTARTABLE: tuple[SyncState, ...] = (SyncState.IDLE, SyncState.DONE, SyncState.FAILED)


class AlignmentState(StrEnum):
    """One alignment PR (or its branch) in the recipes repository.

    open: recipe-sync pushes to it; edited: someone else committed to its branch, so
    recipe-sync no longer pushes (a rebase label hands it back); merged, closed (unmerged by
    a human: its change is declined); autoclosed (closed by recipe-sync, its change gone);
    abandoned (its change is gone but the branch has human commits: left open); duplicate (no
    PR of its own: another benchmark PR's open alignment PR already proposes the same YAML
    edits of the recipe file, ``duplicate_of``).
    """

    OPEN = "open"
    EDITED = "edited"
    MERGED = "merged"
    CLOSED = "closed"
    AUTOCLOSED = "autoclosed"
    ABANDONED = "abandoned"
    DUPLICATE = "duplicate"

    @property
    def is_live(self) -> bool:
        """Still recipe-sync's to update or retire."""
        return self in (AlignmentState.OPEN, AlignmentState.EDITED)

    @property
    def counts_as_open(self) -> bool:
        """Open on GitHub as far as the cap on open alignment PRs goes."""
        return self.is_live or self is AlignmentState.ABANDONED

    def check(self, target: AlignmentState) -> AlignmentState:
        """``target`` when this state may move there; else :class:`IllegalTransition`."""
        if target not in ALIGNMENT_MOVES[self]:
            raise IllegalTransition(f"an alignment PR cannot move from {self} to {target}")
        return target


# A record starts open, edited when its branch already has someone else's commits, or
# duplicate when another benchmark PR's open alignment PR already proposes its edits.
ALIGNMENT_STARTS = frozenset({AlignmentState.OPEN, AlignmentState.EDITED, AlignmentState.DUPLICATE})

_PROPOSED = frozenset({AlignmentState.OPEN, AlignmentState.EDITED})  # a new change, pushed
_ENDED = frozenset({AlignmentState.MERGED, AlignmentState.CLOSED})  # seen closed on GitHub
# no PR of its own is open (whatever the record last said): the change is proposed elsewhere
_DUPLICATE = frozenset({AlignmentState.DUPLICATE})

ALIGNMENT_MOVES: Mapping[AlignmentState, frozenset[AlignmentState]] = {
    # only a live PR is retired (autoclosed, or abandoned when its branch was edited)
    AlignmentState.OPEN: _PROPOSED
    | _ENDED
    | _DUPLICATE
    | {AlignmentState.AUTOCLOSED, AlignmentState.ABANDONED},
    AlignmentState.EDITED: _PROPOSED
    | _ENDED
    | _DUPLICATE
    | {AlignmentState.AUTOCLOSED, AlignmentState.ABANDONED},
    AlignmentState.ABANDONED: _PROPOSED | _ENDED | _DUPLICATE | {AlignmentState.ABANDONED},
    AlignmentState.AUTOCLOSED: _PROPOSED
    | _DUPLICATE
    | {AlignmentState.MERGED, AlignmentState.AUTOCLOSED},
    AlignmentState.CLOSED: _PROPOSED | _ENDED | _DUPLICATE,
    AlignmentState.MERGED: _PROPOSED | _DUPLICATE | {AlignmentState.MERGED},
    # proposed on its own branch once the other PR is gone or the change differs
    AlignmentState.DUPLICATE: _PROPOSED | _DUPLICATE,
}
