"""The alignment planner: comparisons of benchmark points → the smallest recipe edit.

docs/alignment.md §5. Pure: the recipes repository (before), its source (for the file's
bytes), the rules and the :class:`Target` profiles of one recipe file go in; an
:class:`AlignmentPlan` comes out with the edits (each with the FlagDiff reason a reviewer can
check and the node it lands on), what was left alone and why, and the edited text. After the
edits the target profiles are re-rendered and re-compared: exactly one of each flag, and no
drift left that the plan meant to close — otherwise the plan fails with the reason.

Every difference becomes a *demand* on one YAML node (change it, add to it, keep it as it
is). Two representative points demanding different values of one node is a conflict: that
node is not edited and the conflict is reported.

The steps live next to each other: ``demands.py`` (differences → demands, with placement),
``edits.py`` (conflicts, merging, editor edits in a valid order), ``verify.py`` (the cited
eval job against the edited rendering), ``nodes.py`` (provenance paths and values),
``values.py`` (the dataclasses, re-exported here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import NamedTuple

from bot.align.compare import compare
from bot.align.confidence import flag_root, gate, new_variant_profiles
from bot.align.demands import Collector
from bot.align.demands.image import nightly_channel
from bot.align.demands.model import Demand, KeepDemand
from bot.align.demands.placement import Placement
from bot.align.edits import build_edits, merge, resolve_conflicts, unique_edits, verified_edit
from bot.align.family import FamilyLanes
from bot.align.model import (
    AlignmentPlan,
    EditKind,
    FlagNote,
    PlannedEdit,
    Target,
    Verification,
    VerificationState,
    Wait,
)
from bot.align.nodes import scope_of, text_value
from bot.align.overlay import OverlaySource
from bot.align.recipe_comments import stale_comment_edits
from bot.align.reverts import withhold_reverts
from bot.align.verify import verification_for
from bot.argv import option_name
from bot.errors import RecipeSyncError
from bot.recipes import RecipesRepo, Rendering, render
from bot.recipes.edit import EditError, apply_edits
from bot.recipes.edit.document import Document
from bot.recipes.jsvalues import as_dict
from bot.recipes.repo import Recipe, with_recipe_files
from bot.recipes.withdrawals import History
from bot.rules import Rules
from bot.sources import FileSource
from bot.vllm import FlagDiff, canonical_flag
from bot.vllm.defaults import load_vllm_defaults

__all__ = [
    "AlignmentPlan",
    "EditKind",
    "FlagNote",
    "PlannedEdit",
    "Target",
    "Verification",
    "VerificationState",
    "invariants",
    "plan_recipe",
    "repeated_flags",
]


def repeated_flags(argv: Sequence[str]) -> list[str]:
    """Flags the command spells more than once (``--x`` and ``--x=…`` count together)."""
    counts: dict[str, int] = {}
    for token in argv[3:] if tuple(argv[:2]) == ("vllm", "serve") else argv:
        if token.startswith("--"):
            name = option_name(token).replace("_", "-")
            counts[name] = counts.get(name, 0) + 1
    return [name for name, count in counts.items() if count > 1]


def plan_recipe(
    recipes: RecipesRepo,
    source: FileSource,
    rules: Rules,
    targets: Sequence[Target],
    *,
    ignored: frozenset[str] = frozenset(),
    dropped: Mapping[str, str] | None = None,
    bench: FileSource | None = None,
    provenance: str = "",
    structure: Sequence[PlannedEdit] = (),
    included: frozenset[str] = frozenset(),
    history: History | None = None,
    family: FamilyLanes | None = None,
) -> AlignmentPlan:
    """The plan for one recipe file (all ``targets`` share ``recipe_path``).

    ``structure``: skeletons of new variants, written first; ``recipes`` already holds them
    (the settings are planned against them), ``source`` does not (the patch adds them).

    ``ignored``: flags a maintainer ignored for this recipe on the dashboard issue;
    ``dropped``: flags or env vars declined on this alignment PR (subject → who asked). Their
    demands are left out and listed as skipped. ``bench`` (the benchmark head) and
    ``provenance`` (``owner/name#N``) let a comment about a changed value quote the script's.
    ``history``: what maintainers recently removed or changed in the file; a candidate that
    would undo it is withheld (:mod:`bot.align.reverts`; None: not checked, and said so).
    ``family``: the benchmark head's lanes by hardware family, for placing a setting by its
    domain (:mod:`bot.align.family`; None: narrowed to the benchmarked GPU as before).

    A new variant's own settings go with it whatever their estimate
    (:func:`bot.align.confidence.gate`); when that plan fails its checks (the variant's lanes
    disagree on one of them), it is made again with them gated like any other setting.
    """
    plan = partial(
        _plan_recipe, recipes, source, rules, targets, ignored=ignored, dropped=dropped,
        bench=bench, provenance=provenance, structure=structure, included=included,
        history=history, family=family,
    )  # fmt: skip
    new_variants = new_variant_profiles(structure, targets)
    trusted = plan(new_variants=new_variants)
    if new_variants and trusted.failure is not None:
        return plan(new_variants={})
    return trusted


def _plan_recipe(
    recipes: RecipesRepo,
    source: FileSource,
    rules: Rules,
    targets: Sequence[Target],
    *,
    ignored: frozenset[str],
    dropped: Mapping[str, str] | None,
    bench: FileSource | None,
    provenance: str,
    structure: Sequence[PlannedEdit],
    included: frozenset[str],
    history: History | None,
    family: FamilyLanes | None,
    new_variants: Mapping[str, frozenset[str]],
) -> AlignmentPlan:
    dropped = {
        canonical_flag(k) if k.startswith("--") else k: v for k, v in (dropped or {}).items()
    }
    assert targets, "a plan needs at least one target"
    path = targets[0].profile.recipe_path
    recipe = recipes.by_path[path]
    planner = Collector(Placement(recipes, recipe, rules, targets, family))
    for target in targets:
        planner.tp(target)
        for comparison in target.representatives:
            planner.collect(target, comparison)
    out = planner.out
    # a profile whose workload settings go behind a feature is re-rendered with it on
    targets = [
        replace(t, profile=replace(t.profile, features=(*t.profile.features, out.features[label])))
        if (label := t.profile.label) in out.features
        and out.features[label] not in t.profile.features
        else t
        for t in targets
    ]
    changes = [d for d in out.demands if not isinstance(d, KeepDemand)]
    ignoring = sorted({d.subject for d in changes if d.subject in ignored})
    declined = sorted(
        {d.subject for d in changes if d.subject in dropped and d.subject not in ignored}
    )
    wanted = [d for d in out.demands if d.subject not in ignored and d.subject not in dropped]
    demands, conflicts = resolve_conflicts(wanted)
    candidates, problems = build_edits(merge(demands), recipe, recipes)
    if (conflicts or problems) and out.offer_only:
        # settings only offered are not worth a blocking line: the plan is made again
        # without them, then with each that plans as cleanly as that; the others are given
        # up and listed as they were before the offer
        roots = {flag_root(subject) for subject in out.offer_only}

        def without(given_up: set[str]) -> _Attempt:
            chosen = [
                d
                for d in wanted
                if isinstance(d, KeepDemand) or _root_of(d.subject) not in given_up
            ]
            fewer, fewer_conflicts = resolve_conflicts(chosen)
            built, fewer_problems = build_edits(merge(fewer), recipe, recipes)
            return _Attempt(fewer, fewer_conflicts, built, fewer_problems)

        floor = without(roots)
        if floor.trouble < len(conflicts) + len(problems):
            clean = {r for r in roots if without(roots - {r}).trouble <= floor.trouble}
            best = without(roots - clean)
            if best.trouble > floor.trouble:  # each plans cleanly alone, not together
                clean, best = set(), floor
            demands, conflicts, candidates, problems = best
            out.give_up_offers({s for s in out.offer_only if flag_root(s) not in clean})
    superseded = load_vllm_defaults(rules.directory).superseded
    reverts = withhold_reverts(candidates, history, included, superseded)
    # precision first: only candidates maintainers are likely to take go into the diff
    vendor_of = {
        t.profile.label: recipes.hardware[t.profile.hardware].brand_lower
        for t in targets
        if t.profile.hardware in recipes.hardware
    }
    gated = gate(list(reverts.kept), rules, vendor_of, included, out.offer_only, new_variants)
    planned = list(gated.proposed)
    left_out = {flag_root(e.subject) for e in candidates} - {flag_root(e.subject) for e in planned}
    if left_out:
        # edits of one node are written together: rebuild them without what is left out, so
        # an offered or withheld setting never rides along with a proposed one
        kept = [
            d for d in demands if isinstance(d, KeepDemand) or _root_of(d.subject) not in left_out
        ]
        planned, problems = build_edits(merge(kept), recipe, recipes)
    planned = [*structure, *planned]  # a new variant's skeleton before its settings
    # a withheld candidate that was only to be offered blocks nothing: it is left alone
    offers = {flag_root(subject) for subject in out.offer_only}
    held = {root for root, _ in reverts.withheld}
    skipped = [*out.skipped, *conflicts, *problems, *reverts.lines(held - offers)]
    skipped += [f"{flag}: ignored for this recipe on the drift dashboard" for flag in ignoring]
    skipped += [f"{name}: {_dropped_by(dropped[name])}" for name in declined]
    base = AlignmentPlan(
        recipe_path=path,
        targets=tuple(targets),
        edits=(),
        defaults=tuple(_dedupe_notes(out.defaults)),
        recipe_only=tuple(_dedupe_notes(out.recipe_only)),
        benchmark_only=tuple(_dedupe_notes(out.benchmark_only)),
        front_end=tuple(_dedupe_notes(out.front_end)),
        unknown=tuple(_dedupe_notes(out.unknown)),
        skipped=tuple(dict.fromkeys(skipped)),
        notes=tuple(
            dict.fromkeys(
                [
                    *out.notes,
                    *reverts.lines(held & offers),
                    *([reverts.note] if reverts.note else []),
                ]
            )
        ),
        verifications=(),
        withheld=tuple(line for _, line in reverts.withheld),
        settings=tuple(dict.fromkeys(out.settings)),
        preexisting=tuple(_dedupe_notes(out.preexisting)),
        to_classify=tuple(dict.fromkeys(out.to_classify)),
        dropped=tuple((name, dropped[name]) for name in declined),
        offered=gated.offered,
        estimates=tuple((n, s, e) for (n, s), e in gated.estimates.items()),
        waiting=tuple((n, s, w) for (n, s), w in gated.waiting.items()),
        companions=tuple((n, s, t, w) for (n, s), (t, w) in gated.companions.items()),
    )
    text = source.read_bytes(path)
    try:
        result = apply_edits(text, unique_edits(planned), file=path)
    except EditError as err:
        return replace(
            base, edits=tuple(planned), failure=f"the edit could not be written into {path}: {err}"
        )
    try:
        after = _edited_repo(recipes, source, path, result.text)
        renderings = [render(after, t.profile.request()) for t in targets]
    except RecipeSyncError as err:
        reason = f"with the edit, {path} would no longer render: {err}"
        return replace(base, edits=tuple(planned), failure=reason, result=result)
    failure = invariants(after, rules, targets, renderings, planned)
    if failure is not None:
        return replace(base, edits=tuple(planned), failure=failure, result=result, after=after)
    verifications = _verifications(targets, renderings, recipes, rules, recipe)
    touched = _touched_labels(planned, base)
    verifications = [_as_asked(v, included, dropped) for v in verifications]
    marks_offered: list[PlannedEdit] = []
    for verification in verifications:
        if verification.state in ("verified", "asked"):
            into = planned
        elif _offers_mark(verification, rules, targets, touched):
            into = marks_offered
        else:
            continue
        mark = _mark(recipe, recipes, targets, verification.hardware, verification.reason)
        into += [mark] if mark is not None else []
    if any(p.kind == "verified" for p in planned):
        result = apply_edits(text, unique_edits(planned), file=path)
        after = _edited_repo(recipes, source, path, result.text)
    doc = Document(text.decode("utf-8"), path)
    comment_edits, comments = stale_comment_edits(
        doc, recipe.data, Document(result.text, path), planned, recipes,
        bench=bench, provenance=provenance,
    )  # fmt: skip
    if comment_edits:
        try:
            result = apply_edits(text, [*unique_edits(planned), *comment_edits], file=path)
        except EditError:
            comments = []  # a comment the editor cannot place: the body says nothing of it
    return replace(
        base,
        edits=tuple(planned),
        verifications=tuple(verifications),
        result=result,
        after=after,
        comments=tuple(comments),
        offered=(*base.offered, *marks_offered),
        waiting=(
            *base.waiting,
            *((m.node, m.subject, Wait("verify", m.node, m.reason)) for m in marks_offered),
        ),
    )


# offers that bring no verification mark: a PR did not introduce them (older drift, tuning),
# or an eval of their lane ran a patched engine, which verifies no recipe
_NOT_NEW = ("older", "tuning", "patched")


def _touched_labels(planned: Sequence[PlannedEdit], base: AlignmentPlan) -> set[str]:
    """The profiles an edit of the plan, or a candidate this PR introduced, is for (not
    older drift, nor the benchmark's tuning)."""
    introduced = [
        e for e in base.offered if (w := base.waits_for(e)) is None or w.reason not in _NOT_NEW
    ]
    return {label for edit in [*planned, *introduced] for label in edit.targets}


def _offers_mark(
    verification: Verification, rules: Rules, targets: Sequence[Target], touched: set[str]
) -> bool:
    """A verification mark is offered to tick (once an eval has passed) when no eval run was
    seen and the plan edits, or offers a candidate the PR introduced, for a lane on that GPU
    (older drift and tuning alone do not count): maintainers who aligned a recipe with a
    benchmark lane marked its GPU verified in the same commit (06-01…07-15: 2 linked commits
    by 2 authors, MiniMax-M3 on B200 and Kimi-K2.6 on B300, 8 linked PRs; 07-16…07-31: the
    same 2 marks, linked to 2 more PRs; the seed's reviewers asked for one). Never on its
    own: a recipe with nothing to align gets no checkbox."""
    if not rules.policy.mark_verified or verification.state != "no-evidence":
        return False
    on_gpu = {t.profile.label for t in targets if t.profile.hardware == verification.hardware}
    return bool(on_gpu & touched)


def _as_asked(
    verification: Verification, included: frozenset[str], dropped: Mapping[str, str]
) -> Verification:
    """The verification as a maintainer's choice leaves it: a mark declined on the alignment
    PR (``drop meta.hardware.<hw>``) is not written, eval or not; one asked for (``add …``)
    with no eval run seen is written, and says so."""
    key = f"meta.hardware.{verification.hardware}"
    if key in dropped and verification.state in ("verified", "no-evidence"):
        return replace(verification, state="declined", reason=f"a maintainer declined it ({key})")
    if verification.state != "no-evidence" or key not in included:
        return verification
    reason = (
        f"a maintainer asked for it (add {key}); recipe-sync saw no eval run that verifies it "
        f"({verification.reason})"
    )
    return replace(verification, state="asked", reason=reason)


def _mark(
    recipe: Recipe, recipes: RecipesRepo, targets: Sequence[Target], hw: str, reason: str
) -> PlannedEdit | None:
    """``meta.hardware.<hw>: verified`` as a planned edit (None: already so)."""
    edit = verified_edit(recipe, recipes, hw)
    if edit is None:
        return None
    return PlannedEdit(
        edit=edit,
        kind="verified",
        subject=hw,
        before=text_value(as_dict(as_dict(recipe.data.get("meta")).get("hardware")).get(hw)),
        after="verified",
        node=f"meta.hardware.{hw}",
        scope=scope_of(("meta",), recipes),
        reason=reason,
        placement="rules/policy.yaml mark_verified",
        targets=tuple(t.profile.label for t in targets if t.profile.hardware == hw),
    )


class _Attempt(NamedTuple):
    """A plan's demands and edits, and what stops them (conflicts, edits it cannot build)."""

    demands: list[Demand]
    conflicts: list[str]
    edits: list[PlannedEdit]
    problems: list[str]

    @property
    def trouble(self) -> int:
        return len(self.conflicts) + len(self.problems)


def _root_of(subject: str) -> str:
    return flag_root(canonical_flag(subject) if subject.startswith("--") else subject)


def _dropped_by(who: str) -> str:
    return f"dropped on request by {who}" if who else "dropped on request (--drop)"


def _dedupe_notes(notes: Sequence[FlagNote]) -> list[FlagNote]:
    seen: dict[tuple[str, str, str | None, str | None], FlagNote] = {}
    for note in notes:
        seen.setdefault((note.kind, note.subject, note.bench, note.recipe), note)
    return list(seen.values())


def _edited_repo(before: RecipesRepo, source: FileSource, path: str, text: str) -> RecipesRepo:
    return with_recipe_files(before, OverlaySource(source, {path: text.encode("utf-8")}), [path])


def invariants(
    after: RecipesRepo,
    rules: Rules,
    targets: Sequence[Target],
    renderings: Sequence[Rendering],
    planned: Sequence[PlannedEdit],
) -> str | None:
    """None when every target renders each flag once and no planned drift is left."""
    meant = {p.subject for p in planned}
    for target, rendering in zip(targets, renderings, strict=True):
        label = target.profile.label
        for command in rendering.commands:
            repeated = repeated_flags(command.argv)
            if repeated:
                return (
                    f"with the edit, {label} would pass {', '.join(repeated)} more than once on "
                    "its command line"
                )
        for representative in target.representatives:
            again = compare(after, rules, representative.launch, target.profile)
            left = [d for d in again.differences if d.flag in meant and not _channel(d)]
            if left:
                reasons = "; ".join(d.reason for d in left)
                return f"the edit would not align {label}; it would still differ: {reasons}"
    return None


def _channel(diff: FlagDiff) -> bool:
    """The recipe follows the nightly channel of the benchmark's nightly build: planned so
    (demands/image.py), not a difference left."""
    return diff.kind == "image" and nightly_channel(diff.bench_value) == diff.recipe_value


def _verifications(
    targets: Sequence[Target],
    renderings: Sequence[Rendering],
    recipes: RecipesRepo,
    rules: Rules,
    recipe: Recipe,
) -> list[Verification]:
    """One per hardware: the first target of that hardware with evidence decides."""
    chosen: dict[str, Verification] = {}
    for target, rendering in zip(targets, renderings, strict=True):
        found = verification_for(target, rendering, recipes, rules, recipe)
        hw = target.profile.hardware
        if hw not in chosen or (chosen[hw].evidence is None and found.evidence is not None):
            chosen[hw] = found
    return list(chosen.values())
