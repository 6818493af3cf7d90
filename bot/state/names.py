"""Repositories GitHub renamed: records keep the name first known, calls use the newest."""

from __future__ import annotations

from sqlalchemy import delete, select

from bot.state.db import Database
from bot.state.models import (
    RepositoryRename,
)


class RepositoryNames:
    """The repository renames."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record_rename(self, old: str, new: str) -> None:
        """GitHub calls the repository the service knew as ``old`` (or as what ``old`` was
        renamed from) ``new`` now. Records keep the first name; calls use the newest."""
        with self.db.tx() as session:
            first = session.scalar(
                select(RepositoryRename.old_name).where(RepositoryRename.new_name == old)
            )
            known = first or old
            if known == new:
                session.execute(delete(RepositoryRename).where(RepositoryRename.old_name == known))
                return
            row = session.get(RepositoryRename, known)
            if row is None:
                session.add(
                    RepositoryRename(old_name=known, new_name=new, renamed_at=self.db.clock())
                )
            else:
                row.new_name, row.renamed_at = new, self.db.clock()

    def current_repo_name(self, name: str) -> str:
        """What GitHub calls the repository the service knows as ``name`` now."""
        with self.db.tx() as session:
            return (
                session.scalar(
                    select(RepositoryRename.new_name).where(RepositoryRename.old_name == name)
                )
                or name
            )

    def known(self, name: str) -> str:
        """The name the service's records use for the repository GitHub now calls ``name``
        (a webhook of a renamed repository carries the new name)."""
        with self.db.tx() as session:
            return (
                session.scalar(
                    select(RepositoryRename.old_name).where(RepositoryRename.new_name == name)
                )
                or name
            )
