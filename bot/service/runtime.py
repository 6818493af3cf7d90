"""Everything a process of the service shares: settings, store, queue, metrics, GitHub.

Built by :func:`bot.service.boot.boot`, the composition root."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from huey import Huey
from huey.api import TaskWrapper

from bot.align.caches import EngineCaches
from bot.contract import SyncEngine, load_engine
from bot.github.auth import TokenProvider
from bot.github.connect import GitHubConnector
from bot.github.gitops import mirror_root
from bot.rules import load_rules
from bot.rules.models import Policy
from bot.service.engine import AlignEngine
from bot.service.metrics import Metrics
from bot.service.queue import enqueue_all, make_huey
from bot.settings import Settings
from bot.state.store import Store

log = logging.getLogger("recipe_sync")


@dataclass(frozen=True)
class Tasks:
    """The queue's tasks, registered on this runtime's Huey by :mod:`bot.service.tasks`."""

    handle_delivery: TaskWrapper
    run_sync: TaskWrapper
    refresh_dashboard: TaskWrapper  # bot.service.dashboard (opt-in drift dashboard issue)
    nightly_dashboard: TaskWrapper


@dataclass
class Runtime:
    settings: Settings
    store: Store
    huey: Huey
    metrics: Metrics
    policy: Policy
    connector: GitHubConnector
    owner: str
    clock: Callable[[], float] = time.time
    _tasks: Tasks | None = None
    _engine: SyncEngine | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(
        cls,
        settings: Settings,
        *,
        huey: Huey | None = None,
        store: Store | None = None,
        tokens: TokenProvider | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> Runtime:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        metrics = Metrics()
        store = store or Store.open(settings.effective_database_url, clock=clock)
        runtime = cls(
            settings=settings,
            store=store,
            huey=huey or make_huey(settings),
            metrics=metrics,
            policy=load_rules(settings.rules_dir).policy,
            connector=GitHubConnector(
                settings, metrics, tokens=tokens, sleep=sleep, clock=clock, renames=store.names
            ),
            owner=f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}",
            clock=clock,
        )
        return runtime

    def attach(self, tasks: Tasks) -> None:
        """Install the queue's tasks (:func:`bot.service.boot.boot` registers them)."""
        self._tasks = tasks

    @property
    def tasks(self) -> Tasks:
        assert self._tasks is not None
        return self._tasks

    def engine(self) -> SyncEngine:
        """The alignment engine, loaded on first use (EngineUnavailable is retryable)."""
        with self._lock:
            if self._engine is None:
                self._engine = self._configured_engine()
            return self._engine

    def _configured_engine(self) -> SyncEngine:
        spec = self.settings.engine
        # one set of bounded caches per process: a re-sync of a PR (a new push, a re-run) and
        # the next PR on the same recipes reuse evaluations and renderings whose inputs held
        return load_engine(spec) if spec else AlignEngine(caches=EngineCaches())

    @property
    def mirrors(self) -> Path:
        return mirror_root(self.settings.data_dir)

    def enqueue_sync(self, sync_id: int, delay: float | None = None) -> None:
        if delay:
            self.tasks.run_sync.schedule((sync_id,), delay=delay)
        else:
            self.tasks.run_sync(sync_id)

    def enqueue_delivery(self, delivery_id: str) -> None:
        self.enqueue_deliveries([delivery_id])

    def enqueue_deliveries(self, delivery_ids: Sequence[str]) -> None:
        """One ``handle_delivery`` job per id (on Redis in one round trip)."""
        handle = self.tasks.handle_delivery
        enqueue_all(self.huey, [handle.s(delivery_id) for delivery_id in delivery_ids])

    def close(self) -> None:
        self.store.close()
