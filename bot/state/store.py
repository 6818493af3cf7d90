"""Service state: one repository per aggregate over the tables in :mod:`bot.state.models`.

Only :mod:`bot.state` speaks SQL (an import contract in ``pyproject.toml``): the service
reaches the database through these repositories, each a few short atomic transactions
(:mod:`bot.state.db`), and gets frozen values back (:mod:`bot.state.records`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.state.alignments import Alignments
from bot.state.choices import Choices
from bot.state.conversation import Conversation
from bot.state.db import Database
from bot.state.deliveries import Deliveries
from bot.state.names import RepositoryNames
from bot.state.syncs import Syncs


class Store:
    def __init__(self, url: str, *, clock: Callable[[], float] = time.time) -> None:
        self.db = Database(url, clock=clock)
        self.deliveries = Deliveries(self.db)
        self.syncs = Syncs(self.db)
        self.alignments = Alignments(self.db)
        self.conversation = Conversation(self.db)
        self.choices = Choices(self.db)
        self.names = RepositoryNames(self.db)

    @classmethod
    def open(cls, url: str, *, clock: Callable[[], float] = time.time) -> Store:
        """Connect and apply pending migrations."""
        from bot.state.migrate import upgrade

        store = cls(url, clock=clock)
        upgrade(store.db.engine)
        return store

    @property
    def clock(self) -> Callable[[], float]:
        return self.db.clock

    def close(self) -> None:
        self.db.close()

    def ping(self) -> None:
        self.db.ping()

    def revision(self) -> str:
        """The alembic revision the database is at ("" before the first migration)."""
        return self.db.revision()
