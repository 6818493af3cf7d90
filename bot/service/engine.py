"""``AlignEngine``: the service's :class:`~bot.contract.SyncEngine`, over :mod:`bot.align.run`.

The service's default engine. One call aligns one
benchmark PR head: the request's sources in, one :class:`RecipeChange` per recipe file with a
patch, the recipe files already aligned, the verification comment, the check run and its
annotations out. The engine keeps no state between calls (each call loads its own
repositories), so one instance serves concurrent threads. It has no side effects, so a dry
run needs nothing different: the service decides not to push. Bad input raises
:class:`~bot.errors.RecipeSyncError` (the service reports it on the PR, as documented in
``bot/contract.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bot.align.builder import run_builder
from bot.align.caches import EngineCaches
from bot.align.regression import BuilderReport
from bot.align.result import AlignInputs, AlignRun, RecipeOutcome
from bot.align.run import align
from bot.contract import RecipeChange, SyncOutcome, SyncRequest, edits_digest
from bot.present import AlignTexts, present
from bot.recipes import RecipesRepo
from bot.rules import Rules, default_rules
from bot.sources import FileSource, GitTreeSource, git_blob_sha_at


def commit_message(run: AlignRun, outcome: RecipeOutcome, title: str) -> str:
    inputs = run.inputs
    head = f" (head {inputs.head_sha})" if inputs.head_sha else ""
    return (
        f"{title}\n\n"
        f"Aligns {outcome.recipe_path} with the launch line {inputs.bench_ref}{head} ran.\n\n"
        f"recipe-sync fingerprint: {outcome.fingerprint}\n"
    )


def sync_outcome(run: AlignRun, texts: AlignTexts) -> SyncOutcome:
    """The service's view of a finished run and its texts."""
    changes = tuple(
        RecipeChange(
            recipe_path=found.recipe_path,
            files={found.recipe_path: found.new_text or b""},
            title=texts.prs[found.recipe_path].title,
            body=texts.prs[found.recipe_path].full_body,
            commit_message=commit_message(run, found, texts.prs[found.recipe_path].title),
            fingerprint=found.fingerprint,
            edits_digest=edits_digest((e.node, e.after) for e in found.plan.edits),
        )
        for found in run.patches
    )
    return SyncOutcome(
        changes=changes,
        aligned=tuple(o.recipe_path for o in run.outcomes if o.status == "aligned"),
        comment=texts.comment,
        check_conclusion=texts.check.conclusion,
        check_title=texts.check.title,
        check_summary=texts.check.summary,
        annotations=texts.check.annotations,
        withdrawn={
            o.recipe_path: "every change left was dropped on request ("
            + ", ".join(name for name, _ in o.plan.dropped)
            + ")"
            for o in run.outcomes
            if o.status != "patch" and o.plan.dropped
        },
    )


class AlignEngine:
    """Thread-safe; ``rules`` default to the project's ``rules/``. Stateless unless given
    ``caches`` (bounded, thread-safe), which every run then shares: script evaluations reused
    while the files they read are unchanged, recipes trees and renderings by content."""

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        run_recipes_builder: bool = True,
        caches: EngineCaches | None = None,
    ) -> None:
        self.rules = rules
        self.run_recipes_builder = run_recipes_builder
        self.caches = caches

    def inputs(self, request: SyncRequest) -> AlignInputs:
        recipes: FileSource = request.recipes
        builder = None
        if self.run_recipes_builder:

            def builder(edited: Mapping[str, bytes], after: RecipesRepo) -> BuilderReport:
                return run_builder(recipes, edited, after)

        bench = request.bench
        blob_sha_at = git_blob_sha_at(bench.repo_path) if isinstance(bench, GitTreeSource) else None
        rules = self.rules or default_rules()
        if request.policy is not None:
            rules = replace(rules, policy=request.policy)
        return AlignInputs(
            bench=bench,
            bench_base=request.bench_base,
            recipes=recipes,
            rules=rules,
            runs=request.runs,
            bench_repo=request.bench_repo,
            pr_number=request.pr_number,
            head_sha=request.head_sha,
            base_sha=request.base_sha,
            head_branch=request.head_branch,
            head_repo=request.head_repo,
            recipes_repo=request.recipes_repo,
            recipes_sha=request.recipes_base_sha,
            blob_sha_at=blob_sha_at,
            builder=builder,
            ignored_flags=request.ignored_flags,
            dropped=request.dropped,
            included={path: frozenset(names) for path, names in request.added.items()},
            caches=self.caches,
        )

    def sync(self, request: SyncRequest) -> SyncOutcome:
        run = align(self.inputs(request))
        return sync_outcome(run, present(run))
