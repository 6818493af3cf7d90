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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from bot.audit.groups import RecipeGroup
from bot.audit.ignores import Ignored, apply_ignores
from bot.audit.markdown import render_markdown
from bot.audit.model import AuditReport
from bot.github.gateway import GitHubRepo, IssueInfo
from bot.markdown import MAX_BODY
from bot.present.dashboard import box_lines, dashboard_head
from bot.present.posted import DASHBOARD_MARKER
from bot.service.guard import Guard, unguarded
from bot.state.store import Store

log = logging.getLogger("recipe_sync.dashboard")

# The benchmark repository's token for the dashboard: read the tree, write one issue.
DASHBOARD_SCOPE: Mapping[str, str] = {"metadata": "read", "contents": "read", "issues": "write"}
RECIPES_READ_SCOPE: Mapping[str, str] = {"metadata": "read", "contents": "read"}


def _boxes(group: RecipeGroup, ignored: Ignored) -> list[str]:
    if not group.has_recipe:
        return []
    return box_lines(
        group.recipe,
        drifted=bool(group.counts()["drifted"]),
        ignored=ignored.get(group.recipe, frozenset()),
        drifting=group.top_flags(None),
    )


def dashboard_body(
    report: AuditReport,
    *,
    ignored: Ignored | None = None,
    details_url: str = "",
    limit: int = MAX_BODY,
) -> str:
    """Marker, what this is and how the boxes act (:mod:`bot.present.dashboard`), then the
    grouped audit, under ``limit``."""
    ignored = ignored or {}
    head = dashboard_head()
    shown = apply_ignores(report, ignored)
    return head + render_markdown(
        shown,
        limit=limit - len(head),
        safe=True,
        details_url=details_url,
        extra=lambda group: _boxes(group, ignored),
    )


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
        return self.store.conversation.dashboard_issue(self.gh.full_name)

    def _remember(self, number: int) -> None:
        self.store.conversation.remember_dashboard_issue(self.gh.full_name, number)

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

    def upsert(self, title: str, body: str, guard: Guard = unguarded) -> DashboardResult:
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
