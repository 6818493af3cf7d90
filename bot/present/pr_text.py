"""The alignment PR's title and body (GitHub-flavoured Markdown), from computed values only.

Every sentence is built from the plan, the regression matrix and the evidence; values that
come from the benchmark PR (flag values, env values, keys, reasons quoting them) are escaped
(:mod:`bot.markdown`) or put in code spans, and the body is neutralised (no hidden
markers, mentions or closing keywords) and capped below GitHub's 65,536-character limit.
The verification comment, the check run and the plan JSON are in :mod:`bot.present.report`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot import markdown as md
from bot.align.nodes import hw_label, in_recipe
from bot.align.plan import AlignmentPlan, FlagNote, PlannedEdit, Target, Verification
from bot.align.profile import SYNTHETIC_KEYS
from bot.align.regression import RegressionMatrix, Row
from bot.align.result import AlignRun, RecipeOutcome
from bot.benchmarks.changelog import vllm_prs
from bot.markdown import MAX_BODY, neutralize, truncate
from bot.present.carried import settings_lines
from bot.present.evidence import render_evidence_section
from bot.present.guide import guide_section
from bot.present.hunks import hunk_lines
from bot.present.offered import offered_lines
from bot.present.posted import (
    TITLE_LIMIT,
    PullMeta,
    alignment_branch,
    body_room,
    pull_request_footer,
)
from bot.present.texts import PullRequestText
from bot.recipes import RecipesRepo, Rendering
from bot.recipes.command_text import quote_value
from bot.recipes.jsvalues import as_dict, js_str
from bot.rules import Rules
from bot.rules.knobs import KnobKind
from bot.vllm import canonical_flag
from bot.vllm.argv import flag_value
from bot.vllm.versions import fmt_version, parse_image
from bot.words import count

PLATFORMS = {"amd": "ROCm", "nvidia": "CUDA", "tpu": "TPU", "intel": "XPU"}
MAX_TABLE_ROWS = 12  # regression groups shown before the rest go into <details>
MAX_LISTED = 40  # items per <details> list


@dataclass(frozen=True)
class TextBudget:
    """How much of the long parts a body shows; a body over the limit is rebuilt compact."""

    table_rows: int = MAX_TABLE_ROWS  # regression groups in the table (the rest: <details>)
    detail_rows: int = 1_000  # regression groups inside <details>
    listed: int = MAX_LISTED  # items per list of what was left alone
    excerpts: bool = True  # job-log excerpts in the evidence section


COMPACT = TextBudget(table_rows=3, detail_rows=0, listed=5, excerpts=False)
ENV_WIDTH = 100  # the env prefix line is wrapped like the seed's


def code(value: object) -> str:
    return md.code(str(value))


_PLAIN = re.compile(r"[A-Za-z0-9_ .,:;()=+/\-—]*")
_LOOSE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def plain(text: str) -> str:
    """Trusted identifiers (recipe, strategy and hardware names) as they are when they hold
    no Markdown (an intraword ``_`` is not emphasis); anything else escaped."""
    if _PLAIN.fullmatch(text) and not _LOOSE_UNDERSCORE.search(text):
        return text
    return md.text(text)


def prose(text: str) -> str:
    """Text with identifiers in code spans (:func:`bot.markdown.prose`), without its final
    period (the caller ends the sentence)."""
    return md.prose(text.strip().rstrip("."))


_REF = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+")


def ref(bench_ref: str) -> str:
    """``owner/name#N`` stays a live cross-reference; anything else is escaped."""
    return bench_ref if _REF.fullmatch(bench_ref) else md.text(bench_ref)


def _recipe_name(plan: AlignmentPlan, recipes: RecipesRepo) -> str:
    recipe = recipes.by_path[plan.recipe_path]
    title = as_dict(recipe.data.get("meta")).get("title")
    return str(title) if title else plan.recipe_path.rsplit("/", 1)[-1].removesuffix(".yaml")


def _hardware(plan: AlignmentPlan, recipes: RecipesRepo) -> list[str]:
    ids = {t.profile.hardware for t in plan.targets}
    return [hw for hw in recipes.hardware if hw in ids]


