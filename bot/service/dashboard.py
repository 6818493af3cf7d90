"""Keep the opt-in drift dashboard issue current: after each sync and nightly.

``request_dashboard(rt, repo)`` enqueues a refresh unless one is already waiting (requests
coalesce: a burst of syncs costs one audit). The refresh reads the default branches of the
benchmark and recipes repositories from bare mirrors (no checkout), audits every vLLM config
(:func:`bot.audit.run_audit`, in-process: workers are threads) and upserts the issue
(:class:`bot.service.dashboard_issue.DashboardIssues`). One refresh per repository runs at a time,
across processes and machines: the lease lives in the queue's key-value store, and a lease
left by a dead worker is taken over once stale.

The nightly periodic task (03:17 UTC) requests a refresh for every benchmark repository the
service knows (from its syncs and dashboards); the first consumer to fire it that day claims
it, the others skip.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from huey import crontab
from huey.api import TaskWrapper
from huey.exceptions import RetryTask

from bot.audit import render_html, run_audit
from bot.audit.ignores import apply_ignores
from bot.errors import RecipeSyncError
from bot.github.errors import TransientGitHubError
from bot.github.gateway import GitHubRepo
from bot.github.gitops import Mirror
from bot.rules import load_rules
from bot.service.dashboard_issue import (
    DASHBOARD_SCOPE,
    RECIPES_READ_SCOPE,
    DashboardIssues,
    dashboard_body,
)
from bot.service.runtime import Runtime
from bot.settings import CredentialsMissing
from bot.sources import GitTreeSource

log = logging.getLogger("recipe_sync.dashboard")

REFRESH_TASK = "recipe_sync.refresh_dashboard"
NIGHTLY_TASK = "recipe_sync.nightly_dashboard"
NIGHTLY = crontab(minute="17", hour="3")  # the queue runs in UTC
PENDING_STALE = 3600.0  # a pending flag older than this was lost with its task
LEASE_STALE = 1800.0  # a refresh lease older than this belongs to a dead worker
LOCKED_RETRY = 60.0


def _pending_key(repo: str) -> str:
    return f"recipe-sync:dashboard:pending:{repo}"


def _lease_key(repo: str) -> str:
    return f"recipe-sync:dashboard:lease:{repo}"


def _nightly_key(day: str) -> str:
    return f"recipe-sync:dashboard:nightly:{day}"


def claim(rt: Runtime, key: str, stale_after: float) -> bool:
    """Set ``key`` unless it is set and fresh; True when this caller holds it."""
    now = rt.clock()
    if rt.huey.put_if_empty(key, now):
        return True
    held = rt.huey.get(key, peek=True)
    if held is None:  # released in between
        return bool(rt.huey.put_if_empty(key, now))
    if now - float(held) > stale_after:
        rt.huey.put(key, now)
        return True
    return False


def release(rt: Runtime, key: str) -> None:
    rt.huey.get(key)  # reading without peek removes it


def request_dashboard(rt: Runtime, bench_repo: str) -> bool:
    """Enqueue a refresh of ``bench_repo``'s dashboard (policy permitting); never raises."""
    if not rt.policy.dashboard:
        return False
    try:
        if not claim(rt, _pending_key(bench_repo), PENDING_STALE):
            return False  # one is already waiting; it will see the latest state
        rt.tasks.refresh_dashboard(bench_repo)
    except Exception:  # the dashboard must never break the sync that asked for it
        log.exception("could not enqueue the dashboard refresh of %s", bench_repo)
        return False
    return True


def _default_branch(rt: Runtime, gh: GitHubRepo) -> GitTreeSource:
    info = gh.info()
    mirror = Mirror(rt.mirrors, info.full_name, info.clone_url, gh.token)
    ref = f"refs/rs/heads/{info.default_branch}"
    mirror.fetch(f"+refs/heads/{info.default_branch}:{ref}")
    sha = mirror.rev(ref)
    if sha is None:
        raise RecipeSyncError(f"{info.full_name} has no branch {info.default_branch}")
    return mirror.source(sha, f"{info.full_name}@{sha[:12]}")


