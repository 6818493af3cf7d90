"""What the bot has posted on GitHub and keeps finding again: sticky comments, check runs, the
one refusal per user and PR, the dashboard issue. GitHub stays the truth; these are caches
and once-only claims."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from bot.state.db import Database
from bot.state.models import (
    CheckRunRecord,
    DashboardIssue,
    Refusal,
    StickyComment,
    Sync,
)


class Conversation:
    """Sticky comments, check runs, refusals and the dashboard issue."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def sticky_comment(self, repo: str, issue_number: int, purpose: str) -> int | None:
        with self.db.tx() as session:
            return session.scalar(
                select(StickyComment.comment_id).where(
                    StickyComment.repo == repo,
                    StickyComment.issue_number == issue_number,
                    StickyComment.purpose == purpose,
                )
            )

    def set_sticky_comment(
        self, repo: str, issue_number: int, purpose: str, comment_id: int | None
    ) -> None:
        with self.db.tx() as session:
            row = session.scalar(
                select(StickyComment).where(
                    StickyComment.repo == repo,
                    StickyComment.issue_number == issue_number,
                    StickyComment.purpose == purpose,
                )
            )
            if comment_id is None:
                if row is not None:
                    session.delete(row)
                return
            if row is None:
                session.add(
                    StickyComment(
                        repo=repo,
                        issue_number=issue_number,
                        purpose=purpose,
                        comment_id=comment_id,
                        updated_at=self.db.clock(),
                    )
                )
            else:
                row.comment_id = comment_id
                row.updated_at = self.db.clock()

    def check_run(self, repo: str, external_id: str) -> tuple[int, str, int] | None:
        """(check run id, status, annotation batches sent) of a logical run."""
        with self.db.tx() as session:
            row = session.scalar(
                select(CheckRunRecord).where(
                    CheckRunRecord.repo == repo, CheckRunRecord.external_id == external_id
                )
            )
            return (
                None if row is None else (row.check_run_id, row.status, row.annotation_batches_sent)
            )

    def save_check_run(
        self,
        repo: str,
        external_id: str,
        *,
        head_sha: str,
        check_run_id: int,
        status: str,
        batches_sent: int | None = None,
    ) -> None:
        now = self.db.clock()
        with self.db.tx() as session:
            self.db.insert_ignore(
                session,
                CheckRunRecord,
                {
                    "repo": repo,
                    "external_id": external_id,
                    "head_sha": head_sha,
                    "check_run_id": check_run_id,
                    "status": status,
                    "annotation_batches_sent": 0,
                    "updated_at": now,
                },
            )
            values: dict[str, Any] = {"check_run_id": check_run_id, "status": status}
            if batches_sent is not None:
                values["annotation_batches_sent"] = batches_sent
            session.execute(
                update(CheckRunRecord)
                .where(CheckRunRecord.repo == repo, CheckRunRecord.external_id == external_id)
                .values(updated_at=now, **values)
            )

    def pr_of_check_run(self, repo: str, check_run_id: int) -> int | None:
        """The benchmark PR number a check run of ours belongs to."""
        with self.db.tx() as session:
            external = session.scalar(
                select(CheckRunRecord.external_id).where(
                    CheckRunRecord.repo == repo, CheckRunRecord.check_run_id == check_run_id
                )
            )
            if external is None:
                return None
            row = session.get(Sync, int(external.split(":", 1)[0]))
            return None if row is None else row.pr_number

    def claim_refusal(self, repo: str, pr_number: int, login: str) -> bool:
        """True the first time ``login`` is refused on this PR (one polite reply only)."""
        with self.db.tx() as session:
            return self.db.insert_ignore(
                session,
                Refusal,
                {
                    "repo": repo,
                    "pr_number": pr_number,
                    "login": login,
                    "created_at": self.db.clock(),
                },
            )

    def dashboard_issue(self, repo: str) -> int | None:
        """The cached number of a repository's dashboard issue."""
        with self.db.tx() as session:
            row = session.get(DashboardIssue, repo)
            return None if row is None else row.issue_number

    def remember_dashboard_issue(self, repo: str, number: int) -> None:
        with self.db.tx() as session:
            row = session.get(DashboardIssue, repo)
            if row is None:
                session.add(
                    DashboardIssue(repo=repo, issue_number=number, updated_at=self.db.clock())
                )
            else:
                row.issue_number = number
                row.updated_at = self.db.clock()

    def dashboard_repos(self) -> set[str]:
        """Every benchmark repository with a dashboard issue."""
        with self.db.tx() as session:
            return set(session.scalars(select(DashboardIssue.repo)))
