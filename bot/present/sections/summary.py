"""The intro paragraph and the summary: one bullet per edit in reviewer words (what it sets,
the knob's class, who takes it, what the other renderings keep)."""

from __future__ import annotations

from bot import markdown as md
from bot.align.confidence import inside_new_variant, new_variant_profiles
from bot.align.nodes import in_recipe
from bot.align.plan import AlignmentPlan, PlannedEdit, Verification
from bot.align.quoted import GeneratedCommand, RecipesNames
from bot.align.regression import Row
from bot.align.result import AlignRun, RecipeOutcome
from bot.present.hunks import hunk_lines
from bot.present.offered import offered_lines
from bot.present.sections.changes import change_table
from bot.present.sections.common import (
    code,
    plain,
    prose,
    ref,
)
from bot.present.sections.values import (
    KIND_ORDER,
    SummaryContext,
    image_owner,
    image_shown,
    image_words,
    new_value,
    old_value,
    value_only,
)
from bot.rules import Rules
from bot.rules.knobs import KnobKind
from bot.vllm import canonical_flag


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


def _kept(edit: PlannedEdit, ctx: SummaryContext) -> str:
    """``; MI300X, MI325X, MI350X keep `…```: the renderings that still hold the benchmarked
    profile's old value (the regression matrix's ``kept``), by hardware."""
    matrix = ctx.matrix
    subject = _matrix_subject(edit)
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
    for hw in ctx.names.hardware:
        states = profiles.get(hw, {})
        kept = [s for s, state in states.items() if state == "kept"]
        if not kept:
            continue
        label = ctx.names.hw_label(hw)
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
    return f"; {' and '.join(plain(w) for w in who)} keep {code(value_only(subject, shown))}"


def _matrix_subject(edit: PlannedEdit) -> str:
    """The edit's subject as the regression matrix names it (a flag by its canonical name)."""
    return canonical_flag(edit.subject) if edit.subject.startswith("-") else edit.subject


def _held_state(row: Row, subject: str) -> str:
    """moved | kept (the old value) | absent (never set) | other (another value)."""
    if subject in row.subjects:
        return "moved"
    if subject in row.kept:
        return "kept"
    return "absent" if subject in row.absent else "other"


def _verb(edit: PlannedEdit, old: str | None, names: RecipesNames | None) -> str:
    """What the edit does; the old value is the change table's (no "instead of" here), but
    for an image what the old tag was in words, which the table does not say."""
    value = new_value(edit)
    if edit.kind == "image":
        text = f"Pin the {plain(image_owner(edit, names))} image to {code(value)}"
        text += f" ({image_words(value)}"
        return text + (f"; was {image_words(old)})" if old is not None else ")")
    if edit.kind == "flag":
        return f"Set {code(edit.subject + ' ' + value)}"
    if edit.kind == "flag-new":
        return f"{'Set' if old else 'Add'} {code(value)}"
    if edit.kind == "env":
        return f"Set {code(edit.subject + '=' + value)}"
    if edit.kind == "env-new":
        return f"{'Set' if old else 'Add'} {code(edit.subject + '=' + value)}"
    if edit.kind == "verified":
        return f"Record {code(edit.subject + ': verified')}"
    if edit.kind == "variant":
        return f"Add the variant {code(edit.subject)} serving {code(value)}"
    if edit.kind == "tp":
        return f"Set the variant's TP to {code(value)}"
    return f"Remove {code(edit.before or edit.subject)}"


def summary_bullet(edit: PlannedEdit, ctx: SummaryContext | None = None) -> str:
    """One edit in reviewer words: what it sets, the knob's class and what the other
    renderings keep. Where it lands and the old value are the change table's
    (:mod:`bot.present.sections.changes`). The reason only where the values do not say it (a
    removal by policy, a parallelism) and the upstream vLLM change of a new image; never
    the placement rule (plan.json has it), only why not the layer the rules name when the
    edit was narrowed to the benchmarked GPU."""
    what, kept = _bullet_parts(edit, ctx)
    return f"{what}{kept}."