# how a title names a changed flag (others: the flag without its dashes)
FLAG_WORDS = {
    "--moe-backend": "MoE backend",
    "--attention-backend": "attention backend",
    "--linear-backend": "GEMM backend",
    "--speculative-config": "speculative decoding",
    "--compilation-config": "compilation config",
    "--kv-cache-dtype": "KV-cache dtype",
    "--tensor-parallel-size": "TP",
    "--tool-call-parser": "tool-call parser",
    "--reasoning-parser": "reasoning parser",
}
MAX_TITLE_ITEMS = 3


def _changes(plan: AlignmentPlan, recipes: RecipesRepo) -> list[str]:
    """What the edits change, in words, most visible first (image, flags, features, env)."""
    hws = _hardware(plan, recipes)
    brands = {recipes.hardware[h].docker_brand for h in hws}
    words: list[str] = [f"new {e.subject} variant" for e in plan.edits if e.kind == "variant"]
    for edit in plan.edits:
        if edit.kind != "image":
            continue
        owner = edit.node.split(".")[-2] if edit.node.endswith(".docker_image") else ""
        if owner in recipes.hardware:  # one GPU's override: the title's tag names it
            words.append("image" if hws == [owner] else f"{hw_label(recipes, owner)} image")
        else:
            words.append(f"{'/'.join(sorted(b.upper() for b in brands))} image".strip())
    proposed = {e.subject for e in plan.edits if e.node == "opt_in_features"}
    for edit in plan.edits:
        if edit.node.split(".")[:2] in (["features", f] for f in proposed):
            continue  # named by the feature it goes behind
        if edit.kind in ("flag", "flag-new", "flag-remove") and edit.subject.startswith("--"):
            base = edit.subject.split(".", 1)[0]
            words.append(FLAG_WORDS.get(base, base.lstrip("-")))
        elif edit.kind == "flag-new" and edit.node == "opt_in_features":
            words.append(f"opt-in {edit.subject} feature")
    if not words and any(e.kind in ("env", "env-new") for e in plan.edits):
        words.append("env")
    words = list(dict.fromkeys(words))
    if not words and any(e.kind == "verified" for e in plan.edits):
        words.append("verified hardware")
    if len(words) > MAX_TITLE_ITEMS:
        words = [*words[: MAX_TITLE_ITEMS - 1], "more settings"]
    return words


def title(
    plan: AlignmentPlan,
    recipes: RecipesRepo,
    bench_repo: str,
    pr: int | None,
    outcome: RecipeOutcome | None = None,
) -> str:
    """What changes, stable across runs: ``[DeepSeek-V4.1-Flash][MI355X] Align image and MoE
    backend with InferenceX #3058`` (the MI355X image: the tag names the GPU; no SHAs, run ids
    or counts); a patch that only writes
    reproduction sections: ``[Widget][MI355X] Add benchmark reproduction to the guide from
    InferenceX #4000``."""
    if not plan.edits and outcome is not None and outcome.guide:
        ids = {p.section.hardware for p in outcome.guide}
        hws = [hw for hw in recipes.hardware if hw in ids]
        labels = "/".join(hw_label(recipes, h) for h in hws)
        tags = f"[{_recipe_name(plan, recipes)}]" + (f"[{labels}]" if labels else "")
        bench = bench_repo.rsplit("/", 1)[-1] if bench_repo else "benchmark"
        keys = outcome.guide[0].section.keys
        source = f"{bench} #{pr}" if pr is not None else f"{bench} {keys[0] if keys else ''}"
        text = f"{tags} Add benchmark reproduction to the guide from {source}"
        return " ".join(text.split())[:TITLE_LIMIT]
    hws = _hardware(plan, recipes)
    labels = "/".join(hw_label(recipes, h) for h in hws)
    tags = f"[{_recipe_name(plan, recipes)}]" + (f"[{labels}]" if labels else "")
    bench = bench_repo.rsplit("/", 1)[-1] if bench_repo else "benchmark"
    source = f"{bench} #{pr}" if pr is not None else f"{bench} {plan.targets[0].key}"
    words = _changes(plan, recipes)
    what = (
        ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)
    ) or "recipe"
    text = f"{tags} Align {what} with {source}"
    return " ".join(text.split())[:TITLE_LIMIT]


