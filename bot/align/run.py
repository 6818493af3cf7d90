"""One alignment run: benchmark PR → launch lines → profiles → plans → patches.

Used by the CLI (``recipe-sync align``) and the service engine (:mod:`bot.service.engine`).
Inputs are ``FileSource`` views (benchmark head and base, recipes base), the rules, optional
config keys and optional workflow-run evidence (:class:`~bot.align.result.AlignInputs`); the
output is a value (:class:`~bot.align.result.AlignRun`) holding the plans and the patch per
recipe file; :func:`bot.present.present` turns it into text. Nothing here talks to GitHub;
the recipes builder (the one external process) is injected.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from bot.align.caches import LineMemo
from bot.align.change import AffectedKey, benchmark_change, settle_unchanged
from bot.align.compare import Comparer
from bot.align.delta import key_delta
from bot.align.evidence import collect
from bot.align.family import FamilyLanes
from bot.align.guide_images import ImageLine, image_moves, update_image_lines
from bot.align.model import OFFERED_WORDS
from bot.align.new_variant import NewVariant
from bot.align.overlay import OverlaySource
from bot.align.plan import AlignmentPlan, Target, plan_recipe
from bot.align.profile import Unmapped, map_profile
from bot.align.quoted import generated_command, recipes_names
from bot.align.regression import BuilderReport, regression_matrix
from bot.align.reproduction import (
    GuideDrift,
    GuidePlacement,
    SectionPoint,
    apply_sections,
    build_sections,
    guide_drift,
    section_points,
)
from bot.align.reproduction.lanes import changed_lane, documents, writes_reproduction
from bot.align.result import (
    UNCLOSED_DRIFT,
    AlignInputs,
    AlignRun,
    BenchLines,
    KeyResult,
    PointResult,
    RecipeOutcome,
)
from bot.align.skeletons import with_new_variants
from bot.align.targets import representatives, targets_by_recipe
from bot.benchmarks import BenchRepo, LaunchLine, extract, load_bench_repo, points
from bot.benchmarks.changelog import ChangelogEntry, entries_for
from bot.benchmarks.scope import multinode_reason
from bot.errors import InputError, Location, RecipeSyncError
from bot.evidence.model import EvidenceReport
from bot.recipes import RecipesRepo, render
from bot.recipes.edit.splice import unified_diff
from bot.recipes.repo import with_recipe_files
from bot.recipes.tolerant import RecipesCache, load_recipes_tolerant
from bot.recipes.withdrawals import recent_withdrawals
from bot.shell import EvaluationCache, JobTooLarge, job_budget
from bot.sources import FileSource, WithoutFiles
from bot.vllm import FlagDiff
from bot.words import count as count_of

# ------------------------------------------------------------------------------ points


def classify(comparer: Comparer, launch: LaunchLine) -> PointResult:
    """What one extracted launch line is for the recipes (docs/alignment.md §2-§4)."""
    base = PointResult(launch.config_key, launch.point, launch.arm, "error", "", launch=launch)
    if launch.status == "invalid":
        return replace(base, status="invalid", reason=launch.invalid or "not valid for this script")
    if launch.status != "launched":
        return replace(base, status="no-launch", reason=launch.reason or launch.status)
    mapped = map_profile(comparer.recipes, comparer.rules, launch)
    if isinstance(mapped, Unmapped):
        return replace(base, status="unmapped", reason=mapped.reason)
    comparison = comparer(launch, mapped)
    result = replace(base, profile=mapped, comparison=comparison)
    if not mapped.represents_recipe:
        return replace(result, status="context", reason=mapped.note)
    if comparison.parallelism_differs:
        what = ", ".join(_parallelism_words(d) for d in comparison.parallelism_differs)
        return replace(result, status="other-point", reason=f"another point of the sweep: {what}")
    return replace(result, status="represents")


def _parallelism_words(diff: FlagDiff) -> str:
    """``--tensor-parallel-size 4 (recipe 8)``; a side without the flag, or a switch, as
    spelled: ``no --enable-expert-parallel (recipe --enable-expert-parallel)``, never the
    canonical None / True of the comparison."""
    values = (diff.bench_value, diff.recipe_value)
    if not any(v is None or isinstance(v, bool) for v in values):
        return f"{diff.flag} {diff.bench_value} (recipe {diff.recipe_value})"
    bench = " ".join(diff.bench_tokens) or f"no {diff.flag}"
    recipe = f"recipe {' '.join(diff.recipe_tokens)}" if diff.recipe_tokens else "not in the recipe"
    return f"{bench} ({recipe})"


def _classified(comparer: Comparer, launch: LaunchLine) -> PointResult | RecipeSyncError:
    try:
        return classify(comparer, launch)
    except RecipeSyncError as err:
        return err


JOB_STEPS = 40_000_000  # evaluation steps across every point of one change
JOB_SECONDS = 240.0  # wall time of evaluating every point of one change
MAX_POINTS = 5_000  # launch points of one config key (real keys have tens)


def key_result(
    head: BenchRepo,
    comparer: Comparer,
    key: AffectedKey,
    memo: LineMemo[object] | None = None,
    *,
    seen: dict[str, object] | None = None,
    reuse: Callable[[LaunchLine], object | None] | None = None,
) -> KeyResult:
    """The points of ``key`` classified against ``comparer``'s tree. ``seen`` gets each
    line's classification by the line's value (its ``repr``); ``reuse`` answers a line's
    classification where it is known (or None)."""
    if key.out_of_scope is not None:
        return KeyResult(key, (), key.out_of_scope)
    if key.unchanged is not None:
        return KeyResult(key, (), key.unchanged)
    try:
        if head.entry(key.key).multinode:
            node = head.configs[key.key]
            raw = node.document.get(key.key)
            reason = multinode_reason(head.entry(key.key).framework, raw)
            return KeyResult(key, (), reason)
        pairs = points(head, key.key)
    except RecipeSyncError as err:
        return KeyResult(key, (), str(err), error=True)
    if len(pairs) > MAX_POINTS:
        raise JobTooLarge(
            f"too large to analyse: config key '{key.key}' has {len(pairs):,} launch points "
            f"(limit {MAX_POINTS:,})"
        )
    results: list[PointResult] = []
    for point, arm in pairs:
        try:
            launch = extract(head, key.key, point, arm)
        except JobTooLarge:
            raise
        except RecipeSyncError as err:
            results.append(PointResult(key.key, point, arm, "error", str(err)))
            continue
        try:
            found = reuse(launch) if reuse is not None else None
            if found is None:
                make = partial(_classified, comparer, launch)
                found = (
                    make()
                    if memo is None
                    else memo.get(comparer.recipes, comparer.rules, launch, make)
                )
            if seen is not None:
                seen[repr(launch)] = found
            if isinstance(found, RecipeSyncError):
                raise found
            assert isinstance(found, PointResult)
            results.append(found)
        except RecipeSyncError as err:
            results.append(PointResult(key.key, point, arm, "error", str(err), launch=launch))
    return KeyResult(key, representatives(tuple(results)))


# ------------------------------------------------------------------------------ outcomes


def fingerprint(patch: str) -> str:
    """sha256 of the patch's file headers and +/- lines (no hunk positions, no context), so
    the same change on a moved base keeps its fingerprint."""
    kept = [line for line in patch.splitlines() if line.startswith(("---", "+++", "+", "-"))]
    return hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest()


def empty_plan(path: str) -> AlignmentPlan:
    """The plan of a recipe that only other points of the sweep map to (no node to edit)."""
    return AlignmentPlan(path, (), (), (), (), (), (), (), (), (), ())


@dataclass(frozen=True)
class GuideInputs:
    """What the reproduction sections and the guide-drift check of one run need."""

    source: FileSource  # the recipes (base)
    head: BenchRepo
    points: tuple[SectionPoint, ...]
    evidence: EvidenceReport | None


def outcome(
    inputs: AlignInputs,
    recipes: RecipesRepo,
    plan: AlignmentPlan,
    guide: GuideInputs | None = None,
) -> RecipeOutcome:
    """The patch (node edits and reproduction sections, after the regression matrix and the
    builder) or why there is none."""
    if plan.status == "failed":
        why = plan.failure or "no edit found"
        reason = f"no alignment edit of {plan.recipe_path} is proposed: {why}"
        return RecipeOutcome(plan, None, "failed", reason)
    path = plan.recipe_path
    node_patch = plan.status == "patch" and plan.result is not None and plan.after is not None
    placements: tuple[GuidePlacement, ...] = ()
    drift: tuple[GuideDrift, ...] = ()
    images: tuple[ImageLine, ...] = ()
    original = ""
    text = plan.result.text if node_patch and plan.result is not None else ""
    if guide is not None:
        original = guide.source.read_bytes(path).decode("utf-8", errors="replace")
        if not node_patch:
            text = original
        base_repo = plan.after if node_patch and plan.after is not None else recipes
        drift = tuple(guide_drift(original, path, guide.points, recipes, inputs.rules))
        if plan.status != "blocked" and writes_reproduction(inputs.rules, node_patch):
            sections = build_sections(
                [
                    p
                    for p in guide.points
                    if p.profile.recipe_path == path and documents(inputs.rules, plan, p)
                ],
                base_repo,
                inputs.rules,
                guide.head,
                bench_ref=inputs.bench_ref,
                bench_url=_pr_url(inputs),
                head_sha=inputs.head_sha,
                evidence=guide.evidence,
            ).get(path, [])
            text, placements = apply_sections(
                text,
                path,
                sections,
                drift,
                inputs.rules.policy.guide_sections,
                edited=node_patch,
            )
        if node_patch and plan.after is not None and any(e.kind == "image" for e in plan.edits):
            moves = image_moves(recipes, plan.after, [t.profile for t in plan.targets])
            text, images = update_image_lines(text, path, recipes, moves)
    guide_changed = guide is not None and text != (
        plan.result.text if node_patch and plan.result is not None else original
    )
    if not node_patch and not guide_changed:
        if plan.skipped:
            reason = f"{UNCLOSED_DRIFT}: " + "; ".join(plan.skipped)
            return RecipeOutcome(plan, None, "blocked", reason, guide=placements, guide_drift=drift)
        if plan.offers_drift:
            count = len(plan.offered)
            waits = Counter(w.reason if (w := plan.waits_for(e)) else "" for e in plan.offered)
            why = ", ".join(
                f"{waits[r]} {words}" if len(waits) > 1 else words
                for r, (words, _heading) in OFFERED_WORDS.items()
                if waits[r]
            )
            edits = f"{count} candidate edit{'s' * (count != 1)}"
            reason = f"{edits} offered to tick ({why}); none proposed"
            return RecipeOutcome(plan, None, "offered", reason, guide=placements, guide_drift=drift)
        reason = "already aligned"
        if not plan.targets:  # only reproduction context: RecipeOutcome.context_only
            reason = "no point of this PR stands for the recipe's profile: nothing to compare"
        if plan.preexisting:
            count = len({(n.kind, n.subject) for n in plan.preexisting})
            reason = (
                "nothing this PR changed differs from the recipe; "
                f"{count} older difference{'s' if count != 1 else ''} it did not introduce "
                "stay out of its alignment PR"
            )
        if plan.offered:  # tuning only: the benchmark's choices, not drift
            reason += f"; {count_of(len(plan.offered), 'tuning setting')} offered to tick"
        return RecipeOutcome(plan, None, "aligned", reason, guide=placements, guide_drift=drift)
    if guide is None:
        assert plan.result is not None
        text, original = plan.result.text, ""
    new_text = text.encode("utf-8")
    if guide_changed:
        assert guide is not None
        after = with_recipe_files(recipes, OverlaySource(guide.source, {path: new_text}), [path])
        diff = unified_diff(original, text, path)
    else:
        assert plan.after is not None and plan.result is not None
        after, diff = plan.after, plan.result.diff
    if inputs.builder is not None:
        builder = inputs.builder({path: new_text}, after)
    else:
        builder = BuilderReport(False, True, "", "not run: no recipes tree to build")
    matrix = regression_matrix(
        recipes,
        after,
        path,
        plan.edits,
        [t.profile for t in plan.targets],
        builder,
    )
    blocked = matrix.blocked
    if blocked is not None:
        return RecipeOutcome(plan, matrix, "blocked", blocked, guide=placements, guide_drift=drift)
    return RecipeOutcome(
        plan,
        matrix,
        "patch",
        "",
        patch=diff,
        new_text=new_text,
        fingerprint=fingerprint(diff),
        guide=placements,
        guide_drift=drift,
        guide_images=images,
        after=generated_command(render(plan.after, plan.targets[0].profile.request()))
        if plan.edits and plan.after is not None
        else None,
    )


def _pr_url(inputs: AlignInputs) -> str | None:
    if inputs.bench_repo and inputs.pr_number is not None:
        return f"https://github.com/{inputs.bench_repo}/pull/{inputs.pr_number}"
    return None


def align(inputs: AlignInputs) -> AlignRun:
    """The whole run (see the module docstring)."""
    rules = inputs.rules
    caches = inputs.caches
    # one run's own cache when none is shared: the head's lines extracted to compare them
    # with the base's are not evaluated again for the alignment
    evaluations = caches.evaluations if caches is not None else EvaluationCache()
    head = load_bench_repo(inputs.bench, rules, evaluations)
    base: BenchRepo | None = None
    if inputs.bench_base is not None:
        base = load_bench_repo(inputs.bench_base, rules, evaluations)
        change = benchmark_change(base, head, inputs.config_keys or None)
    elif inputs.config_keys:
        change = benchmark_change(head, head, inputs.config_keys)
    else:
        raise InputError(
            Location(inputs.bench.label), "no PR base to compare with: give a base or config keys"
        )
    recipes, recipes_source, broken = _load_recipes(
        inputs.recipes, caches.recipes if caches is not None else None
    )
    # one budget for the whole change: a per-script budget multiplies with the points
    with job_budget(JOB_STEPS, JOB_SECONDS):
        if base is not None:
            change = settle_unchanged(base, head, change)
        memo = caches.points if caches is not None else None
        comparer = Comparer(recipes, rules)
        seen: dict[str, object] = {}
        mapped = tuple(key_result(head, comparer, key, memo, seen=seen) for key in change.keys)
        # the recipes the plans read: with the skeletons of new variants in place (the
        # patch is still written against ``recipes_source``, skeletons first)
        variants, planned_recipes, keys = with_new_variants(
            recipes,
            recipes_source,
            rules,
            mapped,
            seen,
            lambda comparer, reuse: tuple(
                key_result(head, comparer, key, reuse=reuse) for key in change.keys
            ),
        )
        deltas = {
            result.key.key: key_delta(
                base,
                head,
                result.key.key,
                [(p.point, p.arm, p.launch) for p in result.points if p.launch is not None],
            )
            for result in keys
            # a key asked for by name (--config-key) is checked whole: its older drift too
            if result.points and result.key.key not in inputs.config_keys
        }
    evidence = None
    if inputs.runs is not None and inputs.head_sha:
        evidence = collect(
            inputs.runs,
            head,
            [k.key for k in change.in_scope],
            head_sha=inputs.head_sha,
            head_branch=inputs.head_branch,
            pr_number=inputs.pr_number,
            head_repo=inputs.head_repo,
            repo=inputs.bench_repo or None,
            blob_sha_at=inputs.blob_sha_at,
            earlier_heads=inputs.earlier_heads,
            rules=rules,
        )
    # a reproduction section documents a lane this PR changed; one it left as it was (a
    # deprecation elsewhere, a harness change) keeps whatever the guide already says
    points = tuple(p for p in section_points(keys) if changed_lane(deltas, p, rules))
    by_recipe = targets_by_recipe(keys, head, evidence, rules, deltas)

    def plans(
        variants: tuple[NewVariant, ...], planned: RecipesRepo, by_recipe: dict[str, list[Target]]
    ) -> dict[str, AlignmentPlan]:
        new_keys = {(v.recipe_path, v.key) for v in variants}
        family = FamilyLanes(head, planned, rules)
        return {
            path: plan_recipe(
                planned,
                recipes_source,
                rules,
                [
                    replace(t, new_variant=True) if (path, t.profile.variant) in new_keys else t
                    for t in targets
                ],
                structure=[e for v in variants if v.recipe_path == path for e in v.edits()],
                ignored=inputs.ignored_flags.get(path, frozenset()),
                dropped=inputs.dropped_for(path),
                included=inputs.included_for(path),
                bench=head.source,
                provenance=inputs.bench_ref if inputs.pr_number is not None else "",
                history=recent_withdrawals(inputs.recipes, path),
                family=family,
            )
            for path, targets in by_recipe.items()
        }

    planned_by_path = plans(variants, planned_recipes, by_recipe)
    if variants and not all(
        _carries_settings(v, planned_by_path.get(v.recipe_path)) for v in variants
    ):
        # a new variant no point stands for, or one the lane adds nothing to, would be
        # written without a reason (and its renderings reported as unchanged): none is
        variants, planned_recipes, keys = (), recipes, mapped
        by_recipe = targets_by_recipe(keys, head, evidence, rules, deltas)
        points = tuple(p for p in section_points(keys) if changed_lane(deltas, p, rules))
        planned_by_path = plans(variants, planned_recipes, by_recipe)
    guide = GuideInputs(recipes_source, head, points, evidence)
    paths = sorted({*by_recipe, *(p.profile.recipe_path for p in points)})
    outcomes = [
        outcome(inputs, planned_recipes, planned_by_path.get(path) or empty_plan(path), guide)
        for path in paths
    ]
    # the run hands out plain values: its inputs without their sources, the names the texts
    # quote, and plans without the edited repository (each outcome has what it rendered)
    return AlignRun(
        inputs.quoted(),
        recipes_names(planned_recipes, paths),
        change,
        keys,
        tuple(replace(o, plan=replace(o.plan, after=None)) for o in outcomes),
        evidence,
        broken_recipes=broken,
        deltas=deltas,
        changelog=_changelog(head, outcomes, inputs.pr_number),
        lines=_bench_lines(head, outcomes),
    )


def _carries_settings(variant: NewVariant, plan: AlignmentPlan | None) -> bool:
    """Does the plan of the variant's recipe set something in the new variant beyond its
    skeleton (a setting the lane ran)?"""
    if plan is None:
        return False
    skeleton = {e.node for e in variant.edits()}
    inside = f"variants.{variant.key}."
    return any(e.node.startswith(inside) and e.node not in skeleton for e in plan.edits)


def _changelog(
    head: BenchRepo, outcomes: Sequence[RecipeOutcome], pr_number: int | None
) -> dict[str, tuple[ChangelogEntry, ...]]:
    """The perf-changelog entries this PR added for each key a node edit was planned for
    (the PR text cites them: the upstream vLLM PRs a new image brings)."""
    keys = [t.key for o in outcomes if o.status == "patch" and o.plan.edits for t in o.plan.targets]
    if not keys:
        return {}
    entries = head.changelog()
    return {key: entries_for(entries, key, pr_number) for key in dict.fromkeys(keys)}


def _bench_lines(head: BenchRepo, outcomes: Sequence[RecipeOutcome]) -> BenchLines:
    """Where each drifted env var is assigned in its script, and each drifted image in its
    master config."""
    env: dict[tuple[str, str], int] = {}
    images: dict[str, tuple[str, int]] = {}
    texts: dict[str, list[str] | None] = {}
    for outcome in outcomes:
        for target in outcome.plan.targets:
            for comparison in target.representatives:
                script = comparison.launch.script
                for diff in comparison.drift:
                    if diff.kind == "env" and script is not None:
                        if script not in texts:
                            texts[script] = _script_lines(head, script)
                        line = _assignment_line(texts[script], diff.key)
                        if line is not None:
                            env[(script, diff.key)] = line
                    elif diff.kind == "image" and target.key not in images:
                        node = head.configs.get(target.key)
                        at = node.line_at([target.key, "image"]) or node.line if node else None
                        if node is not None and at is not None:
                            images[target.key] = (node.file, at)
    return BenchLines(env, images)


def _script_lines(head: BenchRepo, script: str) -> list[str] | None:
    if not head.source.exists(script):
        return None
    return head.source.read_bytes(script).decode("utf-8", "replace").splitlines()


def _assignment_line(lines: list[str] | None, name: str) -> int | None:
    pattern = re.compile(rf"^\s*(export\s+)?{re.escape(name)}=")
    for number, line in enumerate(lines or (), start=1):
        if pattern.match(line):
            return number
    return None


def _load_recipes(
    source: FileSource, cache: RecipesCache | None = None
) -> tuple[RecipesRepo, FileSource, tuple[tuple[str, str], ...]]:
    """The recipes without the files that do not load (one broken recipe file must not stop
    the alignment of the others); a broken taxonomy or strategy is still an error."""
    loaded = cache.load(source) if cache is not None else load_recipes_tolerant(source)
    if loaded.repo is None:
        raise InputError(Location(source.label), loaded.error or "the recipes do not load")
    broken = tuple(sorted(loaded.broken.items()))
    view: FileSource = WithoutFiles(source, loaded.broken) if broken else source
    return loaded.repo, view, broken
