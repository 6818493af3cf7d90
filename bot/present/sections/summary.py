"""The intro paragraph and the summary: one bullet per edit in reviewer words (what it sets,
the knob's class, who takes it, what the other renderings keep)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bot import markdown as md
from bot.align.nodes import hw_label, in_recipe
from bot.align.plan import AlignmentPlan, PlannedEdit, Verification
from bot.align.regression import RegressionMatrix, Row
from bot.align.result import AlignRun, RecipeOutcome
from bot.benchmarks.changelog import vllm_prs
from bot.present.hunks import hunk_lines
from bot.present.offered import offered_lines
from bot.present.sections.common import (
    code,
    plain,
    prose,
    ref,
)
from bot.recipes import RecipesRepo, Rendering
from bot.rules import Rules
from bot.rules.knobs import KnobKind
from bot.vllm import canonical_flag
from bot.vllm.argv import flag_value
from bot.vllm.versions import fmt_version, parse_image

PLATFORMS = {"amd": "ROCm", "nvidia": "CUDA", "tpu": "TPU", "intel": "XPU"}


@dataclass(frozen=True)
class SummaryContext:
    """What a summary bullet needs beyond the edit: the class of a knob, the scope in
    hardware words, what the other renderings keep (the regression matrix) and the upstream
    vLLM change the benchmark cites for a new image."""

    recipes: RecipesRepo
    rules: Rules
    plan: AlignmentPlan
    matrix: RegressionMatrix | None = None
    upstream: tuple[int, ...] = ()  # vLLM PRs the benchmark's changelog entry cites


def _image_words(image: str) -> str:
    ref = parse_image(image)
    if ref.release is not None:
        return f"vLLM {fmt_version(ref.release)}"
    if ref.nightly_sha:
        return f"nightly build of vLLM commit {code(ref.nightly_sha[:12])}"
    if ref.nightly:
        return "rolling tag"
    return "custom tag, vLLM version unknown"


def image_shown(old: str, new: str) -> str:
    """The old image as the bullet shows it: its tag when the repository stays."""
    before, after = parse_image(old), parse_image(new)
    return (before.tag or old) if before.repo == after.repo else old


def _image_owner(edit: PlannedEdit, recipes: RecipesRepo | None) -> str:
    parts = edit.node.split(".")
    key = parts[-2] if parts[-1] == "docker_image" else parts[-1]
    if recipes is not None and key in recipes.hardware:
        return hw_label(recipes, key)
    return key.upper() if key in PLATFORMS or parts[-1] == "docker_image" else key


def _old_value(edit: PlannedEdit, plan: AlignmentPlan) -> str | None:
    """The benchmarked profile's value before the edit: the edited node's, or (a new
    override node) what the recipe rendered there."""
    if edit.before is not None:
        return edit.before
    # only the profiles that demanded this edit: another strategy's value is not "instead"
    # (labels compared without their features: the plan may add an opt-in feature)
    asked = {label.split(" (")[0] for label in edit.targets}
    demanding = [t for t in plan.targets if t.profile.label.split(" (")[0] in asked]
    for target in demanding:
        for diff in target.comparison.drift:
            if diff.flag == edit.subject and diff.recipe_tokens:
                return _value_only(edit.subject, " ".join(diff.recipe_tokens))
    if edit.shadows is None or not edit.subject.startswith("--"):
        return None
    # an override of a whole config (its fields drifted, not the flag): the shadowed value
    for target in demanding:
        for unit in target.comparison.command.args:
            if unit.flag and canonical_flag(unit.flag) == edit.subject and unit.value:
                return unit.value
    return None


def _value_only(subject: str, shown: str) -> str:
    """``aiter_triton_mxfp4_bf16`` for ``--moe-backend aiter_triton_mxfp4_bf16``: the flag is
    named beside it."""
    head, _, value = shown.partition(" ")
    return value if value and subject.startswith("-") and head == subject else shown


def _knob(edit: PlannedEdit, rules: Rules) -> str:
    """`` (kernel: MoE kernel selection)``: the class rules/knobs.yaml gives the knob."""
    kind: KnobKind = "env" if edit.kind in ("env", "env-new") else "flag"
    if edit.kind not in ("flag", "flag-new", "env", "env-new", "flag-remove"):
        return ""
    cls = rules.knob_class(kind, edit.subject)
    if cls.value == "unclassified":
        return ""
    why = rules.knobs.reason(kind, edit.subject)
    return f" ({md.text(cls.value)}{': ' + prose(why) if why else ''})"


def _scope(edit: PlannedEdit, ctx: SummaryContext) -> str:
    """Who takes the edit, in hardware words: ``variant default on MI355X`` is ``MI355X
    only`` for a recipe with no other variant."""
    scope = edit.scope
    if (
        scope.startswith("variant ")
        and len(ctx.recipes.by_path[ctx.plan.recipe_path].variants) <= 1
    ):
        _, _, where = scope.partition(" on ")
        scope = f"{where} only" if where else "every rendering of the recipe"
    return scope[:1].upper() + scope[1:]


def _kept(edit: PlannedEdit, ctx: SummaryContext) -> str:
    """``; MI300X, MI325X, MI350X keep `…```: the renderings that still hold the benchmarked
    profile's old value (the regression matrix's ``kept``), by hardware."""
    matrix = ctx.matrix
    subject = canonical_flag(edit.subject) if edit.subject.startswith("-") else edit.subject
    old = dict(matrix.baseline).get(subject) if matrix is not None else None
    if matrix is None or old is None:
        return ""
    # hardware → strategy → moved | kept | absent (does not set it) | other (another value)
    profiles: dict[str, dict[str, str]] = {}
    for row in matrix.rows:
        state = _held_state(row, subject)
        seen = profiles.setdefault(row.id.hardware, {})
        if seen.get(row.id.strategy) in (None, "kept", "absent"):
            seen[row.id.strategy] = state
    whole: list[str] = []
    partial: list[str] = []
    for hw in ctx.recipes.hardware:
        states = profiles.get(hw, {})
        kept = [s for s, state in states.items() if state == "kept"]
        if not kept:
            continue
        label = hw_label(ctx.recipes, hw)
        others = {state for state in states.values() if state != "kept"}
        if others <= {"absent"}:  # every strategy that sets it keeps it
            whole.append(label)
        elif others <= {"moved", "absent"}:
            partial.append(f"the other {label} strategies")
        else:
            partial.append(f"{label} {', '.join(kept)}")
    who = [*partial, ", ".join(whole)] if whole else partial
    if not who:
        return ""
    shown = image_shown(old, edit.after or "") if edit.kind == "image" else old
    return f"; {' and '.join(plain(w) for w in who)} keep {code(_value_only(subject, shown))}"


def _held_state(row: Row, subject: str) -> str:
    """moved | kept (the old value) | absent (never set) | other (another value)."""
    if subject in row.subjects:
        return "moved"
    if subject in row.kept:
        return "kept"
    return "absent" if subject in row.absent else "other"


def _new_value(edit: PlannedEdit) -> str:
    """What the edit sets its subject to. A feature's args list replaced on one GPU (its
    ``after`` is the whole list, ``["--x", "v", …]``) shows the subject's own value ``v``."""
    value = edit.after or ""
    if not value.startswith("["):
        return value
    try:
        tokens = json.loads(value)
    except ValueError:
        return value
    found = flag_value(tuple(map(str, tokens)), edit.subject) if isinstance(tokens, list) else None
    return value if found is None else found


