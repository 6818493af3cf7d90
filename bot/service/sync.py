"""The sync job: build the :class:`SyncRequest`, call the engine, apply its outcome.

1. Take the PR's lease (one run per PR at a time; a heartbeat keeps it).
2. Re-read the PR. Closed unmerged → retire its alignment PRs. Head not the approved SHA →
   stop (a newer request, or a re-approval, will come).
3. Check run → in progress; fetch ``refs/pull/<n>/head`` and the base into a bare mirror and
   the recipes default branch into another; wrap them in ``GitTreeSource``; evidence through
   :class:`GitHubRunSource`.
4. ``engine.sync(request)``.
5. Alignment PRs (unless dry run), the sticky verification comment, the completed check run.

Before every write the guard re-reads the PR and aborts if its head or base moved, or if the
lease was lost. Every write is found before it is created, so a run resumed after a crash
(same generation) finishes the work without duplicating any of it.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace

from bot.contract import (
    EngineContractError,
    EngineUnavailable,
    SyncOutcome,
    SyncRequest,
    check_outcome,
)
from bot.errors import RecipeSyncError
from bot.github.actions import GitHubRunSource
from bot.github.errors import HeadMoved, LeaseLost, PushRefused
from bot.github.gateway import BENCH_SCOPE, RECIPES_SCOPE, GitHubRepo, PullInfo
from bot.github.gitops import Identity, Mirror
from bot.present.posted import (
    CHECK_FAILED_INPUT,
    REAPPROVE_MARKER,
    VERIFY_MARKER,
    check_summary,
    failure_comment,
    push_refused_comment,
    verify_comment,
)
from bot.rules.models import Policy
from bot.service.checks import CheckRunPublisher
from bot.service.comments import StickyComments
from bot.service.handlers.common import request_sync
from bot.service.pulls import AlignmentPublisher, AlignmentResult, SourceRef, check_bodies
from bot.service.repo_config import config_note, repository_policy
from bot.service.runtime import Runtime
from bot.settings import CredentialsMissing
from bot.state.records import SyncSnapshot
from bot.state.store import Store

log = logging.getLogger("recipe_sync.sync")


class Heartbeat:
    """Keeps the lease alive from a background thread; ``lost`` once another worker took it."""

    def __init__(self, rt: Runtime, sync_id: int) -> None:
        self.rt = rt
        self.sync_id = sync_id
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{sync_id}", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.rt.settings.heartbeat_seconds):
            try:
                if not self.rt.store.syncs.heartbeat(self.sync_id, self.rt.owner):
                    self.lost = True
                    return
            except Exception:  # a DB hiccup: try again on the next beat
                log.warning("heartbeat of sync %s failed", self.sync_id, exc_info=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class HeadGuard:
    """Called right before every write: the PR must still be open at the approved head and
    base, and this worker must still hold the lease."""

    def __init__(
        self,
        gh: GitHubRepo,
        store: Store,
        lease: SyncSnapshot,
        base_ref: str,
        heartbeat: Heartbeat,
    ) -> None:
        self.gh = gh
        self.store = store
        self.lease = lease
        self.base_ref = base_ref
        self.heartbeat = heartbeat
        self.checks = 0

    def __call__(self) -> None:
        if self.heartbeat.lost:
            raise LeaseLost(f"sync {self.lease.id} was taken over by another worker")
        self.checks += 1
        pr = self.gh.pull(self.lease.pr_number)
        if pr.state != "open":
            raise HeadMoved(f"PR #{pr.number} was closed during the sync")
        if pr.head_sha != self.lease.approved_sha:
            raise HeadMoved(
                f"PR #{pr.number} head moved from {self.lease.approved_sha} to {pr.head_sha}"
            )
        if pr.base_ref != self.base_ref:
            raise HeadMoved(f"PR #{pr.number} base changed from {self.base_ref} to {pr.base_ref}")
        current = self.store.syncs.get(self.lease.id)
        if current is None or current.approved_sha != self.lease.approved_sha:
            raise HeadMoved(f"the approval of PR #{pr.number} was withdrawn or moved")


@dataclass(frozen=True)
class SyncReport:
    status: str  # done | closed | not-approved | superseded | failed-input
    conclusion: str = ""
    results: tuple[AlignmentResult, ...] = ()


def _identity(rt: Runtime) -> Identity:
    login = rt.connector.bot_login()
    email = rt.settings.bot_email or f"{login}@users.noreply.github.com"
    return Identity(login, email)


def _publisher(
    rt: Runtime,
    recipes: GitHubRepo,
    lease: SyncSnapshot,
    head_sha: str,
    guard: HeadGuard | None,
    policy: Policy | None = None,
) -> tuple[AlignmentPublisher, Mirror]:
    info = recipes.info()
    mirror = Mirror(rt.mirrors, info.full_name, info.clone_url, recipes.token)
    mirror.fetch(f"+refs/heads/{info.default_branch}:refs/rs/heads/{info.default_branch}")
    base = mirror.rev(f"refs/rs/heads/{info.default_branch}")
    if base is None:
        raise RecipeSyncError(f"{info.full_name} has no branch {info.default_branch}")
    publisher = AlignmentPublisher(
        gh=recipes,
        mirror=mirror,
        store=rt.store,
        policy=policy or rt.policy,
        identity=_identity(rt),
        bot_login=rt.connector.bot_login(),
        source=SourceRef(lease.bench_repo, lease.pr_number, head_sha),
        default_branch=info.default_branch,
        base_sha=base,
        guard=guard or (lambda: None),
        clock=rt.clock,
    )
    return publisher, mirror


def _retire_for_closed(rt: Runtime, lease: SyncSnapshot, pr: PullInfo) -> SyncReport:
    records = [
        r
        for r in rt.store.alignments.for_bench_pr(lease.bench_repo, lease.pr_number)
        if r.state.is_live and r.pr_number is not None
    ]
    if pr.merged or not records:
        return SyncReport("closed")
    recipes = rt.connector.repo(rt.settings.recipes_repo, RECIPES_SCOPE)
    publisher, _ = _publisher(rt, recipes, lease, pr.head_sha, None)
    results = tuple(
        publisher.retire(r, f"{lease.bench_repo}#{lease.pr_number} was closed without merging")
        for r in records
    )
    for orphan in publisher.orphaned:  # an abandoned PR no longer proposes what they repeated
        request_sync(rt, orphan.bench_repo, orphan.bench_pr, None)
    return SyncReport("closed", results=results)


def execute(rt: Runtime, lease: SyncSnapshot, heartbeat: Heartbeat) -> SyncReport:
    bench = rt.connector.repo(lease.bench_repo, BENCH_SCOPE)
    pr = bench.pull(lease.pr_number)
    if pr.state != "open":
        return _retire_for_closed(rt, lease, pr)
    if lease.approved_sha is None:
        return SyncReport("not-approved")
    if pr.head_sha != lease.approved_sha:
        raise HeadMoved(f"head {pr.head_sha} is not the approved {lease.approved_sha}")
    guard = HeadGuard(bench, rt.store, lease, pr.base_ref, heartbeat)
    head_sha = lease.approved_sha
    checks = CheckRunPublisher(
        bench, rt.store, head_sha=head_sha, external_id=lease.external_id, guard=guard
    )
    try:
        checks.start()
        return _run_engine(rt, lease, bench, pr, guard, checks)
    except HeadMoved as err:
        checks.cancel(f"Not finished: {err}. A new run follows the new head once approved.")
        raise
    except (CredentialsMissing, EngineUnavailable):
        raise  # retryable: the same logical run resumes and reuses the check run
    except PushRefused as err:
        # permanent until someone grants or allows it: say so where the author looks
        StickyComments(bench, rt.store, rt.connector.bot_login()).upsert(
            lease.pr_number, "verify", VERIFY_MARKER, push_refused_comment(str(err))
        )
        checks.refused(str(err))
        raise
    except RecipeSyncError as err:
        checks.fail(str(err))
        raise


def _run_engine(
    rt: Runtime,
    lease: SyncSnapshot,
    bench: GitHubRepo,
    pr: PullInfo,
    guard: HeadGuard,
    checks: CheckRunPublisher,
) -> SyncReport:
    head_sha = pr.head_sha
    bench_info = bench.info()
    bench_mirror = Mirror(rt.mirrors, bench_info.full_name, bench_info.clone_url, bench.token)
    n = lease.pr_number
    default = bench_info.default_branch
    bench_mirror.fetch(
        f"+refs/pull/{n}/head:refs/rs/pull/{n}/head",
        f"+refs/heads/{pr.base_ref}:refs/rs/heads/{pr.base_ref}",
        *([f"+refs/heads/{default}:refs/rs/heads/{default}"] if default != pr.base_ref else []),
    )
    fetched = bench_mirror.rev(f"refs/rs/pull/{n}/head")
    if fetched != head_sha:
        raise HeadMoved(f"refs/pull/{n}/head is {fetched}, not the approved {head_sha}")
    base_sha = (
        pr.base_sha
        if bench_mirror.has(pr.base_sha)
        else bench_mirror.rev(f"refs/rs/heads/{pr.base_ref}")
    )
    assert base_sha is not None
    default_sha = bench_mirror.rev(f"refs/rs/heads/{default}")
    policy, config_problem = repository_policy(
        rt.policy,
        bench_mirror.source(default_sha, f"{lease.bench_repo}@{default}")
        if default_sha is not None
        else None,
    )
    recipes = rt.connector.repo(rt.settings.recipes_repo, RECIPES_SCOPE)
    publisher, recipes_mirror = _publisher(rt, recipes, lease, head_sha, guard, policy)

    request = SyncRequest(
        bench_repo=lease.bench_repo,
        pr_number=n,
        head_sha=head_sha,
        head_branch=pr.head_ref,
        base_sha=base_sha,
        is_fork=pr.is_fork,
        bench=bench_mirror.source(head_sha, f"{lease.bench_repo}@{head_sha[:12]}"),
        bench_base=bench_mirror.source(base_sha, f"{lease.bench_repo}@{base_sha[:12]}"),
        recipes_repo=rt.settings.recipes_repo,
        recipes_base_sha=publisher.base_sha,
        recipes=recipes_mirror.source(
            publisher.base_sha, f"{rt.settings.recipes_repo}@{publisher.base_sha[:12]}"
        ),
        runs=GitHubRunSource(bench),
        dry_run=lease.dry_run,
        head_repo=pr.head_repo or None,
        ignored_flags=rt.store.choices.ignored_flags(lease.bench_repo),
        dropped=rt.store.choices.dropped(lease.bench_repo, n),
        added=rt.store.choices.added(lease.bench_repo, n),
        policy=policy,
    )
    stickies = StickyComments(bench, rt.store, rt.connector.bot_login())
    try:
        outcome = rt.engine().sync(request)
        check_outcome(outcome)
        check_bodies(outcome)
    except (EngineUnavailable, EngineContractError):
        raise  # not the PR's fault: retried, or failed with the check run saying why
    except RecipeSyncError as err:
        # bad input in the PR: tell the author, don't retry
        failed = config_note(config_problem) + failure_comment(str(err))
        stickies.upsert(n, "verify", VERIFY_MARKER, failed, guard)
        checks.complete(
            conclusion="failure",
            title=CHECK_FAILED_INPUT,
            summary=str(err),
            annotations=(),
            details_url=None,
        )
        return SyncReport("failed-input", "failure")
    if config_problem:
        outcome = replace(outcome, comment=config_note(config_problem) + outcome.comment)
    return _apply(rt, lease, outcome, publisher, stickies, checks, guard, head_sha)


def _apply(
    rt: Runtime,
    lease: SyncSnapshot,
    outcome: SyncOutcome,
    publisher: AlignmentPublisher,
    stickies: StickyComments,
    checks: CheckRunPublisher,
    guard: HeadGuard,
    head_sha: str,
) -> SyncReport:
    results = [publisher.apply(change, dry_run=lease.dry_run) for change in outcome.changes]
    if not lease.dry_run:
        aligned = set(outcome.aligned)
        for record in rt.store.alignments.for_bench_pr(lease.bench_repo, lease.pr_number):
            if not record.state.is_live:
                continue
            if record.recipe_path in outcome.withdrawn:
                results.append(publisher.retire(record, outcome.withdrawn[record.recipe_path]))
            elif record.recipe_path in aligned:
                results.append(
                    publisher.retire(
                        record, f"`{record.recipe_path}` on the default branch already matches"
                    )
                )
    body = verify_comment(
        engine_comment=outcome.comment,
        results=results,
        recipes_repo=rt.settings.recipes_repo,
        head_sha=head_sha,
        dry_run=lease.dry_run,
    )
    stickies.upsert(lease.pr_number, "verify", VERIFY_MARKER, body, guard)
    for orphan in publisher.orphaned:  # what they repeated is no longer proposed as it was
        request_sync(rt, orphan.bench_repo, orphan.bench_pr, None)
    if lease.is_fork:
        stickies.delete(lease.pr_number, "reapprove", REAPPROVE_MARKER, guard)
    details = next((r.html_url for r in results if r.html_url), None)
    checks.complete(
        conclusion=outcome.check_conclusion,
        title=outcome.check_title,
        summary=check_summary(outcome.check_summary, results, rt.settings.recipes_repo),
        annotations=outcome.annotations,
        details_url=details,
    )
    rt.store.syncs.record_audit(
        lease, head_sha=head_sha, conclusion=outcome.check_conclusion, summary=outcome.check_title
    )
    return SyncReport("done", outcome.check_conclusion, tuple(results))
