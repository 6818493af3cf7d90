"""A maintainer's choices: flags ignored from the dashboard issue (per recipe file), and hunks
dropped or added by ``/recipe-sync drop|add`` (per alignment PR; ``keep`` forgets them)."""

from __future__ import annotations

from sqlalchemy import delete, select, update

from bot.state.db import Database
from bot.state.models import (
    DroppedHunk,
    IgnoredFlag,
)


class Choices:
    """The ignored flags and the hunk choices."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def ignored_flags(self, bench_repo: str) -> dict[str, frozenset[str]]:
        """recipe path → the flags a maintainer ignored for it on the dashboard."""
        with self.db.tx() as session:
            rows = session.execute(
                select(IgnoredFlag.recipe_path, IgnoredFlag.flag).where(
                    IgnoredFlag.bench_repo == bench_repo
                )
            ).all()
        found: dict[str, set[str]] = {}
        for recipe, flag in rows:
            found.setdefault(recipe, set()).add(flag)
        return {recipe: frozenset(flags) for recipe, flags in sorted(found.items())}

    def set_ignored(
        self, bench_repo: str, recipe_path: str, flag: str, *, ignored: bool, login: str
    ) -> bool:
        """Record or drop one ignore; True when the stored state changed."""
        with self.db.tx() as session:
            if ignored:
                return self.db.insert_ignore(
                    session,
                    IgnoredFlag,
                    {
                        "bench_repo": bench_repo,
                        "recipe_path": recipe_path,
                        "flag": flag,
                        "ignored_by": login,
                        "created_at": self.db.clock(),
                    },
                )
            result = session.execute(
                delete(IgnoredFlag).where(
                    IgnoredFlag.bench_repo == bench_repo,
                    IgnoredFlag.recipe_path == recipe_path,
                    IgnoredFlag.flag == flag,
                )
            )
            return bool(getattr(result, "rowcount", 0))

    def dropped(self, bench_repo: str, bench_pr: int) -> dict[str, dict[str, str]]:
        """recipe path (``*``: every recipe file) → flag or env var → who dropped it."""
        return self._hunks(bench_repo, bench_pr, "drop")

    def added(self, bench_repo: str, bench_pr: int) -> dict[str, dict[str, str]]:
        """recipe path (``*``: every recipe file) → flag or env var → who asked to add it."""
        return self._hunks(bench_repo, bench_pr, "add")

    def _hunks(self, bench_repo: str, bench_pr: int, choice: str) -> dict[str, dict[str, str]]:
        with self.db.tx() as session:
            rows = session.execute(
                select(DroppedHunk.recipe_path, DroppedHunk.subject, DroppedHunk.dropped_by)
                .where(
                    DroppedHunk.bench_repo == bench_repo,
                    DroppedHunk.bench_pr == bench_pr,
                    DroppedHunk.choice == choice,
                )
                .order_by(DroppedHunk.id)
            ).all()
        found: dict[str, dict[str, str]] = {}
        for recipe, subject, login in rows:
            found.setdefault(recipe, {})[subject] = login
        return found

    def drop(
        self, bench_repo: str, bench_pr: int, recipe_path: str, subject: str, *, login: str
    ) -> bool:
        """Record one dropped hunk; True when it was not so already."""
        return self.choose(bench_repo, bench_pr, recipe_path, subject, "drop", login=login)

    def choose(
        self,
        bench_repo: str,
        bench_pr: int,
        recipe_path: str,
        subject: str,
        choice: str,
        *,
        login: str,
    ) -> bool:
        """Record a drop or an add of one hunk (an add replaces a drop and the other way
        round); True when the choice was not recorded yet."""
        values = {
            "bench_repo": bench_repo,
            "bench_pr": bench_pr,
            "recipe_path": recipe_path,
            "subject": subject,
            "dropped_by": login,
            "created_at": self.db.clock(),
            "choice": choice,
        }
        with self.db.tx() as session:
            if self.db.insert_ignore(session, DroppedHunk, values):
                return True
            result = session.execute(
                update(DroppedHunk)
                .where(
                    DroppedHunk.bench_repo == bench_repo,
                    DroppedHunk.bench_pr == bench_pr,
                    DroppedHunk.recipe_path == recipe_path,
                    DroppedHunk.subject == subject,
                    DroppedHunk.choice != choice,
                )
                .values(choice=choice, dropped_by=login, created_at=values["created_at"])
            )
            return bool(getattr(result, "rowcount", 0))

    def keep(self, bench_repo: str, bench_pr: int, recipe_path: str | None, subject: str) -> bool:
        """Forget the choices (drop or add) of ``subject`` for ``recipe_path`` (and those for
        every file of the benchmark PR): back to recipe-sync's own judgement; ``None``: for
        every recipe file. True when one was recorded."""
        with self.db.tx() as session:
            where = [
                DroppedHunk.bench_repo == bench_repo,
                DroppedHunk.bench_pr == bench_pr,
                DroppedHunk.subject == subject,
            ]
            if recipe_path is not None:
                where.append(DroppedHunk.recipe_path.in_((recipe_path, "*")))
            result = session.execute(delete(DroppedHunk).where(*where))
            return bool(getattr(result, "rowcount", 0))