# ------------------------------------------------------------------------------ summary


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


_HEX = re.compile(r"[0-9a-f]{13,}")


def short_image(image: str) -> str:
    """An image or tag with its long hex run cut to 12 (``nightly-eed1f3d0c604``)."""
    return _HEX.sub(lambda m: m.group(0)[:12], image)


def _image_words(image: str) -> str:
    ref = parse_image(image)
    if ref.release is not None:
        return f"vLLM {fmt_version(ref.release)}"
    if ref.nightly_sha:
        return f"nightly build of vLLM commit {code(ref.nightly_sha[:12])}"
    if ref.nightly:
        return "rolling tag"
    return "custom tag, vLLM version unknown"


def _image_shown(old: str, new: str) -> str:
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
    shown = _image_shown(old, edit.after or "") if edit.kind == "image" else old
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
            text += f", instead of {code(_image_shown(old, value))} ({_image_words(old)})"
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


# ------------------------------------------------------------------------------ sections


def _command_block(rendering: Rendering) -> str:
    env = [
        f"{name}={quote_value(js_str(value))}" for name, value in rendering.commands[0].env.items()
    ]
    lines: list[str] = []
    current = ""
    for item in env:
        if current and len(current) + 1 + len(item) > ENV_WIDTH:
            lines.append(current)
            current = item
        else:
            current = f"{current} {item}".strip()
    if current:
        lines.append(current)
    command = str(rendering.json.get("command") or " ".join(rendering.commands[0].argv))
    body = "\n".join(lines) + ("\n\n" if lines else "") + command
    return md.fenced(body, "bash")


def _features_label(target: Target, recipes: RecipesRepo) -> str:
    recipe = recipes.by_path[target.profile.recipe_path]
    opt_in = recipe.data.get("opt_in_features") or []
    features = as_dict(recipe.data.get("features"))
    names: list[str] = []
    for name in target.profile.features:
        if name not in opt_in:
            continue
        label = name.replace("_", " ")
        mode = target.profile.modes.get(name)
        if mode:
            mode_label = as_dict(as_dict(as_dict(features.get(name)).get("modes")).get(mode))
            label += f" ({mode_label.get('label') or mode})"
        names.append(label)
    return " + ".join(names) or "default features"


def _invariant_sentence(after: Rendering, plan: AlignmentPlan) -> str:
    argv = after.commands[0].argv
    flags = [e.subject for e in plan.edits if e.kind in ("flag", "flag-new")]
    for token in argv:
        if token.startswith("--") and token.endswith("-config") and token not in flags:
            flags.append(token)
    present = [f for f in dict.fromkeys(flags) if f in argv]
    sentence = (
        "Exactly one " + ", one ".join(code(f) for f in present) + " and every other flag once"
        if present
        else "Every flag renders once"
    )
    spec = next((argv[i + 1] for i, t in enumerate(argv[:-1]) if t == "--speculative-config"), None)
    if spec is not None:
        try:
            data = json.loads(spec)
        except ValueError:
            data = {}
        synthetic = isinstance(data, dict) and (
            data.get("rejection_sample_method") == "synthetic"
            or any(key in data for key in SYNTHETIC_KEYS)
        )
        if not synthetic:
            sentence += "; no synthetic-acceptance fields"
    return f"{sentence}; no planned difference is left against the launch line."


def whitespace_check(patch: str) -> str:
    """``git diff --check`` rules on the added lines, and the diffstat."""
    lines = patch.splitlines()
    added = [x[1:] for x in lines if x.startswith("+") and not x.startswith("+++")]
    removed = [x for x in lines if x.startswith("-") and not x.startswith("---")]
    files = sum(1 for x in lines if x.startswith("+++ "))
    problems = [x for x in added if x != x.rstrip(" \t") or "\t" in x[: len(x) - len(x.lstrip())]]
    state = (
        "clean" if not problems else f"{count(len(problems), 'added line')} with whitespace errors"
    )
    which = "One file changed" if files == 1 else f"{files} files changed"
    return (
        f"Whitespace check of the patch (`git diff --check` rules): {state}. "
        f"{which}, +{len(added)}/−{len(removed)}."
    )


