"""Alignment PRs in the recipes repository (docs/spec/bot-conventions.md §3.4).

* One deterministic branch per (benchmark PR, recipe file), see :mod:`bot.present.posted`.
* The title and body are the engine's, posted as given (:mod:`bot.present.posted` frames
  them: the metadata line, the footer, the limits).
* Look up before creating: ``GET /pulls?head=<owner>:<branch>&state=all``.
* Regenerate, never rebase: the branch is the recipes default-branch head plus ONE bot
  commit, pushed with ``--force-with-lease=<branch>:<tip we inspected>``; no push at all when
  the branch already carries exactly this content (no CI churn).
* A branch with commits by anyone but the bot (or a refused lease) is left alone, with one
  sticky comment saying so; the ``recipe-sync:rebase`` label hands it back (custom changes
  are then lost, and the comment says so).
* A PR closed unmerged declines its content fingerprint: that content is never proposed
  again; different content is. It declines its YAML edits too (the same
  :func:`~bot.contract.edits_digest`): no benchmark PR gets a new PR with those edits for that
  recipe file, whatever its text; other edits do, and an open PR of this branch is updated.
* One change, one PR: before a new PR is opened, an open alignment PR of another benchmark PR
  whose last push carries the same YAML edits of the recipe file (the same
  :func:`~bot.contract.edits_digest`; guide sections and texts may differ) is looked up; when
  there is one, no branch is pushed and no PR opened, the record says ``duplicate`` of it and
  the benchmark PR's comment and check run link it. A change with other or more edits gets a
  PR of its own; an open PR of this branch is updated as always.
* Obsolete PRs (benchmark PR closed unmerged, or the recipe already aligned on the default
  branch) are closed with " — autoclosed" and their branch deleted; edited ones stay open as
  " — abandoned".
* Volume caps from ``rules/policy.yaml`` ``pr.max_open`` / ``pr.max_new_per_hour``; PRs open
  as drafts per ``pr.draft``; labels per ``pr.labels`` (created when missing, skipped when
  they cannot be).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.contract import EngineContractError, RecipeChange, SyncOutcome
from bot.github.errors import GitHubRequestError, TransientGitHubError
from bot.github.gateway import GitHubRepo, PullInfo
from bot.github.gitops import Identity, Mirror
from bot.present.posted import (
    ABANDONED,
    AUTOCLOSED,
    EDITED_MARKER,
    MAX_BODY,
    REBASE_LABEL,
    RETIRED_MARKER,
    TITLE_LIMIT,
    Action,
    AlignmentResult,
    PullMeta,
    alignment_branch,
    edited_comment,
    retired_comment,
    suffixed_title,
)
from bot.rules.models import Policy
from bot.service.comments import StickyComments
from bot.service.guard import Guard
from bot.state.records import AlignmentRecord
from bot.state.states import AlignmentState
from bot.state.store import Store

__all__ = ["Action", "AlignmentPublisher", "AlignmentResult", "SourceRef"]


def check_bodies(outcome: SyncOutcome) -> None:
    """Bodies are posted as given, so each must carry its change's metadata line (how a PR
    closed unmerged declines its content) and fit GitHub's limit."""
    for change in outcome.changes:
        if PullMeta.fingerprint_of(change.body) != change.fingerprint:
            raise EngineContractError(
                f"the PR body for {change.recipe_path} does not carry its metadata line"
            )
        if len(change.body) > MAX_BODY:
            raise EngineContractError(f"the PR body for {change.recipe_path} is too long")


@dataclass(frozen=True)
class SourceRef:
    """The benchmark PR an alignment comes from (provenance in the PR body)."""

    bench_repo: str
    bench_pr: int
    head_sha: str

    @property
    def pr_ref(self) -> str:
        return f"{self.bench_repo}#{self.bench_pr}"

    def __str__(self) -> str:
        return f"{self.pr_ref}@{self.head_sha}"