def _bullet_parts(edit: PlannedEdit, ctx: SummaryContext | None) -> tuple[str, str]:
    """(what the edit sets, what the others keep) of :func:`summary_bullet`."""
    old = old_value(edit, ctx.plan) if ctx is not None else edit.before
    line = f"- {_verb(edit, old, ctx.names if ctx is not None else None)}"
    if ctx is not None:
        line += _knob(edit, ctx.rules)
    if edit.kind in ("flag-remove", "tp"):
        line += f": {prose(edit.reason)}"
    companion = ctx.plan.companion_of(edit) if ctx is not None else None
    if companion is not None:  # not asked for: it came with a ticked setting
        line += f"; with the ticked {code(companion[0])} ({plain(companion[1].name)}, below)"
    if edit.wider:  # a reviewer asks why not the shared block the recipe has for this
        line += f"; kept to {_kept_to(edit, ctx)} because {prose(edit.wider)}"
    if edit.kind == "image" and ctx is not None and ctx.upstream:
        cited = ", ".join(f"vllm-project/vllm#{n}" for n in ctx.upstream)
        line += f"; the benchmark's changelog cites upstream {cited}"
    kept = (_kept(edit, ctx) + _unbenchmarked(edit, ctx)) if ctx is not None else ""
    return line, kept


def _kept_to(edit: PlannedEdit, ctx: SummaryContext | None) -> str:
    """Where a narrowed edit landed, as the reviewer checks it against the table: the
    benchmarked GPU (a variant x GPU or strategy x GPU block), or a variant that runs on
    the benchmarked GPU only (its own block: ``variant `mxfp4` (MI355X only)``)."""
    parts = edit.node.split(".")
    if parts[0] != "variants" or len(parts) < 3 or parts[2] == "hardware_overrides":
        return "the benchmarked GPU"
    variant = parts[1]
    if ctx is None:
        return f"variant {code(variant)}"
    ran = (t.profile.hardware for t in ctx.plan.targets if t.profile.variant == variant)
    gpus = ", ".join(dict.fromkeys(ctx.names.hw_label(hw) for hw in ran))
    return f"variant {code(variant)}" + (f" ({plain(gpus)} only)" if gpus else "")


def _unbenchmarked(edit: PlannedEdit, ctx: SummaryContext) -> str:
    """``; it also reaches MI300X, MI325X, on which this PR aligns no lane``: an edit at a
    family's block (placement by domain) moves GPUs none of the aligned lanes ran on (the
    PR's context points there, if any, do not stand for the recipe); the reviewer reads that
    here, not only in the regression table."""
    if ctx.matrix is None or edit.kind in ("image", "verified"):
        return ""
    subject = _matrix_subject(edit)
    ran = {t.profile.hardware for t in ctx.plan.targets}
    reached = {row.id.hardware for row in ctx.matrix.rows if subject in row.subjects} - ran
    others = [ctx.names.hw_label(hw) for hw in ctx.names.hardware if hw in reached]
    if not others:
        return ""
    return f"; it also reaches {plain(', '.join(others))}, on which this PR aligns no lane"


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


def summary_lines(
    plan: AlignmentPlan, bench_ref: str, ctx: SummaryContext | None = None
) -> list[str]:
    """One bullet per edit: the image first, then flags and env, the verification last; an
    edit made alike at several nodes (the same flag for single_node_tp and _tep of a sweep)
    is one bullet (the change table names every scope)."""
    lines: list[str] = []
    for edit in sorted(plan.edits, key=lambda e: KIND_ORDER.index(e.kind)):
        if edit.kind == "verified":
            verification = next((v for v in plan.verifications if v.hardware == edit.subject), None)
            lines.append(verified_bullet(edit, verification, ref(bench_ref)))
        else:
            lines.append(summary_bullet(edit, ctx))
    groups = {group.name: group.reason for *_, group in plan.companions}
    for name, reason in groups.items():
        lines.append(f"- The settings of {plain(name)} go together: {prose(reason)}.")
    return list(dict.fromkeys(lines))