def pr_contents(found: RecipeOutcome) -> str:
    """What an alignment PR holds, in the same words in the CLI's summary and the comment:
    ``3 edits and 1 guide section``; a PR that only adds a guide section says so (its
    differences are documented, not edited)."""
    sections = sum(1 for p in found.guide if p.action in ("inserted", "updated", "adopted"))
    guide = count(sections, "guide section")
    if not found.plan.edits:
        return f"no YAML edit, {guide}" if sections else "no YAML edit"
    edits = count(len(found.plan.edits), "edit")
    return f"{edits} and {guide}" if sections else edits


def moved_summary(matrix: RegressionMatrix) -> str:
    """``12 of 110 renderings moved, all expected``: the matrix's counts in one line, "all
    expected" only when no rendering moved unexpectedly and every expected one moved."""
    line = f"{len(matrix.moved)} of {len(matrix.rows)} renderings moved"
    if not matrix.unexpected and not matrix.ineffective:
        return f"{line}, all expected"
    parts = [f"{len(matrix.unexpected)} unexpectedly"] if matrix.unexpected else []
    if matrix.ineffective:
        parts.append(f"{len(matrix.ineffective)} expected to move but unchanged")
    return f"{line}; {', '.join(parts)}"


def _matrix_section(
    matrix: RegressionMatrix, budget: TextBudget, images: Sequence[str]
) -> list[str]:
    """The regression matrix's groups (renderings with the same outcome), with the edited
    image tags short (they are in full in the summary)."""
    total = len(matrix.rows)
    api = sum(1 for r in matrix.rows if r.id.api_file is not None)
    moved = len(matrix.moved)
    how = f"{api} from the JSON API"
    if total > api:
        how += f", {total - api} with the benchmarked features"
    verdict = (
        "each only where an edited node applies"
        if not matrix.unexpected
        else "UNEXPECTED: " + prose("; ".join(matrix.unexpected))
    )
    head = ["| Renderings | Result |", "|---|---|"]
    rows = [
        f"| {md.cell(plain(_short(g.label, images)))} | "
        f"{md.cell(md.prose(_short(g.result, images)))} |"
        for g in matrix.groups
    ]
    out = [
        "### Regression checks",
        "",
        f"Every rendering of this recipe ({how}), before and after: {moved} moved, {verdict}; "
        f"{total - moved} unchanged.",
    ]
    if matrix.ineffective:
        out.append(f"Expected to move but unchanged: {prose('; '.join(matrix.ineffective))}.")
    out += ["", *head, *rows[: budget.table_rows]]
    rest = rows[budget.table_rows :]
    if rest:
        shown = rest[: budget.detail_rows]
        out += ["", f"<details><summary>{count(len(rest), 'more group')}</summary>", ""]
        out += [*head, *shown] if shown else []
        if len(shown) < len(rest):
            out.append(f"{count(len(rest) - len(shown), 'group')} not shown (see plan.json)")
        out += ["", "</details>"]
    return out


def _short(text: str, images: Sequence[str]) -> str:
    """``text`` with the tags of ``images`` short: the edited images, in full in the summary."""
    for image in images:
        tag = image.rpartition(":")[2]
        if short_image(tag) != tag:
            text = text.replace(tag, short_image(tag))
    return text


def _builder_line(matrix: RegressionMatrix) -> str:
    builder = matrix.builder
    if builder.ran:
        state = "✓" if builder.ok else "✗"
        result = prose(builder.summary or builder.detail)
        return f"- `node scripts/build-recipes-api.mjs`: {state} {result}"
    if builder.summary:
        return (
            f"- Recipes builder {prose(builder.detail)}; recipe-sync's own JSON API build of "
            f"{prose(builder.summary)}."
        )
    return f"- Recipes builder {prose(builder.detail)}."


def _validation(
    matrix: RegressionMatrix | None, patch: str, plan: AlignmentPlan, after: Rendering
) -> list[str]:
    out = ["### Validation", ""]
    if matrix is not None:
        out.append(_builder_line(matrix))
    out.append(f"- {_invariant_sentence(after, plan)}")
    out.append(f"- {whitespace_check(patch)}")
    return out


