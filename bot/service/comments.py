"""Sticky comments: one comment per (issue or PR, purpose), found by a hidden marker at the
start of the body AND the bot as author (a user quoting the marker cannot hijack it), over
every page of comments; edited only when its body changes, deleted when it no longer
applies. The comment id is cached in the store, GitHub stays the source of truth."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.github.gateway import CommentInfo, GitHubRepo
from bot.present.posted import sticky_text
from bot.service.guard import Guard, unguarded
from bot.state.store import Store


@dataclass(frozen=True)
class StickyResult:
    comment_id: int | None
    action: Literal["created", "updated", "unchanged", "deleted", "absent"]


def find_marked(comments: Sequence[CommentInfo], marker: str, bot_login: str) -> list[CommentInfo]:
    return [c for c in comments if c.user == bot_login and c.body.startswith(marker)]


class StickyComments:
    def __init__(self, gh: GitHubRepo, store: Store, bot_login: str) -> None:
        self.gh = gh
        self.store = store
        self.bot_login = bot_login

    def _find(self, issue: int, purpose: str, marker: str) -> CommentInfo | None:
        cached = self.store.conversation.sticky_comment(self.gh.full_name, issue, purpose)
        if cached is not None:
            comment = self.gh.comment(cached)
            if comment and comment.user == self.bot_login and comment.body.startswith(marker):
                return comment
        found = find_marked(self.gh.comments(issue), marker, self.bot_login)
        for extra in found[1:]:  # left over by an older bug or race: keep only the first
            self.gh.delete_comment(extra.id)
        return found[0] if found else None

    def upsert(
        self, issue: int, purpose: str, marker: str, body: str, guard: Guard = unguarded
    ) -> StickyResult:
        text = sticky_text(marker, body)
        existing = self._find(issue, purpose, marker)
        if existing is None:
            guard()
            created = self.gh.create_comment(issue, text)
            self.store.conversation.set_sticky_comment(
                self.gh.full_name, issue, purpose, created.id
            )
            return StickyResult(created.id, "created")
        self.store.conversation.set_sticky_comment(self.gh.full_name, issue, purpose, existing.id)
        if existing.body == text:
            return StickyResult(existing.id, "unchanged")
        guard()
        self.gh.edit_comment(existing.id, text)
        return StickyResult(existing.id, "updated")

    def delete(
        self, issue: int, purpose: str, marker: str, guard: Guard = unguarded
    ) -> StickyResult:
        existing = self._find(issue, purpose, marker)
        if existing is None:
            return StickyResult(None, "absent")
        guard()
        self.gh.delete_comment(existing.id)
        self.store.conversation.set_sticky_comment(self.gh.full_name, issue, purpose, None)
        return StickyResult(existing.id, "deleted")
