"""The opt-in drift dashboard: one issue in the benchmark repository (policy ``dashboard``).

Renovate's dependency dashboard is the model. The issue is found by a hidden marker at the
start of its body AND the bot as its author (a user quoting the marker cannot hijack it),
over every page of the bot's issues, open or closed, so it is never duplicated; its number
is cached in the store, GitHub stays the source of truth. It is edited in place only when
its title or body changes. A maintainer who closes it keeps it closed (the body is still
refreshed); ``dashboard: false`` in the policy turns it off.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from bot.audit.markdown import render_markdown
from bot.audit.model import AuditReport
from bot.github.gateway import GitHubRepo, IssueInfo
from bot.github.sanitize import MAX_BODY
from bot.state.models import DashboardIssue
from bot.state.store import Store

log = logging.getLogger("recipe_sync.dashboard")

DASHBOARD_MARKER = "<!-- recipe-sync:dashboard v1 -->"
# The benchmark repository's token for the dashboard: read the tree, write one issue.
DASHBOARD_SCOPE: Mapping[str, str] = {"metadata": "read", "contents": "read", "issues": "write"}
RECIPES_READ_SCOPE: Mapping[str, str] = {"metadata": "read", "contents": "read"}

Guard = Callable[[], None]


def _no_guard() -> None:
    pass


def dashboard_body(report: AuditReport, *, limit: int = MAX_BODY) -> str:
    """Marker, one line on what this is, then the Markdown audit, all under ``limit``."""
    intro = (
        "This issue is kept up to date by recipe-sync after each sync and nightly: every "
        "vLLM configuration of this repository's default branch compared with the recipe "
        "it corresponds to. Turn it off with `dashboard: false` in the recipe-sync policy.\n\n"
    )
    head = f"{DASHBOARD_MARKER}\n{intro}"
    return head + render_markdown(report, limit=limit - len(head), safe=True)


@dataclass(frozen=True)
class DashboardResult:
    issue_number: int
    action: Literal["created", "updated", "unchanged"]
    html_url: str


def is_dashboard(issue: IssueInfo, bot_login: str) -> bool:
    return issue.user == bot_login and issue.body.startswith(DASHBOARD_MARKER)


class DashboardIssues:
    def __init__(self, gh: GitHubRepo, store: Store, bot_login: str) -> None:
        self.gh = gh
        self.store = store
        self.bot_login = bot_login

    # -- the store's cached issue number ----------------------------------------------------

    def _cached(self) -> int | None:
        with self.store.tx() as session:
            row = session.get(DashboardIssue, self.gh.full_name)
            return None if row is None else row.issue_number

    def _remember(self, number: int) -> None:
        with self.store.tx() as session:
            row = session.get(DashboardIssue, self.gh.full_name)
            if row is None:
                session.add(
                    DashboardIssue(
                        repo=self.gh.full_name, issue_number=number, updated_at=self.store.clock()
                    )
                )
            else:
                row.issue_number = number
                row.updated_at = self.store.clock()

    # -- find, create, edit -----------------------------------------------------------------

    def find(self) -> IssueInfo | None:
        cached = self._cached()
        if cached is not None:
            issue = self.gh.issue(cached)
            if issue is not None and is_dashboard(issue, self.bot_login):
                return issue
        found = sorted(
            (i for i in self.gh.issues_by(self.bot_login) if is_dashboard(i, self.bot_login)),
            key=lambda i: i.number,
        )
        for extra in found[1:]:  # left by a race or an older bug: keep the oldest
            if extra.state == "open":
                log.warning("closing duplicate dashboard issue #%s", extra.number)
                self.gh.edit_issue(extra.number, state="closed")
        return found[0] if found else None

    def upsert(self, title: str, body: str, guard: Guard = _no_guard) -> DashboardResult:
        if not body.startswith(DASHBOARD_MARKER):
            raise ValueError("a dashboard body starts with its marker")
        existing = self.find()
        if existing is None:
            guard()
            created = self.gh.create_issue(title, body)
            self._remember(created.number)
            return DashboardResult(created.number, "created", created.html_url)
        self._remember(existing.number)
        if existing.body == body and existing.title == title:
            return DashboardResult(existing.number, "unchanged", existing.html_url)
        guard()
        self.gh.edit_issue(
            existing.number,
            title=title if existing.title != title else None,
            body=body if existing.body != body else None,
        )
        return DashboardResult(existing.number, "updated", existing.html_url)