def _details(summary: str, lines: Sequence[str]) -> list[str]:
    """A collapsed block (the summary is plain text: GitHub renders no Markdown there)."""
    return [f"<details><summary>{md.text(summary)}</summary>", "", *lines, "", "</details>"]


def _defaults_section(plan: AlignmentPlan) -> list[str]:
    """Flags one side omits, resolved with vLLM's defaults: collapsed, one bullet each."""
    if not plan.defaults:
        return []
    pinned = {e.subject: e for e in plan.edits if e.kind == "flag-new"}
    lines = []
    for note in plan.defaults:
        if note.subject in pinned:
            verdict = "not equivalent, pinned"
        elif note.verdict.startswith("equivalent"):
            verdict = "equivalent, no edit"
        else:
            verdict = md.text(note.verdict)
        lines.append(f"- {code(note.subject)}: {verdict}: {prose(note.reason)}.")
    count = len(plan.defaults)
    return _details(
        f"Defaults correspondence: {count} flag{'s' if count > 1 else ''} one side omits", lines
    )


def _notes_list(name: str, notes: Sequence[FlagNote], why: str, listed: int) -> list[str]:
    if not notes:
        return []
    out = [f"**{name}** ({why}):", ""]
    for note in notes[:listed]:
        value = note.bench or note.recipe or note.subject
        out.append(f"- {code(value)}: {prose(note.reason)}.")
    if len(notes) > listed:
        out.append(f"- … and {len(notes) - listed} more (see plan.json)")
    return [*out, ""]


def _names_line(name: str, notes: Sequence[FlagNote], why: str, listed: int) -> list[str]:
    """One line of values for a class whose name is its reason (front-end, benchmark-only)."""
    if not notes:
        return []
    values = ", ".join(code(n.bench or n.recipe or n.subject) for n in notes[:listed])
    more = f" and {len(notes) - listed} more (see plan.json)" if len(notes) > listed else ""
    return [f"**{name}** ({why}): {values}{more}.", ""]


def _texts_list(name: str, items: Sequence[str], listed: int) -> list[str]:
    if not items:
        return []
    out = [f"**{name}**", "", *[f"- {prose(item)}." for item in items[:listed]]]
    if len(items) > listed:
        out.append(f"- … and {len(items) - listed} more (see plan.json)")
    return [*out, ""]


def _lists_section(plan: AlignmentPlan, budget: TextBudget) -> list[str]:
    policy = (
        "reported, not removed"
        if not any(e.kind == "flag-remove" for e in plan.edits)
        else "removed by policy"
    )
    why = f"rules/policy.yaml recipe_only_flags: {policy}"
    listed = budget.listed
    body = [
        *_notes_list("Recipe-only", plan.recipe_only, why, listed),
        # one the recipe already sets is no "never copied": said apart, as the diff says it
        *_names_line(
            "Benchmark-only",
            [n for n in plan.benchmark_only if n.recipe is None],
            "never copied into a recipe",
            listed,
        ),
        *_names_line(
            "Benchmark-only, yet the recipe sets it too",
            [n for n in plan.benchmark_only if n.recipe is not None],
            "left as it is; a maintainer may drop it",
            listed,
        ),
        *_names_line("Front-end only", plan.front_end, "not serving configuration", listed),
        *_notes_list("Unknown", plan.unknown, "not classified; not copied", listed),
        *_texts_list("Not edited", plan.skipped, listed),
        *_texts_list("Notes", plan.notes, listed),
    ]
    if not body:
        return []
    counts = [
        f"{len(items)} {name}"
        for name, items in (
            ("recipe-only", plan.recipe_only),
            ("benchmark-only", plan.benchmark_only),
            ("front-end", plan.front_end),
            ("unknown", plan.unknown),
            ("not edited", plan.skipped),
            ("notes", plan.notes),
        )
        if items
    ]
    return _details(f"Left alone: {', '.join(counts)}", body[:-1])


