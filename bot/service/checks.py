"""The ``recipe-sync / alignment`` check run on the benchmark PR head.

One check run per logical sync run (``external_id`` = ``<sync id>:<generation>``): a run
resumed after a crash finds and reuses it (store first, then GitHub by name + head SHA +
external id); a new request gets a new one. It moves queued → in_progress → completed.
Annotations go at most 50 per request (a GitHub limit), over several PATCHes that append.
Check runs need App credentials: with a personal token GitHub refuses them and the sync
goes on without one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bot.contract import Annotation
from bot.github.errors import GitHubRequestError
from bot.github.gateway import GitHubRepo, utc_now_iso
from bot.markdown import truncate_utf8
from bot.present.posted import (
    ANNOTATION_MAX_BYTES,
    CHECK_FAILED,
    CHECK_PUSH_REFUSED,
    CHECK_SUMMARY_LIMIT,
    CHECK_SUPERSEDED,
    CHECK_TITLE_LIMIT,
    RECHECK_TEXT,
)
from bot.service.guard import Guard
from bot.service.intake import CHECK_NAME, RECHECK_ACTION
from bot.state.store import Store

log = logging.getLogger(__name__)

MAX_ANNOTATIONS_PER_REQUEST = 50
LEVELS = {"notice", "warning", "failure"}


def annotation_payload(annotation: Annotation) -> dict[str, Any]:
    level = annotation.level if annotation.level in LEVELS else "warning"
    start = max(1, annotation.start_line)
    return {
        "path": annotation.path,
        "start_line": start,
        "end_line": max(start, annotation.end_line),
        "annotation_level": level,
        "message": truncate_utf8(annotation.message, ANNOTATION_MAX_BYTES),
        "title": annotation.title[:CHECK_TITLE_LIMIT],
    }


def batches(
    annotations: Sequence[Annotation], size: int = MAX_ANNOTATIONS_PER_REQUEST
) -> list[list[dict[str, Any]]]:
    """Annotation payloads in requests of at most ``size`` (at least one, maybe empty)."""
    payloads = [annotation_payload(a) for a in annotations]
    return [payloads[i : i + size] for i in range(0, len(payloads), size)] or [[]]


RECHECK_BUTTON = {**RECHECK_TEXT, "identifier": RECHECK_ACTION}


class CheckRunPublisher:
    def __init__(
        self, gh: GitHubRepo, store: Store, *, head_sha: str, external_id: str, guard: Guard
    ) -> None:
        self.gh = gh
        self.store = store
        self.head_sha = head_sha
        self.external_id = external_id
        self.guard = guard
        self.check_run_id: int | None = None
        self.html_url = ""
        self.enabled = True

    def _existing(self) -> tuple[int, str, int] | None:
        record = self.store.conversation.check_run(self.gh.full_name, self.external_id)
        if record is not None:
            return record
        for run in self.gh.check_runs(self.head_sha, CHECK_NAME):
            if run.external_id == self.external_id:
                return run.id, run.status, 0
        return None

    def start(self) -> None:
        """Find or create the check run (queued), then mark it in progress."""
        existing = self._existing()
        if existing is None:
            self.guard()
            try:
                created = self.gh.create_check_run(
                    name=CHECK_NAME,
                    head_sha=self.head_sha,
                    external_id=self.external_id,
                    status="queued",
                )
            except GitHubRequestError as err:
                if err.status == 403:
                    log.warning("check runs unavailable (%s); continuing without one", err)
                    self.enabled = False
                    return
                raise
            self.check_run_id, status = created.id, "queued"
            self.html_url = created.html_url
            self._save(status)
        else:
            self.check_run_id, status, _ = existing
        if status == "queued":
            self.guard()
            self.gh.update_check_run(
                self.check_run_id, {"status": "in_progress", "started_at": utc_now_iso()}
            )
            self._save("in_progress")

    def _save(self, status: str, batches_sent: int | None = None) -> None:
        assert self.check_run_id is not None
        self.store.conversation.save_check_run(
            self.gh.full_name,
            self.external_id,
            head_sha=self.head_sha,
            check_run_id=self.check_run_id,
            status=status,
            batches_sent=batches_sent,
        )

    def cancel(self, reason: str) -> None:
        """Close the check run of a head we stopped working on (no guard: the head moved,
        and this run belongs to the old head)."""
        self._close("cancelled", CHECK_SUPERSEDED, reason)

    def fail(self, reason: str) -> None:
        """Close the check run of a sync that failed for good, saying why."""
        self._close("failure", CHECK_FAILED, reason)

    def refused(self, reason: str) -> None:
        """Close the check run of a sync whose push the recipes repository refused."""
        self._close("failure", CHECK_PUSH_REFUSED, reason)

    def _close(self, conclusion: str, title: str, summary: str) -> None:
        if not self.enabled or self.check_run_id is None:
            return
        self.gh.update_check_run(
            self.check_run_id,
            {
                "status": "completed",
                "conclusion": conclusion,
                "completed_at": utc_now_iso(),
                "output": {"title": title, "summary": summary[:CHECK_SUMMARY_LIMIT]},
            },
        )
        self._save("completed")

    def complete(
        self,
        *,
        conclusion: str,
        title: str,
        summary: str,
        annotations: Sequence[Annotation],
        details_url: str | None,
    ) -> None:
        if not self.enabled or self.check_run_id is None:
            return
        record = self.store.conversation.check_run(self.gh.full_name, self.external_id)
        sent = record[2] if record else 0
        output_base = {
            "title": title[:CHECK_TITLE_LIMIT] or "recipe-sync",
            "summary": summary[:CHECK_SUMMARY_LIMIT],
        }
        for index, batch in enumerate(batches(annotations)):
            if index < sent:
                continue  # already appended by an earlier, interrupted attempt
            fields: dict[str, Any] = {"output": {**output_base, "annotations": batch}}
            if index == 0:
                fields.update(
                    status="completed",
                    conclusion=conclusion,
                    completed_at=utc_now_iso(),
                    actions=[RECHECK_BUTTON],
                )
                if details_url:
                    fields["details_url"] = details_url
            self.guard()
            self.gh.update_check_run(self.check_run_id, fields)
            self._save("completed", batches_sent=index + 1)