def dashboard_page(data_dir: Path, bench_repo: str) -> Path:
    """Where the latest HTML report of a benchmark repository is kept (served by the web app)."""
    owner, _, name = bench_repo.partition("/")
    return data_dir / "dashboards" / owner / f"{name}.html"


def refresh_dashboard(rt: Runtime, bench_repo: str) -> str:
    """Audit the default branches and upsert the issue; returns what happened."""
    release(rt, _pending_key(bench_repo))
    if not rt.policy.dashboard:
        return "disabled"
    lease = _lease_key(bench_repo)
    if not claim(rt, lease, LEASE_STALE):
        raise RetryTask("a refresh of this dashboard is running", delay=LOCKED_RETRY)
    started = time.perf_counter()
    outcome = "failed"
    try:
        bench = rt.connector.repo(bench_repo, DASHBOARD_SCOPE)
        recipes = rt.connector.repo(rt.settings.recipes_repo, RECIPES_READ_SCOPE)
        run = run_audit(
            _default_branch(rt, bench),
            _default_branch(rt, recipes),
            load_rules(rt.settings.rules_dir),
            jobs=1,  # a worker thread: no forking here
            bench_name=bench_repo,  # links: PRs, script and recipe lines at the audited commits
            recipes_name=rt.settings.recipes_repo,
        )
        if run.report.unread:  # a dashboard without a master config would understate drift
            raise RecipeSyncError(run.report.unread[0])
        ignored = rt.store.choices.ignored_flags(bench_repo)
        html = render_html(apply_ignores(run.report, ignored))
        page = dashboard_page(rt.settings.data_dir, bench_repo)
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(html, encoding="utf-8")
        url = (
            f"{rt.settings.public_url}/dashboards/{bench_repo}.html"
            if rt.settings.public_url
            else ""
        )
        body = dashboard_body(run.report, ignored=ignored, details_url=url)
        issues = DashboardIssues(bench, rt.store, rt.connector.bot_login())
        result = issues.upsert(rt.policy.dashboard_title, body)
        outcome = result.action
        log.info(
            "dashboard of %s: %s #%s (%s launch lines)",
            bench_repo,
            result.action,
            result.issue_number,
            len(run.report.rows),
        )
        return f"{result.action} #{result.issue_number}"
    except (TransientGitHubError, CredentialsMissing):
        outcome = "retry"
        raise  # retried by the task's retry policy
    except RecipeSyncError as err:
        log.error("dashboard of %s not refreshed: %s", bench_repo, err)
        return f"failed: {err}"
    except Exception as err:  # a bug: log it; the next sync or night tries again
        outcome = "error"
        log.exception("dashboard refresh of %s crashed", bench_repo)
        return f"error: {type(err).__name__}: {err}"
    finally:
        release(rt, lease)
        rt.metrics.jobs.labels("dashboard", outcome).observe(time.perf_counter() - started)


def known_bench_repos(rt: Runtime) -> list[str]:
    """Benchmark repositories the service has synced or keeps a dashboard for."""
    return sorted(rt.store.syncs.bench_repos() | rt.store.conversation.dashboard_repos())


def nightly(rt: Runtime) -> list[str]:
    """Request a refresh of every known dashboard, once per day across all consumers."""
    if not rt.policy.dashboard:
        return []
    now = datetime.fromtimestamp(rt.clock(), UTC)
    if not rt.huey.put_if_empty(_nightly_key(now.strftime("%Y-%m-%d")), rt.owner):
        return []  # another consumer fired it today
    release(rt, _nightly_key((now - timedelta(days=1)).strftime("%Y-%m-%d")))
    return [repo for repo in known_bench_repos(rt) if request_dashboard(rt, repo)]


def register_dashboard(rt: Runtime) -> tuple[TaskWrapper, TaskWrapper]:
    huey = rt.huey

    @huey.task(name=REFRESH_TASK, retries=3, retry_delay=60)  # type: ignore[untyped-decorator]
    def refresh(bench_repo: str) -> str:
        return refresh_dashboard(rt, bench_repo)

    @huey.periodic_task(NIGHTLY, name=NIGHTLY_TASK)  # type: ignore[untyped-decorator]
    def nightly_task() -> list[str]:
        return nightly(rt)

    return refresh, nightly_task