def _evidence_section(
    run: AlignRun, plan: AlignmentPlan, target: Target, budget: TextBudget
) -> list[str]:
    label = hw_label(run.recipes, target.profile.hardware)
    verification = next(
        (v for v in plan.verifications if v.hardware == target.profile.hardware), None
    )
    meta_key = code("meta.hardware." + target.profile.hardware)
    if target.report is None:
        already = verification is not None and verification.state == "already"
        consequence = (
            f"{meta_key} is already verified in the recipe"
            if already
            else f"so {meta_key} is not marked verified"
        )
        return [
            f"### {plain(label)} runtime evidence",
            "",
            f"No workflow-run evidence was given (no runs or job logs to read), {consequence}.",
        ]
    inputs = run.inputs
    changelog = run.changelog.get(target.key, ())
    section = render_evidence_section(
        target.report,
        hardware_label=label,
        serving_match=verification.serving_match if verification else None,
        changelog=changelog,
        changelog_key=target.key,
        pr_ref=inputs.bench_ref if inputs.pr_number is not None else None,
        heading_level=3,
        excerpts=budget.excerpts,
    )
    out = section.rstrip("\n").split("\n")
    if verification is not None and verification.state not in ("verified", "already"):
        out += ["", f"{meta_key} is not marked verified: {prose(verification.reason)}."]
    return out


# ------------------------------------------------------------------------------ the body


def _intro(run: AlignRun, plan: AlignmentPlan) -> list[str]:
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


def _summary(run: AlignRun, outcome: RecipeOutcome, after: Rendering) -> list[str]:
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


def body(run: AlignRun, outcome: RecipeOutcome, budget: TextBudget = TextBudget()) -> str:
    """The PR body without the metadata line (the service adds its own), neutralised: the
    summary and what a reviewer checks first; long lists collapsed at the end. Each part is
    one list of lines, so a section is added by appending one."""
    plan = outcome.plan
    inputs = run.inputs
    recipes = run.recipes
    if not plan.edits:
        return _guide_only_body(run, outcome)
    target = plan.targets[0]
    after = outcome.after
    assert after is not None  # align() renders it for every patch with node edits
    images = [e.after for e in plan.edits if e.kind == "image" and e.after]
    parts: list[list[str]] = [
        _intro(run, plan),
        _summary(run, outcome, after),
        settings_lines(plan, budget.listed),
        older_drift(plan),
        guide_section(outcome, inputs.rules.policy.guide_sections),
        _validation(outcome.matrix, outcome.patch, plan, after),
        [
            f"### Generated {plain(hw_label(recipes, target.profile.hardware))} / "
            f"{plain(target.profile.strategy)} / {plain(_features_label(target, recipes))} "
            f"on {code(_short(after.image or '', images))}",
            "",
            _command_block(after),
        ],
    ]
    if outcome.matrix is not None:
        parts.append(_matrix_section(outcome.matrix, budget, images))
    # targets of one key on one hardware (single_node_tp and _tep of a sweep) share their
    # evidence: each distinct section once
    evidence = [_evidence_section(run, plan, item, budget) for item in plan.targets]
    parts += [section for index, section in enumerate(evidence) if section not in evidence[:index]]
    parts.append(_defaults_section(plan))
    parts.append(_lists_section(plan, budget))
    return neutralize("\n\n".join("\n".join(p) for p in parts if p).rstrip() + "\n")


def older_drift(plan: AlignmentPlan) -> list[str]:
    """One sentence for the drift this PR did not introduce, so a reviewer knows it was seen
    and left out on purpose (docs/alignment.md §1b)."""
    subjects = list(dict.fromkeys(note.subject for note in plan.preexisting))
    if not subjects:
        return []
    named = ", ".join(code(s) for s in subjects[:6])
    more = f" and {len(subjects) - 6} more" if len(subjects) > 6 else ""
    return [
        f"Left out: the recipe also differs from the launch line in {named}{more}, which this "
        "PR did not change (older drift, tracked on the drift dashboard).",
        "",
    ]