def _untouched_overrides(after: GeneratedCommand, plan: AlignmentPlan) -> list[str]:
    """Hardware-specific override nodes the target draws from that the plan leaves alone."""
    edited = {e.node for e in plan.edits}
    found: dict[str, None] = {}
    for path in after.paths:
        if ".hardware_overrides." not in path or not in_recipe(path):
            continue
        if path in edited or path.rsplit("[", 1)[0] in edited:
            continue
        if path.startswith("hardware_overrides.") or path.startswith("strategy_overrides."):
            continue  # generation/profile blocks: covered by the edits' own scope
        found[path.rsplit("[", 1)[0]] = None
    return list(found)


def intro(run: AlignRun, plan: AlignmentPlan) -> list[str]:
    """What is aligned with which launch line, why the key is affected, and the base."""
    inputs = run.inputs
    target = plan.targets[0]
    points = ", ".join(
        f"{code(t.key)} ({plain(run.names.hw_label(t.profile.hardware))}, "
        f"{plain(t.profile.strategy)}, {plain(t.comparison.launch.arm)} arm)"
        for t in plan.targets
    )
    head = f" at head {code(inputs.head_sha)}" if inputs.head_sha else ""
    change = next(k for k in run.keys if k.key.key == target.key).key
    text = (
        f"Aligns {code(plan.recipe_path)} with the launch line {ref(inputs.bench_ref)} ran for "
        f"{points}{head}. {code(target.key)} is affected: {prose('; '.join(change.reasons))}."
    )
    text += other_parallelism_note(plan)
    if inputs.recipes_sha:
        where = f"{md.text(inputs.recipes_repo)} " if inputs.recipes_repo else ""
        text += f" Branched from {where}at {code(inputs.recipes_sha)}."
    return [text]


def other_parallelism_note(plan: AlignmentPlan) -> str:
    """A point at another parallelism than the recipe's stands for its profile (bot/align/
    targets.py): a reviewer is told the settings come from a run the recipe does not render."""
    out = ""
    for target in plan.targets:
        differs = target.comparison.parallelism_differs
        if not differs or target.tp is not None:  # a planned tp edit says so itself
            continue
        ran = ", ".join(code(f"{d.flag} {d.bench_value}") for d in differs)
        kept = ", ".join(code(f"{d.flag} {d.recipe_value}") for d in differs)
        out += (
            f" {code(target.key)} ran {ran}, the recipe renders {kept}: the recipe keeps its"
            " parallelism, and the settings below were benchmarked only at the lane's."
        )
    return out


def summary_section(run: AlignRun, outcome: RecipeOutcome, after: GeneratedCommand) -> list[str]:
    plan, names, inputs = outcome.plan, run.names, run.inputs
    target = plan.targets[0]
    ctx = SummaryContext(names, inputs.rules, plan, outcome.matrix, run.upstream(target.key))
    table = change_table(ctx)
    summary = ["### Summary", "", *table, *([""] if table else [])]
    summary += summary_lines(plan, inputs.bench_ref, ctx)
    untouched = _untouched_overrides(after, plan)
    if untouched:
        summary.append(
            "- Everything else is byte-identical, including "
            + ", ".join(code(u) for u in untouched)
            + f", which the {plain(names.hw_label(target.profile.hardware))} command draws from."
        )
    summary += hunk_lines(plan)
    for verification in plan.verifications:
        if not verification.marked:
            summary.append(
                f"- Not marked verified on {plain(names.hw_label(verification.hardware))}: "
                f"{prose(verification.reason)}."
            )
    summary += _estimate_line(plan)
    summary += _new_variant_line(plan)
    offered = offered_lines(plan, command=inputs.rules.policy.comment_command)
    if offered:
        summary += ["", *offered]
    return summary


def _new_variant_line(plan: AlignmentPlan) -> list[str]:
    """Why a new variant's settings are proposed whatever their kind's history
    (:func:`bot.align.confidence.inside_new_variant`)."""
    lines = []
    for key, profiles in new_variant_profiles(plan.edits, plan.targets).items():
        names = [e.subject for e in plan.edits if inside_new_variant(e, {key: profiles})]
        if names:
            lines.append(
                f"- {', '.join(code(n) for n in dict.fromkeys(names))} go with the new variant "
                f"{code(key)} whatever the history of their kind: every benchmarked "
                "profile of it ran them, and nothing else renders them."
            )
    return lines


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
