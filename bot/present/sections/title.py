"""The alignment PR's title: what changes, stable across runs (no SHAs, run ids or counts)."""

from __future__ import annotations

from bot.align.model import edited_hardware
from bot.align.plan import AlignmentPlan
from bot.align.quoted import RecipesNames
from bot.align.result import RecipeOutcome
from bot.present.posted import (
    TITLE_LIMIT,
)


def _hardware(plan: AlignmentPlan, names: RecipesNames) -> list[str]:
    """The hardware the edits are for (#1571: one MI355X edit, not every GPU the PR ran);
    every lane's when no edit names a lane."""
    ids = edited_hardware(plan) or {t.profile.hardware for t in plan.targets}
    return [hw for hw in names.hardware if hw in ids]


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
# a title that names its variables stays readable in a PR list: past this, "env" instead
READABLE_TITLE = 100


def _changes(plan: AlignmentPlan, names: RecipesNames, *, name_env: bool = True) -> list[str]:
    """What the edits change, in words, most visible first (image, flags, features, env);
    an edit of variables alone names them (``name_env``), else says "env"."""
    hws = _hardware(plan, names)
    brands = {names.hardware[h].brand for h in hws}
    words: list[str] = [f"new {e.subject} variant" for e in plan.edits if e.kind == "variant"]
    for edit in plan.edits:
        if edit.kind != "image":
            continue
        owner = edit.node.split(".")[-2] if edit.node.endswith(".docker_image") else ""
        if owner in names.hardware:  # one GPU's override: the title's tag names it
            words.append("image" if hws == [owner] else f"{names.hw_label(owner)} image")
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
    env = [e.subject for e in plan.edits if e.kind in ("env", "env-new")]
    if not words and env:
        named = list(dict.fromkeys(env))
        words.extend(named if name_env and len(named) <= 2 else ["env"])
    words = list(dict.fromkeys(words))
    if not words and any(e.kind == "verified" for e in plan.edits):
        words.append("verified hardware")
    if len(words) > MAX_TITLE_ITEMS:
        words = [*words[: MAX_TITLE_ITEMS - 1], "more settings"]
    return words


def title(
    plan: AlignmentPlan,
    names: RecipesNames,
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
        hws = [hw for hw in names.hardware if hw in ids]
        labels = "/".join(names.hw_label(h) for h in hws)
        tags = f"[{names.recipes[plan.recipe_path].title}]" + (f"[{labels}]" if labels else "")
        bench = bench_repo.rsplit("/", 1)[-1] if bench_repo else "benchmark"
        keys = outcome.guide[0].section.keys
        source = f"{bench} #{pr}" if pr is not None else f"{bench} {keys[0] if keys else ''}"
        text = f"{tags} Add benchmark reproduction to the guide from {source}"
        return " ".join(text.split())[:TITLE_LIMIT]
    hws = _hardware(plan, names)
    labels = "/".join(names.hw_label(h) for h in hws)
    tags = f"[{names.recipes[plan.recipe_path].title}]" + (f"[{labels}]" if labels else "")
    bench = bench_repo.rsplit("/", 1)[-1] if bench_repo else "benchmark"
    source = f"{bench} #{pr}" if pr is not None else f"{bench} {plan.targets[0].key}"
    text = _align_text(tags, _changes(plan, names), source)
    if len(text) > READABLE_TITLE:
        text = _align_text(tags, _changes(plan, names, name_env=False), source)
    return text[:TITLE_LIMIT]


def _align_text(tags: str, words: list[str], source: str) -> str:
    what = (
        ", ".join(words[:-1]) + f" and {words[-1]}" if len(words) > 1 else "".join(words)
    ) or "recipe"
    return " ".join(f"{tags} Align {what} with {source}".split())
