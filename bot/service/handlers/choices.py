"""A maintainer's choices: ``/recipe-sync drop|keep|add <flag>`` comments and the
dashboard issue's boxes."""

from __future__ import annotations

from bot.github.gateway import BENCH_SCOPE, RECIPES_SCOPE
from bot.present.dashboard import parse_actions
from bot.service.dashboard import request_dashboard
from bot.service.dashboard_issue import DASHBOARD_SCOPE, is_dashboard
from bot.service.events import AddHunk, DashboardEdited, DropHunk, KeepHunk
from bot.service.handlers.common import (
    WRITE_OR_MORE,
    acknowledge,
    benchmark_only,
    refused,
    request_sync,
    role,
)
from bot.service.runtime import Runtime
from bot.vllm import canonical_flag


def on_hunk_command(rt: Runtime, event: DropHunk | AddHunk | KeepHunk) -> str:
    """On an alignment PR for its recipe file, on a benchmark PR for every recipe file it
    aligns (``*``); recorded in the store, then the benchmark PR is synced again so its
    alignment PRs are updated."""
    on_recipes = event.repo == rt.settings.recipes_repo
    if on_recipes:
        record = rt.store.alignments.by_pr(event.repo, event.pr_number)
        if record is None:
            return f"{event.kind} on #{event.pr_number}: not an alignment PR of recipe-sync"
        bench_repo, bench_pr, recipe = record.bench_repo, record.bench_pr, record.recipe_path
    else:
        bench_repo, bench_pr, recipe = event.repo, event.pr_number, "*"
    gh = rt.connector.repo(event.repo, RECIPES_SCOPE if on_recipes else BENCH_SCOPE)
    command = f"{rt.policy.comment_command} {event.kind}"
    refusal = refused(rt, gh, event, command, starts_sync=False)
    if refusal is not None:
        return refusal
    subject = event.subject
    if subject.startswith("--"):
        subject = canonical_flag(subject)
    if isinstance(event, KeepHunk):
        changed = rt.store.choices.keep(
            bench_repo, bench_pr, None if recipe == "*" else recipe, subject
        )
    else:
        changed = rt.store.choices.choose(
            bench_repo, bench_pr, recipe, subject, event.kind, login=event.sender
        )
    acknowledge(rt, event)
    what = f"{event.kind} {subject} for {recipe} of {bench_repo}#{bench_pr}"
    synced = request_sync(rt, bench_repo, bench_pr, None)
    return f"{what}{'' if changed else ' (already so)'}: {synced}"


@benchmark_only
def on_dashboard_edit(rt: Runtime, event: DashboardEdited) -> str:
    """Apply the ticked boxes of the dashboard issue (re-read from the API, not the payload):
    ticked "ignore" boxes are recorded (unticked ones dropped), a ticked "re-run" box syncs
    again every benchmark PR with an open alignment PR for that recipe file; then the
    dashboard is refreshed (which unticks the "re-run" boxes, as Renovate's does)."""
    gh = rt.connector.repo(event.repo, DASHBOARD_SCOPE)
    if role(gh, event.sender) not in WRITE_OR_MORE:
        return f"dashboard edit by {event.sender} ignored: needs write permission or more"
    issue = gh.issue(event.pr_number)
    if issue is None or not is_dashboard(issue, rt.connector.bot_login()):
        return "not the dashboard issue"
    done: list[str] = []
    for box in parse_actions(issue.body):
        if box.verb == "ignore":
            changed = rt.store.choices.set_ignored(
                event.repo, box.recipe, box.flag, ignored=box.checked, login=event.sender
            )
            if changed:
                done.append(
                    f"{'ignored' if box.checked else 'counted again'} {box.flag} for {box.recipe}"
                )
        elif box.checked:
            prs = sorted(
                {
                    r.bench_pr
                    for r in rt.store.alignments.for_recipe(event.repo, box.recipe)
                    if r.state.is_live
                }
            )
            synced = [request_sync(rt, event.repo, pr, None) for pr in prs]
            done.append(
                f"re-run {box.recipe}: " + ("; ".join(synced) if synced else "no open alignment PR")
            )
    if done:
        request_dashboard(rt, event.repo)
    return "; ".join(done) or "dashboard edited: no box changed"