def _verb(edit: PlannedEdit, old: str | None, recipes: RecipesRepo | None) -> str:
    value = _new_value(edit)
    if edit.kind == "image":
        text = f"Pin the {plain(_image_owner(edit, recipes))} image to {code(value)}"
        text += f" ({_image_words(value)})"
        if old is not None:
            text += f", instead of {code(image_shown(old, value))} ({_image_words(old)})"
        return text
    instead = f" instead of {code(old)}" if old is not None else ""
    if edit.kind == "flag":
        return f"Set {code(edit.subject + ' ' + value)}{instead}"
    if edit.kind == "flag-new":
        return f"{'Set' if old else 'Add'} {code(value)}{instead}"
    if edit.kind == "env":
        return f"Set {code(edit.subject + '=' + value)}{instead}"
    if edit.kind == "env-new":
        return f"{'Set' if old else 'Add'} {code(edit.subject + '=' + value)}{instead}"
    if edit.kind == "verified":
        return f"Record {code(edit.subject + ': verified')}"
    if edit.kind == "variant":
        return f"Add the variant {code(edit.subject)} serving {code(value)}"
    if edit.kind == "tp":
        return f"Set the variant's TP to {code(value)}{instead}"
    return f"Remove {code(edit.before or edit.subject)}"


def summary_bullet(edit: PlannedEdit, ctx: SummaryContext | None = None) -> str:
    """One edit in reviewer words: what it sets (and instead of what), the knob's class, who
    takes it and what the others keep. The reason only where the values do not say it (a
    removal by policy, a parallelism) and the upstream vLLM change of a new image; never
    the placement rule (plan.json has it)."""
    what, scope, kept = _bullet_parts(edit, ctx)
    return f"{what}. {plain(scope)}{kept}."


