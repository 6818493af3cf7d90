"""The planner on the real recipes corpus: a launch line derived from each recipe's default
rendering, with one recipe value changed, a new tuning flag and a new serving env var, must
give a patch that closes exactly that drift and moves nothing the edits do not apply to."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest

from bot.align.compare import compare
from bot.align.nodes import in_recipe
from bot.align.plan import Target, plan_recipe
from bot.align.profile import Profile
from bot.align.regression import BuilderReport, regression_matrix
from bot.benchmarks import LaunchLine, Point
from bot.recipes import RecipesRepo, RenderRequest, load_recipes, render
from bot.recipes.jsvalues import js_str
from bot.recipes.select import hardware_order
from bot.rules import default_rules
from bot.sources import DirectorySource
from tests.shared import corpus_dir
from tests.ungated import ungated

NOT_RUN = BuilderReport(False, True, "", "not run: test")


@cache
def corpus() -> tuple[DirectorySource, RecipesRepo]:
    source = DirectorySource(corpus_dir())
    return source, load_recipes(source)


def _bumped(value: str) -> str | None:
    """Another valid value of the same type: ints + 1, decimals + 0.01."""
    if value.isdigit():
        return str(int(value) + 1)
    try:
        number = float(value)
    except ValueError:
        return None
    return f"{number + 0.01:.4g}" if "." in value else None


def _probe(recipe_path: str) -> str | None:
    """Run the planner on a synthetic launch line; None when the recipe is not probed."""
    source, repo = corpus()
    rules = ungated(default_rules())
    # tuning pinned (rules/policy.yaml knob_policy), so the probe's tuning flags are carried
    knobs = rules.policy.knob_policy.model_copy(update={"tuning": "pin"})
    rules = replace(rules, policy=rules.policy.model_copy(update={"knob_policy": knobs}))
    recipe = repo.by_path[recipe_path]
    if recipe.is_omni:
        return None
    hw, _ = hardware_order(repo, recipe, "default")
    rendering = render(repo, RenderRequest(recipe.hf_id, hw))
    if len(rendering.commands) != 1:
        return None  # multi-node defaults: benchmarks map only single-node strategies
    command = rendering.commands[0]
    argv = list(command.argv)
    # the last numeric value the recipe file sets of a flag whose knob class the policy
    # carries (a valid change to close), and of one it does not carry without an eval
    # (accuracy, workload, harness: kept as it is, listed as a benchmark setting or offered)
    listed = {rule.flag for rule in (*rules.flags.benchmark_only, *rules.flags.front_end)}
    changed: dict[bool, tuple[str, str, str]] = {}
    for unit in command.args:
        if unit.flag in (None, "--max-num-seqs", *listed) or not in_recipe(unit.path):
            continue
        bumped = _bumped(unit.value or "")
        if unit.flag is None or unit.value is None or bumped is None:
            continue
        action = rules.policy.knob_policy.action(rules.knob_class("flag", unit.flag))
        changed[action in ("recipe", "pin")] = (unit.flag, unit.value, bumped)
    for flag, _, value in changed.values():
        argv[argv.index(flag) + 1] = value
    argv += ["--max-num-seqs", "77"]
    env = {name: js_str(value) for name, value in command.env.items()}
    env["VLLM_USE_DEEP_GEMM_PROBE"] = "1"  # a kernel switch (rules/knobs.yaml)
    launch = LaunchLine(
        config_key="probe",
        point=Point(1, 1, False, 1, "none", "fixed-seq-len", 1, 1, None, None),
        arm="eval",
        framework="vllm",
        runner=hw,
        model=recipe.hf_id,
        precision="",
        image=rendering.image or "",
        model_prefix="probe",
        script=None,
        script_blob_sha=None,
        argv=tuple(argv),
        argv_sources=(),
        env=env,
        job_env={},
        unresolved=(),
        invalid=None,
    )
    request = rendering.request
    profile = Profile(
        recipe_path,
        request.model,
        request.variant or "default",
        request.hardware,
        request.strategy or "",
        tuple(request.features or ()),
        dict(request.modes),
    )
    comparison = compare(repo, rules, launch, profile)
    plan = plan_recipe(repo, source, rules, [Target("probe", profile, (comparison,))])
    assert plan.status == "patch", (plan.failure, plan.skipped)
    assert plan.after is not None
    after = render(plan.after, profile.request()).commands[0]
    assert after.argv[after.argv.index("--max-num-seqs") + 1] == "77"
    assert dict(after.env)["VLLM_USE_DEEP_GEMM_PROBE"] == "1"
    if True in changed:
        flag, _, value = changed[True]
        assert after.argv[after.argv.index(flag) + 1] == value, (flag, plan.edits)
    if False in changed:
        flag, old, value = changed[False]
        assert after.argv[after.argv.index(flag) + 1] == old, (flag, plan.edits)
        # listed as a benchmark setting, or (accuracy, no eval) offered to tick
        listed = any(s.subject == flag and s.bench == f"{flag} {value}" for s in plan.settings)
        offered = [e for e in plan.offered if e.subject == flag and value in (e.after or "")]
        assert listed or (offered and all(plan.waits_for(e) is not None for e in offered)), flag
    matrix = regression_matrix(repo, plan.after, recipe_path, plan.edits, [profile], NOT_RUN)
    assert matrix.unexpected == (), matrix.unexpected
    assert matrix.lost == (), matrix.lost
    assert matrix.moved, "the edits moved nothing"
    return recipe_path


def _paths() -> list[str]:
    _, repo = corpus()
    return [recipe.path for recipe in repo.recipes]


def test_a_sample_of_the_corpus() -> None:
    paths = _paths()
    probed = [p for p in paths[::15] if _probe(p) is not None]
    assert len(probed) >= 8


@pytest.mark.slow
def test_every_corpus_recipe() -> None:
    paths = _paths()
    probed = [p for p in paths if _probe(p) is not None]
    assert len(probed) >= 130