def _guide_only_body(run: AlignRun, outcome: RecipeOutcome) -> str:
    """A patch that only writes reproduction sections: none of the sweep's points is the
    recipe's profile (another parallelism, synthetic acceptance), so no node moves."""
    inputs = run.inputs
    keys = list(dict.fromkeys(k for p in outcome.guide for k in p.section.keys))
    reasons = sorted(
        {
            f"{code(r.key)} {md.text(r.point.label())} ({md.text(r.arm)}): {prose(r.reason)}"
            for k in run.keys
            for r in k.points
            if r.profile is not None
            and r.profile.recipe_path == outcome.recipe_path
            and r.status in ("context", "other-point")
        }
    )
    parts: list[list[str]] = [
        [
            f"Documents how to reproduce {', '.join(code(k) for k in keys)} of "
            f"{ref(inputs.bench_ref)} in the guide of {code(outcome.recipe_path)}. "
            + (
                "None of its points is this recipe's profile, "
                if not outcome.plan.targets
                # points of another parallelism are targets whose differences stay out
                else "No difference of its points is carried into the recipe (why below), "
                if reasons
                else "The recipe's own profile already matches the benchmark, "
            )
            + "so no recipe node changes; every line of the section is computed from the "
            "launch lines, the recipe's rendering and the runs."
        ],
        guide_section(outcome, inputs.rules.policy.guide_sections),
    ]
    if reasons:
        shown = reasons[:MAX_LISTED]
        parts.append(
            [
                "<details><summary>Why the points are not the recipe's profile</summary>",
                "",
                *[f"- {r}" for r in shown],
                "",
                "</details>",
            ]
        )
    if inputs.head_sha:
        parts.append([f"Benchmark head {code(inputs.head_sha)}."])
    if inputs.recipes_sha:
        where = f"{md.text(inputs.recipes_repo)} " if inputs.recipes_repo else ""
        parts.append([f"Branched from {where}at {code(inputs.recipes_sha)}."])
    if outcome.matrix is not None:
        matrix = outcome.matrix
        parts.append(
            [
                "### Validation",
                "",
                f"- Regression matrix: {len(matrix.rows)} renderings of this recipe compared "
                f"before and after; {len(matrix.moved)} moved (the patch touches only "
                "`guide`).",
                f"- {whitespace_check(outcome.patch)}",
            ]
        )
    return neutralize("\n\n".join("\n".join(p) for p in parts if p).rstrip() + "\n")


def cap(text: str, limit: int = MAX_BODY) -> str:
    """At most ``limit`` characters, cut with a visible truncation note."""
    return text if len(text) <= limit else truncate(text, limit)


def capped_body(run: AlignRun, outcome: RecipeOutcome, limit: int) -> str:
    """The body under ``limit``: long tables, lists and excerpts collapse first
    (:data:`COMPACT`), and only then is the text cut with a note."""
    text = body(run, outcome)
    if len(text) > limit:
        text = body(run, outcome, COMPACT)
    return cap(text, limit)


def branch_of(run: AlignRun, recipe_path: str) -> str | None:
    """The alignment branch the App pushes the patch of ``recipe_path`` to (None: no PR)."""
    inputs = run.inputs
    if inputs.pr_number is None:
        return None
    return alignment_branch(
        inputs.rules.policy.branch_prefix,
        inputs.bench_repo or "benchmark",
        inputs.pr_number,
        recipe_path,
    )


def pull_request_text(
    run: AlignRun, outcome: RecipeOutcome, limit: int = MAX_BODY
) -> PullRequestText | None:
    """Title, body, metadata and footer of an outcome with a patch (None without one); the
    whole posted body stays under ``limit``."""
    if outcome.status != "patch":
        return None
    inputs = run.inputs
    meta = PullMeta(
        source=f"{inputs.bench_ref}@{inputs.head_sha}" if inputs.head_sha else inputs.bench_ref,
        target=outcome.recipe_path,
        fingerprint=outcome.fingerprint,
        branch=branch_of(run, outcome.recipe_path),
    )
    footer = pull_request_footer(
        inputs.bench_ref, inputs.head_sha, inputs.rules.policy.comment_command
    )
    return PullRequestText(
        title=title(outcome.plan, run.recipes, inputs.bench_repo, inputs.pr_number, outcome),
        body=capped_body(run, outcome, body_room(meta, footer, limit)),
        meta=meta,
        footer=footer,
    )
