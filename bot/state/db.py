"""The database: one engine, short transactions, and the one insert-unless-present.

Every state transition is one conditional ``UPDATE … WHERE state = …`` (or a unique insert),
so concurrent web processes and workers on several machines agree without locks held across
GitHub calls. SQLite runs every transaction as ``BEGIN IMMEDIATE`` (one writer at a time,
no lock upgrades that fail under WAL); PostgreSQL uses its default READ COMMITTED.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import QueuePool


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        # pooled: connecting and the PRAGMAs below cost ~30 ms, which the webhook ack paid on
        # every delivery when each transaction opened its own connection
        engine = create_engine(
            url,
            connect_args={"timeout": 30, "check_same_thread": False},
            poolclass=QueuePool,
            pool_size=8,
            max_overflow=56,
        )

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            # with WAL, NORMAL survives any process crash (the failure we design for) and
            # only risks the last commits on power loss; FULL fsyncs every commit
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    # no pre-ping (a round trip per checkout, ~1 ms CPU on the ack path): a connection that
    # died with a server restart invalidates the pool and the claim retries once
    return create_engine(url, pool_pre_ping=False, pool_size=10, max_overflow=30)


class Database:
    """The engine, its transactions and the clock every timestamp is read from."""

    def __init__(self, url: str, *, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.clock = clock
        self._insert_ignore_statements: dict[type[Any], Any] = {}
        self.autocommit = self.engine.execution_options(isolation_level="AUTOCOMMIT")

    @property
    def single_writer(self) -> bool:
        """SQLite admits one writer at a time: concurrent writers wait in its busy handler,
        which sleeps 1…100 ms between tries, so callers should queue writes themselves."""
        return self.engine.dialect.name == "sqlite"

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def tx(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

    def revision(self) -> str:
        """The alembic revision the database is at ("" before the first migration)."""
        from alembic.runtime.migration import MigrationContext

        with self.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision() or ""

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    def insert_ignore(
        self, session: Session | Connection, model: type[Any], values: dict[str, Any]
    ) -> bool:
        """INSERT unless a unique key already exists; True when this call inserted."""
        return session.execute(self.insert_ignore_statement(model), values).first() is not None

    def insert_ignore_statement(self, model: type[Any]) -> Any:
        """``INSERT … ON CONFLICT DO NOTHING RETURNING <primary key>`` for ``model``."""
        statement = self._insert_ignore_statements.get(model)
        if statement is None:
            dialect = self.engine.dialect.name
            builder = postgresql.insert if dialect == "postgresql" else sqlite.insert
            key = next(iter(model.__table__.primary_key.columns))
            # RETURNING, not rowcount: psycopg reports -1 for INSERT … ON CONFLICT
            statement = builder(model).on_conflict_do_nothing().returning(key)
            # built once, values bound per call: rebuilding it was half the ack's claim CPU
            self._insert_ignore_statements[model] = statement
        return statement