def _bullet_parts(edit: PlannedEdit, ctx: SummaryContext | None) -> tuple[str, str, str]:
    """(what the edit sets, who takes it, what the others keep) of :func:`summary_bullet`."""
    old = _old_value(edit, ctx.plan) if ctx is not None else edit.before
    line = f"- {_verb(edit, old, ctx.recipes if ctx is not None else None)}"
    if ctx is not None:
        line += _knob(edit, ctx.rules)
    if edit.kind in ("flag-remove", "tp"):
        line += f": {prose(edit.reason)}"
    if edit.kind == "image" and ctx is not None and ctx.upstream:
        cited = ", ".join(f"vllm-project/vllm#{n}" for n in ctx.upstream)
        line += f"; the benchmark's changelog cites upstream {cited}"
    scope = _scope(edit, ctx) if ctx is not None else edit.scope[:1].upper() + edit.scope[1:]
    kept = _kept(edit, ctx) if ctx is not None else ""
    return line, scope, kept


_STRATEGY_SCOPE = re.compile(r"(?P<where>.+) \+ (?P<strategy>\S+) only")


def merged_scope(scopes: list[str]) -> str:
    """One scope for an edit made alike in several places: ``B300 + single_node_tp only``
    and ``B300 + single_node_tep only`` are ``B300 + single_node_tp, single_node_tep only``;
    scopes of other shapes are listed."""
    if len(scopes) == 1:
        return scopes[0]
    found = [_STRATEGY_SCOPE.fullmatch(s) for s in scopes]
    if not all(found):
        return "; ".join(scopes)
    by_where: dict[str, list[str]] = {}
    for match in found:
        assert match is not None
        by_where.setdefault(match.group("where"), []).append(match.group("strategy"))
    # hardware with the same strategies share one clause: ``B200, B300 + tp, tep only``
    by_strategies: dict[tuple[str, ...], list[str]] = {}
    for where, strategies in by_where.items():
        by_strategies.setdefault(tuple(strategies), []).append(where)
    return "; ".join(
        f"{', '.join(wheres)} + {', '.join(strategies)} only"
        for strategies, wheres in by_strategies.items()
    )


def verified_bullet(edit: PlannedEdit, verification: Verification | None, pr: str) -> str:
    """``Record mi355x: verified``, citing the run, its eval figures and the blob check."""
    item = verification.evidence if verification is not None else None
    if item is None:
        return summary_bullet(edit)
    tasks = ", ".join(dict.fromkeys(md.text(f.task) for f in item.figures))
    attempt = f" (attempt {item.attempt})" if item.attempt > 1 else ""
    return (
        f"- Record {code(edit.subject + ': verified')}: run {item.run_id}{attempt} passed "
        f"{tasks} with this launch line and the script {pr} ships (evidence below)."
    )


KIND_ORDER = (
    "variant",
    "image",
    "flag",
    "flag-new",
    "env",
    "env-new",
    "flag-remove",
    "tp",
    "verified",
)


