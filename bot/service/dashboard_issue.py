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
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from bot.audit.groups import RecipeGroup
from bot.audit.ignores import Ignored, apply_ignores
from bot.audit.markdown import render_markdown
from bot.audit.model import AuditReport
from bot.github.gateway import GitHubRepo, IssueInfo
from bot.markdown import MAX_BODY, inline
from bot.present.posted import DASHBOARD_MARKER
from bot.service.guard import Guard, unguarded
from bot.state.store import Store

log = logging.getLogger("recipe_sync.dashboard")

# The benchmark repository's token for the dashboard: read the tree, write one issue.
DASHBOARD_SCOPE: Mapping[str, str] = {"metadata": "read", "contents": "read", "issues": "write"}
RECIPES_READ_SCOPE: Mapping[str, str] = {"metadata": "read", "contents": "read"}


ACTION = re.compile(
    r"^- \[(?P<mark>[ xX])\] <!-- recipe-sync:(?P<verb>rerun|ignore) (?P<recipe>\S+)"
    r"(?: (?P<flag>\S+))? -->",
    re.MULTILINE,
)
SAFE = re.compile(r"^[A-Za-z0-9_./-]+$")  # what may sit inside a box's hidden comment
IGNORE_OFFERED = 5  # drifting flags offered as "ignore" boxes per recipe


@dataclass(frozen=True)
class BoxAction:
    """One checkbox of the dashboard: re-run a recipe's alignment, or ignore one flag."""

    verb: Literal["rerun", "ignore"]
    recipe: str
    flag: str
    checked: bool


def parse_actions(body: str) -> list[BoxAction]:
    """The checkboxes of a dashboard body (a box is identified by its hidden comment)."""
    found = []
    for match in ACTION.finditer(body):
        verb: Literal["rerun", "ignore"] = "rerun" if match.group("verb") == "rerun" else "ignore"
        found.append(
            BoxAction(
                verb,
                match.group("recipe"),
                match.group("flag") or "",
                match.group("mark") != " ",
            )
        )
    return found


def _boxes(group: RecipeGroup, ignored: Ignored) -> list[str]:
    """Renovate-style boxes: tick to act; the next refresh unticks "re-run" once done."""
    if not group.has_recipe or not SAFE.match(group.recipe):
        return []
    recipe = group.recipe
    lines = []
    if group.counts()["drifted"]:
        lines.append(
            f"- [ ] <!-- recipe-sync:rerun {recipe} --> re-run the alignment of this recipe "
            "(its benchmark PRs with an open alignment PR are synced again)"
        )
    already = sorted(ignored.get(recipe, frozenset()))
    for flag in already:
        lines.append(
            f"- [x] <!-- recipe-sync:ignore {recipe} {flag} --> ignore {inline(flag)} for this "
            "recipe (untick to count it again)"
        )
    offered = [(f, n) for f, n in group.top_flags(None) if f not in already and SAFE.match(f)]
    for flag, count in offered[:IGNORE_OFFERED]:
        lines.append(
            f"- [ ] <!-- recipe-sync:ignore {recipe} {flag} --> ignore {inline(flag)} for this "
            f"recipe (drifts in {count} config key{'s' if count != 1 else ''})"
        )
    return lines


def dashboard_body(
    report: AuditReport,
    *,
    ignored: Ignored | None = None,
    details_url: str = "",
    limit: int = MAX_BODY,
) -> str:
    """Marker, what this is and how the boxes act, then the grouped audit, under ``limit``."""
    ignored = ignored or {}
    intro = (
        "This issue is kept up to date by recipe-sync after each sync and nightly: every "
        "vLLM configuration of this repository's default branch compared with the recipe "
        "it corresponds to. Tick a box under a recipe to re-run its alignment or to ignore a "
        "flag for it (recorded, honoured by the dashboard and by alignment PRs until "
        "unticked). Each drifted entry names the benchmark PRs that introduced it and the "
        "`recipe-sync align` command that plans its recipe edit (run it in checkouts of both "
        "repositories). Turn the issue off with `dashboard: false` in the recipe-sync "
        "policy.\n\n"
    )
    head = f"{DASHBOARD_MARKER}\n{intro}"
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
