"""Delivery → what to do (the ``handle_delivery`` job).

Approval is tied to a head SHA:

* ``pull_request.labeled`` with the trigger label, by someone with triage permission or more
  (checked through the collaborators permission API), approves the labelled head.
* ``/recipe-sync [dry-run] [<sha>]`` by someone with write permission approves the commit
  it names, or without one the current head (on a fork PR only if it was pushed at least a
  minute before the comment: :mod:`bot.service.approval`); the reply names the commit;
  anyone else gets ONE polite refusal reply per PR (then silence), bots are ignored.
* ``/recipe-sync drop <flag>`` (``keep`` undoes it) by someone with write permission on an
  alignment PR records that hunk as declined for that PR's recipe file (on a benchmark PR:
  for every recipe file it aligns) and syncs the benchmark PR again, whose next update leaves
  it out; the same refusal rule applies.
* ``synchronize`` / ``reopened`` / ``opened`` / ``ready_for_review`` on a labelled PR from
  the same repository approves the new head (whoever can push there has write access).
* **Fork PRs: a new push needs re-approval.** On ``synchronize`` of a labelled fork PR the
  bot removes the trigger label, posts one sticky note saying a maintainer must apply it
  again, and does nothing else: no fetch, no engine run, no check run on the new head.
* ``unlabeled`` withdraws the approval; ``closed`` unmerged retires the PR's alignment PRs.
* ``workflow_run`` completed refreshes the evidence of the PR whose approved head it ran on
  (matched by the run's ``pull_requests``, or for fork runs by head SHA [+ branch]); a run on
  an alignment branch refreshes the benchmark PR it came from.
* ``check_run`` rerequested / "Re-check" re-runs the PR the check run belongs to.
* ``installation`` / ``installation_repositories`` (any action) drop the cached installation
  ids and tokens of that installation, so the next job looks them up again.
* ``issues`` edited on the bot's dashboard issue by someone with write permission: ticked
  "ignore" boxes are recorded in the store (unticked ones dropped), a ticked "re-run" box
  syncs again every benchmark PR that has an alignment PR for that recipe file, then the
  dashboard is refreshed (which unticks the "re-run" boxes, as Renovate's dashboard does).

Every path only records intent atomically in the store and enqueues at most one sync per
PR; the sync job itself re-reads the PR and aborts if its head is not the approved one.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from bot.github.errors import AppNotInstalled, GitHubRequestError
from bot.github.gateway import BENCH_SCOPE, REACTION_SCOPE, RECIPES_SCOPE, GitHubRepo, PullInfo
from bot.present.posted import (
    APPROVED_MARKER,
    REAPPROVE_MARKER,
    REFUSAL_MARKER,
    approved_comment,
    not_approved_comment,
    reapproval_comment,
    refusal_comment,
)
from bot.service.approval import command_approval
from bot.service.comments import StickyComments
from bot.service.dashboard import request_dashboard
from bot.service.dashboard_issue import DASHBOARD_SCOPE, is_dashboard, parse_actions
from bot.service.runtime import Runtime
from bot.service.triggers import Trigger
from bot.state.store import AlignmentRecord, Approval
from bot.vllm import canonical_flag

log = logging.getLogger("recipe_sync.dispatch")

TRIAGE_OR_MORE = frozenset({"admin", "maintain", "write", "triage"})
WRITE_OR_MORE = frozenset({"admin", "maintain", "write"})


def _role(gh: GitHubRepo, login: str) -> str:
    permission, role = gh.permission(login)
    # role_name says triage/maintain; permission collapses them to read/write
    return role if role in TRIAGE_OR_MORE else permission


def _request(
    rt: Runtime,
    repo: str,
    pr: int,
    approval: Approval | None,
    *,
    dry_run: bool = False,
    require_approval: bool = True,
) -> str:
    ticket = rt.store.request_sync(
        repo, pr, approval=approval, dry_run=dry_run, require_approval=require_approval
    )
    if ticket is None:
        return "not approved: nothing to do"
    if ticket.enqueue:
        rt.enqueue_sync(ticket.sync_id)
        return f"sync {ticket.sync_id} enqueued"
    return f"sync {ticket.sync_id} already {ticket.state}: request merged"


def dispatch(rt: Runtime, trigger: Trigger) -> str:
    """Act on one trigger; returns a one-line account for the delivery log."""
    # a renamed repository's webhooks carry its new name; records keep the one first known
    known = rt.store.known_repo_name(trigger.repo)
    if known != trigger.repo:
        trigger = replace(trigger, repo=known)
    recipes_repo = rt.settings.recipes_repo
    if trigger.kind == "installation":
        rt.connector.forget_installation(trigger.installation_id)
        return f"installation {trigger.installation_id} {trigger.action}: its cached tokens dropped"
    if trigger.kind in ("drop", "keep", "add"):
        return _hunk_command(rt, trigger)
    if trigger.repo == recipes_repo:
        if trigger.kind in ("pr_closed", "rebase", "workflow_run"):
            return _alignment_event(rt, trigger)
        return f"{trigger.kind} in the recipes repository: not a benchmark PR"
    kind = trigger.kind
    pr = trigger.pr_number
    if kind == "label_added":
        assert pr is not None
        gh = rt.connector.repo(trigger.repo, BENCH_SCOPE)
        if _role(gh, trigger.sender) not in TRIAGE_OR_MORE:
            return f"label by {trigger.sender} ignored: needs triage permission or more"
        return _request(
            rt, trigger.repo, pr, Approval(trigger.head_sha, trigger.sender, trigger.is_fork)
        )
    if kind == "pr_updated":
        assert pr is not None
        sync = rt.store.find_sync(trigger.repo, pr)
        if not trigger.is_fork:
            return _request(rt, trigger.repo, pr, Approval(trigger.head_sha, "label", False))
        if sync is not None and sync.approved_sha == trigger.head_sha:
            return _request(rt, trigger.repo, pr, None)
        return _require_reapproval(rt, trigger, sync.approved_sha if sync else None)
    if kind == "label_removed":
        assert pr is not None
        rt.store.revoke_approval(trigger.repo, pr)
        return "approval withdrawn"
    if kind == "pr_closed":
        assert pr is not None
        if trigger.merged:
            return "merged: alignment PRs stay for the recipes maintainers"
        live = [
            r for r in rt.store.alignments_for(trigger.repo, pr) if r.state in ("open", "edited")
        ]
        if not live:
            return "closed: no alignment PR to retire"
        return _request(rt, trigger.repo, pr, None, require_approval=False)
    if kind == "command":
        assert pr is not None and trigger.comment_id is not None
        gh = rt.connector.repo(trigger.repo, BENCH_SCOPE)
        refused = _refused(rt, gh, trigger, rt.policy.comment_command)
        if refused is not None:
            return refused
        _acknowledge(rt, trigger)
        current = gh.pull(pr)
        if current.state != "open":
            return "command on a closed PR ignored"
        return _approve_by_command(rt, gh, trigger, current)
    if kind == "workflow_run":
        numbers = list(trigger.pr_numbers) or _fork_run_prs(rt, trigger)
        outcomes = []
        for number in numbers:
            sync = rt.store.find_sync(trigger.repo, number)
            if sync is not None and sync.approved_sha == trigger.head_sha:
                outcomes.append(_request(rt, trigger.repo, number, None))
        return "; ".join(outcomes) or "no approved PR at this head"
    if kind == "dashboard_edit":
        return _dashboard_edit(rt, trigger)
    if kind == "check_run":
        numbers = list(trigger.pr_numbers)
        if not numbers and trigger.check_run_id is not None:
            found = rt.store.sync_for_check_run(trigger.repo, trigger.check_run_id)
            numbers = [found] if found is not None else []
        outcomes = []
        for number in numbers:
            sync = rt.store.find_sync(trigger.repo, number)
            if sync is not None and sync.approved_sha == trigger.head_sha:
                outcomes.append(_request(rt, trigger.repo, number, None))
        return "; ".join(outcomes) or "check run of an unapproved or unknown head"
    return f"{kind} in {trigger.repo}: nothing to do"


def _approve_by_command(rt: Runtime, gh: GitHubRepo, trigger: Trigger, current: PullInfo) -> str:
    """Approve the head the command was written for (:mod:`bot.service.approval`) and say
    which one; on a fork PR (or a command naming a commit) the reply names it."""
    assert trigger.pr_number is not None
    decided = command_approval(current, trigger.named_sha, trigger.commented_at)
    command = rt.policy.comment_command
    stickies = StickyComments(gh, rt.store, rt.connector.bot_login())
    if decided.sha is None:
        stickies.upsert(
            trigger.pr_number,
            "reapprove",
            REAPPROVE_MARKER,
            not_approved_comment(current.head_sha, trigger.named_sha, decided.reason, command),
        )
        return f"head {current.head_sha[:12]} not approved by the command ({decided.reason})"
    if current.is_fork or trigger.named_sha:
        stickies.upsert(
            trigger.pr_number,
            "approved",
            APPROVED_MARKER,
            approved_comment(decided.sha, decided.reason, trigger.sender, command),
        )
    approval = Approval(decided.sha, trigger.sender, current.is_fork)
    return _request(rt, trigger.repo, trigger.pr_number, approval, dry_run=trigger.dry_run)


def _acknowledge(rt: Runtime, trigger: Trigger) -> None:
    """👍 on the command comment, best effort: a reaction GitHub refuses (e.g. an installation
    that has not approved ``issues: write``) is logged and the command still runs."""
    assert trigger.comment_id is not None
    try:
        rt.connector.repo(trigger.repo, REACTION_SCOPE).react(trigger.comment_id, "+1")
    except (GitHubRequestError, AppNotInstalled) as err:
        log.warning(
            "no reaction on comment %s in %s (the command goes on): %s",
            trigger.comment_id,
            trigger.repo,
            err,
        )


def _refused(
    rt: Runtime, gh: GitHubRepo, trigger: Trigger, command: str, *, starts_sync: bool = True
) -> str | None:
    """None when the sender has write permission or more; else ONE polite refusal per user
    and PR (then silence), and the account for the delivery log."""
    assert trigger.pr_number is not None
    if _role(gh, trigger.sender) in WRITE_OR_MORE:
        return None
    if rt.store.claim_refusal(trigger.repo, trigger.pr_number, trigger.sender):
        gh.create_comment(
            trigger.pr_number,
            f"{REFUSAL_MARKER}\n"
            + refusal_comment(trigger.sender, command, starts_sync=starts_sync),
        )
        return f"refused {trigger.sender} (replied once)"
    return f"refused {trigger.sender} (already told)"


def _hunk_command(rt: Runtime, trigger: Trigger) -> str:
    """``/recipe-sync drop|keep|add <flag>``: on an alignment PR for its recipe file, on a
    benchmark PR for every recipe file it aligns (``*``); recorded in the store, then the
    benchmark PR is synced again so its alignment PRs are updated."""
    assert trigger.pr_number is not None and trigger.comment_id is not None
    on_recipes = trigger.repo == rt.settings.recipes_repo
    if on_recipes:
        record = rt.store.alignment_by_pr(trigger.repo, trigger.pr_number)
        if record is None:
            return f"{trigger.kind} on #{trigger.pr_number}: not an alignment PR of recipe-sync"
        bench_repo, bench_pr, recipe = record.bench_repo, record.bench_pr, record.recipe_path
    else:
        bench_repo, bench_pr, recipe = trigger.repo, trigger.pr_number, "*"
    gh = rt.connector.repo(trigger.repo, RECIPES_SCOPE if on_recipes else BENCH_SCOPE)
    command = f"{rt.policy.comment_command} {trigger.kind}"
    refused = _refused(rt, gh, trigger, command, starts_sync=False)
    if refused is not None:
        return refused
    subject = trigger.subject
    if subject.startswith("--"):
        subject = canonical_flag(subject)
    if trigger.kind in ("drop", "add"):
        changed = rt.store.choose_hunk(
            bench_repo, bench_pr, recipe, subject, trigger.kind, login=trigger.sender
        )
    else:
        changed = rt.store.keep_hunk(
            bench_repo, bench_pr, None if recipe == "*" else recipe, subject
        )
    _acknowledge(rt, trigger)
    what = f"{trigger.kind} {subject} for {recipe} of {bench_repo}#{bench_pr}"
    return f"{what}{'' if changed else ' (already so)'}: {_request(rt, bench_repo, bench_pr, None)}"


def _dashboard_edit(rt: Runtime, trigger: Trigger) -> str:
    """Apply the ticked boxes of the dashboard issue (re-read from the API, not the payload)."""
    assert trigger.pr_number is not None
    gh = rt.connector.repo(trigger.repo, DASHBOARD_SCOPE)
    if _role(gh, trigger.sender) not in WRITE_OR_MORE:
        return f"dashboard edit by {trigger.sender} ignored: needs write permission or more"
    issue = gh.issue(trigger.pr_number)
    if issue is None or not is_dashboard(issue, rt.connector.bot_login()):
        return "not the dashboard issue"
    done: list[str] = []
    for box in parse_actions(issue.body):
        if box.verb == "ignore":
            changed = rt.store.set_ignored(
                trigger.repo, box.recipe, box.flag, ignored=box.checked, login=trigger.sender
            )
            if changed:
                done.append(
                    f"{'ignored' if box.checked else 'counted again'} {box.flag} for {box.recipe}"
                )
        elif box.checked:
            prs = sorted(
                {
                    r.bench_pr
                    for r in rt.store.alignments_for_recipe(trigger.repo, box.recipe)
                    if r.state in ("open", "edited")
                }
            )
            synced = [_request(rt, trigger.repo, pr, None) for pr in prs]
            done.append(
                f"re-run {box.recipe}: " + ("; ".join(synced) if synced else "no open alignment PR")
            )
    if done:
        request_dashboard(rt, trigger.repo)
    return "; ".join(done) or "dashboard edited: no box changed"


def _fork_run_prs(rt: Runtime, trigger: Trigger) -> list[int]:
    """PRs a run without ``pull_requests`` (a fork's) belongs to: an approved PR whose head
    is the run's head SHA on the run's head branch."""
    candidates = [s.pr_number for s in rt.store.syncs_approved_at(trigger.repo, trigger.head_sha)]
    if not candidates:
        return []
    gh = rt.connector.repo(trigger.repo, BENCH_SCOPE)
    matched = []
    for number in candidates:
        pr = gh.pull(number)
        if pr.head_sha == trigger.head_sha and pr.head_ref == trigger.head_ref:
            matched.append(number)
    return matched


def _require_reapproval(rt: Runtime, trigger: Trigger, approved: str | None) -> str:
    assert trigger.pr_number is not None
    rt.store.revoke_approval(trigger.repo, trigger.pr_number)
    gh = rt.connector.repo(trigger.repo, BENCH_SCOPE)
    gh.remove_label(trigger.pr_number, rt.policy.trigger_label)
    StickyComments(gh, rt.store, rt.connector.bot_login()).upsert(
        trigger.pr_number,
        "reapprove",
        REAPPROVE_MARKER,
        reapproval_comment(
            approved, trigger.head_sha, rt.policy.trigger_label, rt.policy.comment_command
        ),
    )
    return "fork push: approval withdrawn, label removed, re-approval requested"


def _alignment_event(rt: Runtime, trigger: Trigger) -> str:
    record = rt.store.alignment_by_branch(trigger.repo, trigger.head_ref)
    if record is None:
        return f"{trigger.kind} on {trigger.head_ref or 'a branch'} that is not an alignment branch"
    if trigger.kind == "pr_closed":
        if trigger.merged:
            _set_state(rt, record, "merged")
            return f"alignment PR #{trigger.pr_number} merged"
        if (
            record.state in ("autoclosed", "abandoned")
            or trigger.sender == rt.connector.bot_login()
        ):
            return "closed by recipe-sync itself"
        if record.fingerprint:
            rt.store.add_declined(
                record.recipes_repo, record.recipe_path, record.fingerprint, trigger.pr_number
            )
        _set_state(rt, record, "closed")
        return f"alignment PR #{trigger.pr_number} closed unmerged: change declined"
    if trigger.kind == "workflow_run" and record.last_pushed_sha != trigger.head_sha:
        return "run on an older alignment commit: ignored"
    # rebase label, or recipes CI finished on the current alignment commit
    return _request(rt, record.bench_repo, record.bench_pr, None)


def _set_state(rt: Runtime, record: AlignmentRecord, state: str) -> None:
    """Record what happened to an alignment PR (merged, closed unmerged)."""
    rt.store.save_alignment(
        bench_repo=record.bench_repo,
        bench_pr=record.bench_pr,
        recipe_path=record.recipe_path,
        recipes_repo=record.recipes_repo,
        branch=record.branch,
        state=state,
    )