class AlignmentPublisher:
    def __init__(
        self,
        *,
        gh: GitHubRepo,
        mirror: Mirror,
        store: Store,
        policy: Policy,
        identity: Identity,
        bot_login: str,
        source: SourceRef,
        default_branch: str,
        base_sha: str,
        guard: Guard,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.gh = gh
        self.mirror = mirror
        self.store = store
        self.policy = policy
        self.identity = identity
        self.source = source
        self.default_branch = default_branch
        self.base_sha = base_sha
        self.guard = guard
        self.clock = clock
        self.stickies = StickyComments(gh, store, bot_login)
        # records left duplicate of a PR this publisher changed or retired: their benchmark
        # PRs are synced again (the change they repeated is no longer what that PR proposes)
        self.orphaned: list[AlignmentRecord] = []
        self.owner = gh.current_name.split("/")[0]  # GitHub's, for the branch's PRs

    def branch_for(self, recipe_path: str) -> str:
        return alignment_branch(
            self.policy.branch_prefix, self.source.bench_repo, self.source.bench_pr, recipe_path
        )

    def _save(
        self, change_path: str, branch: str, state: AlignmentState, **values: object
    ) -> AlignmentRecord:
        return self.store.alignments.save(
            bench_repo=self.source.bench_repo,
            bench_pr=self.source.bench_pr,
            recipe_path=change_path,
            recipes_repo=self.gh.full_name,
            branch=branch,
            state=state,
            **values,
        )

    def _record_declines(self, recipe_path: str, branch: str, pulls: list[PullInfo]) -> None:
        record = None
        for pr in pulls:
            if pr.state != "closed" or pr.merged or pr.title.endswith((AUTOCLOSED, ABANDONED)):
                continue
            fingerprint = PullMeta.fingerprint_of(pr.body)
            if fingerprint is not None:
                # the body does not say its edits: the record does, while it keeps that content
                record = record or self.store.alignments.by_branch(self.gh.full_name, branch)
                same = record is not None and record.fingerprint == fingerprint
                self.store.alignments.decline(
                    self.gh.full_name,
                    recipe_path,
                    fingerprint,
                    pr.number,
                    edits_digest=record.edits_digest if record is not None and same else None,
                )

    def _declined_edits(self, change: RecipeChange) -> AlignmentResult | None:
        """Declined, when a human closed unmerged an alignment PR (of any benchmark PR) whose
        content carried the YAML edits of ``change``, whatever the text around them."""
        closed = self.store.alignments.declined_edits(
            self.gh.full_name, change.recipe_path, change.edits_digest
        )
        if not closed:
            return None
        known = [n for n in closed if n is not None]
        which = f" ({self.gh.full_name}#{known[-1]})" if known else ""
        return AlignmentResult(
            change.recipe_path,
            self.branch_for(change.recipe_path),
            "declined",
            note=f"an alignment PR with these YAML edits was closed unmerged{which}; "
            "not proposed again",
        )

    def _human_commit(self, tip: str) -> tuple[str, str] | None:
        for commit in self.mirror.commits_between(self.base_sha, tip):
            if commit.by_human(self.identity):
                return commit.sha, commit.author_name
        return None

    def _proposed_elsewhere(self, change: RecipeChange, branch: str) -> PullInfo | None:
        """The open alignment PR of another benchmark PR that already proposes the YAML edits
        of ``change`` (as GitHub has it now: a record may lag behind a close)."""
        if not change.edits_digest:
            return None  # no YAML edit (guide only), or an engine that does not say
        for record in self.store.alignments.proposing(
            self.gh.full_name, change.recipe_path, change.edits_digest, besides=branch
        ):
            assert record.pr_number is not None
            pr = self.gh.pull(record.pr_number)
            if pr.state == "open" and pr.head_ref == record.branch:
                return pr
        return None

    def _cap_reached(self) -> str | None:
        limits = self.policy.pr
        open_count = self.store.alignments.count_open(self.gh.full_name)
        if open_count >= limits.max_open:
            return f"{open_count} alignment PRs are open (limit {limits.max_open})"
        recent = self.store.alignments.count_created_since(self.gh.full_name, self.clock() - 3600)
        if recent >= limits.max_new_per_hour:
            return (
                f"{recent} alignment PRs were opened in the last hour "
                f"(limit {limits.max_new_per_hour})"
            )
        return None

    def _mark_edited(
        self, change: RecipeChange, branch: str, open_pr: PullInfo | None, who: tuple[str, str]
    ) -> AlignmentResult:
        self._save(change.recipe_path, branch, AlignmentState.EDITED)
        if open_pr is not None:
            self.stickies.upsert(
                open_pr.number,
                "edited",
                EDITED_MARKER,
                edited_comment(who[0], who[1], self.source.pr_ref),
                self.guard,
            )
        return AlignmentResult(
            change.recipe_path,
            branch,
            "edited",
            open_pr.number if open_pr else None,
            open_pr.html_url if open_pr else None,
            "the branch has commits by someone else; recipe-sync no longer pushes to it",
        )

    def apply(self, change: RecipeChange, *, dry_run: bool = False) -> AlignmentResult:
        branch = self.branch_for(change.recipe_path)
        pulls = self.gh.pulls_by_head(self.owner, branch)
        self._record_declines(change.recipe_path, branch, pulls)
        if self.store.alignments.is_declined(
            self.gh.full_name, change.recipe_path, change.fingerprint
        ):
            return AlignmentResult(
                change.recipe_path,
                branch,
                "declined",
                note="an alignment PR with this exact change was closed unmerged; "
                "not proposed again",
            )
        open_pr = next((p for p in pulls if p.state == "open"), None)
        if open_pr is None and (declined := self._declined_edits(change)):
            return declined
        if open_pr is None and (original := self._proposed_elsewhere(change, branch)):
            if not dry_run:
                self._save(
                    change.recipe_path,
                    branch,
                    AlignmentState.DUPLICATE,
                    duplicate_of=original.number,
                    edits_digest=change.edits_digest,
                )
            return AlignmentResult(
                change.recipe_path,
                branch,
                "duplicate",
                original.number,
                original.html_url,
                "recipe-sync does not open a second PR",
            )
        if dry_run:
            verb = "update" if open_pr else "open"
            return AlignmentResult(
                change.recipe_path,
                branch,
                "dry-run",
                open_pr.number if open_pr else None,
                open_pr.html_url if open_pr else None,
                f"dry run: would {verb} an alignment PR from branch `{branch}`",
            )
        rebase = open_pr is not None and REBASE_LABEL in open_pr.labels
        tip = self.mirror.remote_tip(branch)
        if tip is not None:
            self.mirror.fetch(f"+refs/heads/{branch}:refs/rs/branches/{branch}")
            human = None if rebase else self._human_commit(tip)
            if human is not None:
                return self._mark_edited(change, branch, open_pr, human)
        elif open_pr is None and (reason := self._cap_reached()):
            return AlignmentResult(
                change.recipe_path, branch, "deferred", note=f"deferred: {reason}"
            )

        pushed = False
        if tip is not None and not rebase and self.mirror.files_match(tip, change.files):
            head = tip  # the branch already carries exactly this change
        else:
            head = self.mirror.commit_files(
                self.base_sha, change.files, change.commit_message, self.identity
            )
            self.guard()
            if not self.mirror.push(head, branch, expected=tip):
                if tip is None:  # created concurrently: look again on the next attempt
                    raise TransientGitHubError(f"branch {branch} appeared while pushing")
                return self._mark_edited(
                    change, branch, open_pr, ("(unknown)", "a concurrent push")
                )
            pushed = True
        previous = self.store.alignments.by_branch(self.gh.full_name, branch)
        digest = previous.edits_digest if previous is not None else None
        if open_pr is not None and digest and digest != change.edits_digest:
            self.orphaned += self.store.alignments.duplicates_of(self.gh.full_name, open_pr.number)
        self._save(
            change.recipe_path,
            branch,
            last_pushed_sha=head,
            fingerprint=change.fingerprint,
            edits_digest=change.edits_digest or None,
            duplicate_of=None,
            state=AlignmentState.OPEN,
            # the record follows the open PR; a declined one lives on in its fingerprint
            pr_number=open_pr.number if open_pr else None,
            html_url=open_pr.html_url if open_pr else None,
        )
        if rebase and open_pr is not None:
            self.guard()
            self.gh.remove_label(open_pr.number, REBASE_LABEL)
            self.stickies.delete(open_pr.number, "edited", EDITED_MARKER, self.guard)

        title, body = change.title[:TITLE_LIMIT], change.body
        if open_pr is not None:
            changed = open_pr.title != title or open_pr.body != body
            # the recipes' default branch changed: the branch was rebuilt on the new one,
            # so the PR must compare against it (else its diff shows the branches' gap)
            retarget = open_pr.base_ref != self.default_branch
            if changed or retarget:
                self.guard()
                self.gh.edit_pull(
                    open_pr.number,
                    title=title if changed else None,
                    body=body if changed else None,
                    base=self.default_branch if retarget else None,
                )
            action: Action = "updated" if (changed or pushed or retarget) else "unchanged"
            return AlignmentResult(
                change.recipe_path, branch, action, open_pr.number, open_pr.html_url
            )

        if reason := self._cap_reached():
            return AlignmentResult(
                change.recipe_path, branch, "deferred", note=f"deferred: {reason}"
            )
        self.guard()
        try:
            created = self.gh.create_pull(
                base=self.default_branch,
                head=branch,
                title=title,
                body=body,
                draft=self.policy.pr.draft,
            )
        except GitHubRequestError as err:
            if err.status == 422 and "already exists" in err.message:
                # created concurrently: the next attempt finds it by its branch
                raise TransientGitHubError(f"PR for {branch} appeared meanwhile: {err}") from err
            raise  # any other 422 is permanent: GitHub's message goes to the check run
        self._save(
            change.recipe_path,
            branch,
            pr_number=created.number,
            html_url=created.html_url,
            state=AlignmentState.OPEN,
        )
        labels = self.gh.ensure_labels(self.policy.pr.labels)
        self.gh.add_labels(created.number, labels)
        return AlignmentResult(
            change.recipe_path, branch, "created", created.number, created.html_url
        )

    def retire(self, record: AlignmentRecord, reason: str) -> AlignmentResult:
        """Close an alignment PR that no longer applies, or mark it abandoned if edited."""
        if record.pr_number is None:
            return AlignmentResult(record.recipe_path, record.branch, "gone")
        pr = self.gh.pull(record.pr_number)
        if pr.state != "open":
            self._save(
                record.recipe_path,
                record.branch,
                AlignmentState.MERGED if pr.merged else AlignmentState.CLOSED,
            )
            return AlignmentResult(
                record.recipe_path, record.branch, "gone", pr.number, pr.html_url
            )
        tip = self.mirror.remote_tip(record.branch)
        human = None
        if tip is not None:
            self.mirror.fetch(f"+refs/heads/{record.branch}:refs/rs/branches/{record.branch}")
            human = self._human_commit(tip)
        if human is not None:
            self._save(record.recipe_path, record.branch, AlignmentState.ABANDONED)
            self.orphaned += self.store.alignments.duplicates_of(self.gh.full_name, pr.number)
            self.stickies.upsert(
                pr.number,
                "retired",
                RETIRED_MARKER,
                retired_comment(reason, edited=True),
                self.guard,
            )
            if not pr.title.endswith(ABANDONED):
                self.guard()
                self.gh.edit_pull(pr.number, title=suffixed_title(pr.title, ABANDONED))
            return AlignmentResult(
                record.recipe_path, record.branch, "abandoned", pr.number, pr.html_url
            )
        self._save(record.recipe_path, record.branch, AlignmentState.AUTOCLOSED)
        self.stickies.upsert(
            pr.number, "retired", RETIRED_MARKER, retired_comment(reason, edited=False), self.guard
        )
        self.guard()
        title = suffixed_title(pr.title, AUTOCLOSED)
        self.gh.edit_pull(pr.number, title=title, state="closed")
        self.gh.delete_branch(record.branch)
        return AlignmentResult(
            record.recipe_path, record.branch, "autoclosed", pr.number, pr.html_url
        )
