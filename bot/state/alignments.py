"""Alignment PRs (:class:`~bot.state.states.AlignmentState`), one record per branch, and the
changes a human declined by closing one unmerged (never proposed again)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, func, select, update

from bot.state.db import Database
from bot.state.models import (
    AlignmentPr,
    ClosedFingerprint,
)
from bot.state.records import AlignmentRecord
from bot.state.states import ALIGNMENT_MOVES, ALIGNMENT_STARTS, AlignmentState, IllegalTransition


class Alignments:
    """The alignment PR records and the declined fingerprints."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def by_branch(self, recipes_repo: str, branch: str) -> AlignmentRecord | None:
        with self.db.tx() as session:
            row = session.scalar(
                select(AlignmentPr).where(
                    AlignmentPr.recipes_repo == recipes_repo, AlignmentPr.branch == branch
                )
            )
            return None if row is None else AlignmentRecord.of(row)

    def by_pr(self, recipes_repo: str, pr_number: int) -> AlignmentRecord | None:
        """The alignment record of a PR in the recipes repository (None: not ours)."""
        with self.db.tx() as session:
            row = session.scalar(
                select(AlignmentPr)
                .where(AlignmentPr.recipes_repo == recipes_repo, AlignmentPr.pr_number == pr_number)
                .order_by(AlignmentPr.id.desc())
            )
            return None if row is None else AlignmentRecord.of(row)

    def for_bench_pr(self, bench_repo: str, bench_pr: int) -> list[AlignmentRecord]:
        return self._listed(AlignmentPr.bench_repo == bench_repo, AlignmentPr.bench_pr == bench_pr)

    def for_recipe(self, bench_repo: str, recipe_path: str) -> list[AlignmentRecord]:
        return self._listed(
            AlignmentPr.bench_repo == bench_repo, AlignmentPr.recipe_path == recipe_path
        )

    def proposing(
        self, recipes_repo: str, recipe_path: str, edits_digest: str, *, besides: str
    ) -> list[AlignmentRecord]:
        """The open alignment PRs of other branches than ``besides`` whose last push carries
        the YAML edits of ``edits_digest`` to ``recipe_path``, oldest first."""
        return self._listed(
            AlignmentPr.recipes_repo == recipes_repo,
            AlignmentPr.recipe_path == recipe_path,
            AlignmentPr.edits_digest == edits_digest,
            AlignmentPr.branch != besides,
            AlignmentPr.state == AlignmentState.OPEN,
            AlignmentPr.pr_number.is_not(None),
        )

    def duplicates_of(self, recipes_repo: str, pr_number: int) -> list[AlignmentRecord]:
        """The records left without a PR of their own because ``pr_number`` proposes their
        edits (state duplicate), oldest first."""
        return self._listed(
            AlignmentPr.recipes_repo == recipes_repo,
            AlignmentPr.duplicate_of == pr_number,
            AlignmentPr.state == AlignmentState.DUPLICATE,
        )

    def _listed(self, *where: ColumnElement[bool]) -> list[AlignmentRecord]:
        """The alignments that meet every condition, oldest first."""
        with self.db.tx() as session:
            rows = session.scalars(select(AlignmentPr).where(*where).order_by(AlignmentPr.id))
            return [AlignmentRecord.of(row) for row in rows]

    def save(
        self,
        *,
        bench_repo: str,
        bench_pr: int,
        recipe_path: str,
        recipes_repo: str,
        branch: str,
        state: AlignmentState | None = None,
        **values: Any,
    ) -> AlignmentRecord:
        """Create or update the record of ``branch``; a new record starts ``open`` unless
        ``state`` says otherwise. A move :data:`ALIGNMENT_MOVES` does not allow raises
        :class:`IllegalTransition` and writes nothing."""
        now = self.db.clock()
        key = (AlignmentPr.recipes_repo == recipes_repo, AlignmentPr.branch == branch)
        with self.db.tx() as session:
            created = self.db.insert_ignore(
                session,
                AlignmentPr,
                {
                    "bench_repo": bench_repo,
                    "bench_pr": bench_pr,
                    "recipe_path": recipe_path,
                    "recipes_repo": recipes_repo,
                    "branch": branch,
                    "state": state or AlignmentState.OPEN,
                    "created_at": now,
                    "updated_at": now,
                },
            )
            where = list(key)
            if state is not None:
                if created and state not in ALIGNMENT_STARTS:
                    raise IllegalTransition(f"an alignment PR cannot start {state}")
                values["state"] = state
                where.append(AlignmentPr.state.in_(_sources(state)))
            moved: Any = session.execute(
                update(AlignmentPr).where(*where).values(updated_at=now, **values)
            )
            row = session.scalar(select(AlignmentPr).where(*key))
            assert row is not None
            if moved.rowcount != 1 and state is not None:
                AlignmentState(row.state).check(state)  # raises: the transaction rolls back
            return AlignmentRecord.of(row)

    def count_open(self, recipes_repo: str) -> int:
        return self._count(
            AlignmentPr.recipes_repo == recipes_repo,
            AlignmentPr.state.in_([s for s in AlignmentState if s.counts_as_open]),
            AlignmentPr.pr_number.is_not(None),
        )

    def count_created_since(self, recipes_repo: str, since: float) -> int:
        return self._count(
            AlignmentPr.recipes_repo == recipes_repo,
            AlignmentPr.pr_number.is_not(None),
            AlignmentPr.created_at >= since,
        )

    def _count(self, *where: ColumnElement[bool]) -> int:
        with self.db.tx() as session:
            found = session.scalar(select(func.count()).select_from(AlignmentPr).where(*where))
            return int(found or 0)

    def decline(
        self,
        recipes_repo: str,
        recipe_path: str,
        fingerprint: str,
        pr_number: int | None,
        *,
        edits_digest: str | None = None,
    ) -> None:
        """Record content closed unmerged by a human: its fingerprint and, when it had YAML
        edits, their digest (see :meth:`declined_edits`)."""
        with self.db.tx() as session:
            self.db.insert_ignore(
                session,
                ClosedFingerprint,
                {
                    "recipes_repo": recipes_repo,
                    "recipe_path": recipe_path,
                    "fingerprint": fingerprint,
                    "edits_digest": edits_digest or None,
                    "pr_number": pr_number,
                    "closed_at": self.db.clock(),
                },
            )

    def is_declined(self, recipes_repo: str, recipe_path: str, fingerprint: str) -> bool:
        with self.db.tx() as session:
            return (
                session.scalar(
                    select(ClosedFingerprint.id).where(
                        ClosedFingerprint.recipes_repo == recipes_repo,
                        ClosedFingerprint.recipe_path == recipe_path,
                        ClosedFingerprint.fingerprint == fingerprint,
                    )
                )
                is not None
            )

    def declined_edits(
        self, recipes_repo: str, recipe_path: str, edits_digest: str
    ) -> list[int | None]:
        """The alignment PRs closed unmerged by a human whose content carried the YAML edits
        of ``edits_digest`` to ``recipe_path`` (their numbers, None where not known), oldest
        first; none for an empty digest (no YAML edit)."""
        if not edits_digest:
            return []
        with self.db.tx() as session:
            return list(
                session.scalars(
                    select(ClosedFingerprint.pr_number)
                    .where(
                        ClosedFingerprint.recipes_repo == recipes_repo,
                        ClosedFingerprint.recipe_path == recipe_path,
                        ClosedFingerprint.edits_digest == edits_digest,
                    )
                    .order_by(ClosedFingerprint.id)
                )
            )


def _sources(target: AlignmentState) -> list[str]:
    """The states an alignment PR may move to ``target`` from."""
    return [state for state, moves in ALIGNMENT_MOVES.items() if target in moves]