def summary_lines(
    plan: AlignmentPlan, bench_ref: str, ctx: SummaryContext | None = None
) -> list[str]:
    """One bullet per edit: the image first, then flags and env, the verification last."""
    lines: list[str | tuple[str, str]] = []
    # an edit made alike at several nodes (the same flag for single_node_tp and _tep of a
    # sweep) is one bullet naming every scope
    scopes: dict[tuple[str, str], list[str]] = {}
    for edit in sorted(plan.edits, key=lambda e: KIND_ORDER.index(e.kind)):
        if edit.kind == "verified":
            verification = next((v for v in plan.verifications if v.hardware == edit.subject), None)
            lines.append(verified_bullet(edit, verification, ref(bench_ref)))
            continue
        what, scope, kept = _bullet_parts(edit, ctx)
        if (what, kept) not in scopes:
            lines.append((what, kept))
        scopes.setdefault((what, kept), []).append(scope)
    return [
        line
        if isinstance(line, str)
        else f"{line[0]}. {plain(merged_scope(scopes[line]))}{line[1]}."
        for line in lines
    ]


def _untouched_overrides(after: Rendering, plan: AlignmentPlan) -> list[str]:
    """Hardware-specific override nodes the target draws from that the plan leaves alone."""
    edited = {e.node for e in plan.edits}
    found: dict[str, None] = {}
    for unit in after.commands[0].args:
        if ".hardware_overrides." not in unit.path or not in_recipe(unit.path):
            continue
        if unit.path in edited or unit.path.rsplit("[", 1)[0] in edited:
            continue
        if unit.path.startswith("hardware_overrides.") or unit.path.startswith(
            "strategy_overrides."
        ):
            continue  # generation/profile blocks: covered by the edits' own scope
        found[unit.path.rsplit("[", 1)[0]] = None
    return list(found)


def intro(run: AlignRun, plan: AlignmentPlan) -> list[str]:
    """What is aligned with which launch line, why the key is affected, and the base."""
    inputs, recipes = run.inputs, run.recipes
    target = plan.targets[0]
    points = ", ".join(
        f"{code(t.key)} ({plain(hw_label(recipes, t.profile.hardware))}, "
        f"{plain(t.profile.strategy)}, {plain(t.comparison.launch.arm)} arm)"
        for t in plan.targets
    )
    head = f" at head {code(inputs.head_sha)}" if inputs.head_sha else ""
    change = next(k for k in run.keys if k.key.key == target.key).key
    text = (
        f"Aligns {code(plan.recipe_path)} with the launch line {ref(inputs.bench_ref)} ran for "
        f"{points}{head}. {code(target.key)} is affected: {prose('; '.join(change.reasons))}."
    )
    if inputs.recipes_sha:
        where = f"{md.text(inputs.recipes_repo)} " if inputs.recipes_repo else ""
        text += f" Branched from {where}at {code(inputs.recipes_sha)}."
    return [text]


def summary_section(run: AlignRun, outcome: RecipeOutcome, after: Rendering) -> list[str]:
    plan, recipes, inputs = outcome.plan, run.recipes, run.inputs
    target = plan.targets[0]
    upstream = vllm_prs(run.changelog.get(target.key, ()))
    ctx = SummaryContext(recipes, inputs.rules, plan, outcome.matrix, upstream)
    summary = ["### Summary", "", *summary_lines(plan, inputs.bench_ref, ctx)]
    untouched = _untouched_overrides(after, plan)
    if untouched:
        summary.append(
            "- Everything else is byte-identical, including "
            + ", ".join(code(u) for u in untouched)
            + f", which the {plain(hw_label(recipes, target.profile.hardware))} command draws from."
        )
    summary += hunk_lines(plan)
    for verification in plan.verifications:
        if verification.state not in ("verified", "already"):
            summary.append(
                f"- Not marked verified on {plain(hw_label(recipes, verification.hardware))}: "
                f"{prose(verification.reason)}."
            )
    summary += _estimate_line(plan)
    offered = offered_lines(plan, command=inputs.rules.policy.comment_command)
    if offered:
        summary += ["", *offered]
    return summary


def _estimate_line(plan: AlignmentPlan) -> list[str]:
    """The history behind the proposed edits' kinds (``bot.align.confidence``), once per
    kind: what the adoption threshold weighed."""
    said: dict[str, None] = {}
    for edit in plan.edits:
        estimate = plan.estimate_of(edit)
        if estimate is not None and estimate.proposed:
            said[estimate.tally()] = None
    if not said:
        return []
    return [
        "- Adopted by maintainers before, by kind: " + "; ".join(md.text(s) for s in said) + "."
    ]
