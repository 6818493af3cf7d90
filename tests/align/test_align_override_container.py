"""Narrow scope, two settings in one override container: a value that lives in a variant's
generation block (``variants.default.hardware_overrides.hopper``), changed on H200 only, and a
second flag appended to the same H200 override. Both must land, the override must win over the
generation block (bot/recipes/layers.py: A8 after A7), and H100, which draws from the same
generation block, must not move."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.align.compare import compare
from bot.align.model import Wait
from bot.align.overlay import OverlaySource
from bot.align.plan import AlignmentPlan, Target, invariants, plan_recipe
from bot.align.profile import Profile
from bot.align.regression import BuilderReport, regression_matrix
from bot.benchmarks import LaunchLine, Point
from bot.fixtures import SeedFixtures
from bot.recipes import RecipesRepo, RenderRequest, load_recipes, render
from bot.recipes.jsvalues import js_str
from bot.rules import Rules, default_rules
from bot.sources import GitTreeSource
from tests.ungated import ungated

PATH = "models/example/Hopper-Probe.yaml"
OVERRIDE = "strategy_overrides.single_node_tp.hardware_overrides.h200.extra_args"
RECIPE = """\
meta:
  title: "Hopper Probe"
  provider: "Example"
  hardware:
    h100: verified
    h200: verified
model:
  model_id: "example/Hopper-Probe"
  docker_image: "vllm/vllm-openai:v0.27.1"
  base_args:
    - "--max-num-batched-tokens"
    - "16384"
variants:
  default:
    precision: bf16
    vram_minimum_gb: 40
    extra_args:
      - "--moe-backend"
      - "marlin"
    hardware_overrides:
      hopper:
        extra_args:
          - "--moe-backend"
          - "humming"
          - "--max-num-batched-tokens"
          - "32768"
compatible_strategies:
  - single_node_tp
"""
NOT_RUN = BuilderReport(False, True, "", "not run: test")


@pytest.fixture(scope="module")
def pinned() -> Rules:
    """``tuning: pin`` (rules/policy.yaml): tuning flags are carried at the narrowest scope."""
    rules = ungated(default_rules())
    knobs = rules.policy.knob_policy.model_copy(update={"tuning": "pin"})
    return replace(rules, policy=rules.policy.model_copy(update={"knob_policy": knobs}))


@pytest.fixture(scope="module")
def source(seed: SeedFixtures) -> OverlaySource:
    return OverlaySource(GitTreeSource(seed.recipes_repo, "main"), {PATH: RECIPE.encode()})


def _argv(repo: RecipesRepo, hw: str) -> list[str]:
    return list(render(repo, RenderRequest("example/Hopper-Probe", hw)).commands[0].argv)


def _value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def _plan(
    source: OverlaySource, rules: Rules, changes: dict[str, str]
) -> tuple[RecipesRepo, Profile, AlignmentPlan]:
    repo = load_recipes(source)
    rendering = render(repo, RenderRequest("example/Hopper-Probe", "h200"))
    command = rendering.commands[0]
    argv = list(command.argv)
    for flag, value in changes.items():
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    launch = LaunchLine(
        config_key="probe",
        point=Point(1, 1, False, 1, "none", "fixed-seq-len", 1, 1, None, None),
        arm="eval",
        framework="vllm",
        runner="h200",
        model="example/Hopper-Probe",
        precision="",
        image=rendering.image or "",
        model_prefix="probe",
        script=None,
        script_blob_sha=None,
        argv=tuple(argv),
        argv_sources=(),
        env={name: js_str(value) for name, value in command.env.items()},
        job_env={},
        unresolved=(),
        invalid=None,
    )
    request = rendering.request
    variant, strategy = request.variant or "default", request.strategy or ""
    features = tuple(request.features or ())
    profile = Profile(PATH, request.model, variant, "h200", strategy, features, dict(request.modes))
    comparison = compare(repo, rules, launch, profile)
    plan = plan_recipe(repo, source, rules, [Target("probe", profile, (comparison,))])
    return repo, profile, plan


def test_a_generation_value_changed_on_one_gpu_and_a_new_flag_share_one_override(
    source: OverlaySource, pinned: Rules
) -> None:
    changes = {"--moe-backend": "triton", "--max-num-seqs": "77"}
    before, profile, plan = _plan(source, pinned, changes)
    assert plan.status == "patch", (plan.failure, plan.skipped)
    edits = {e.subject: e for e in plan.edits}
    # the changed value is overridden for H200 (H100 draws from the hopper block too) ...
    assert edits["--moe-backend"].node == OVERRIDE
    assert "variants.default.hardware_overrides.hopper.extra_args[0]" in (
        edits["--moe-backend"].placement
    )
    # ... and the new flag goes to the same container: one list holding both
    assert edits["--max-num-seqs"].node == OVERRIDE
    assert edits["--moe-backend"].edit is edits["--max-num-seqs"].edit
    assert plan.result is not None
    written = plan.result.text.split("strategy_overrides:")[1].split()
    # quoted as this recipe quotes every args list (its plain lists are strategy names)
    assert written[written.index("extra_args:") + 1 :] == [
        "-", '"--moe-backend"', "-", '"triton"', "-", '"--max-num-seqs"', "-", '"77"'
    ]  # fmt: skip
    assert plan.after is not None
    after = _argv(plan.after, "h200")
    assert _value(after, "--moe-backend") == "triton"  # wins over the generation block
    assert _value(after, "--max-num-seqs") == "77"
    assert _value(after, "--max-num-batched-tokens") == "32768"
    assert _argv(plan.after, "h100") == _argv(before, "h100")
    matrix = regression_matrix(before, plan.after, PATH, plan.edits, [profile], NOT_RUN)
    assert matrix.unexpected == () and matrix.ineffective == () and matrix.lost == ()
    moved = {row.id.hardware for row in matrix.moved}
    assert moved == {"h200"}


def test_a_changed_value_the_edit_loses_fails_the_plan_and_blocks_the_matrix(
    source: OverlaySource, pinned: Rules
) -> None:
    """An edited recipe whose H200 override carries only the appended flag (the changed
    value merged away) fails the plan's re-render check and blocks the regression matrix:
    never a patch that keeps the old value."""
    changes = {"--moe-backend": "triton", "--max-num-seqs": "77"}
    before, profile, plan = _plan(source, pinned, changes)
    lossy = RECIPE + (
        "strategy_overrides:\n  single_node_tp:\n    hardware_overrides:\n      h200:\n"
        '        extra_args:\n          - "--max-num-seqs"\n          - "77"\n'
    )
    repo = load_recipes(replace(source, files={PATH: lossy.encode()}))
    rendering = render(repo, profile.request())
    failure = invariants(repo, pinned, plan.targets, [rendering], plan.edits)
    assert failure is not None and "--moe-backend" in failure, failure
    # the regression matrix blocks it too (it does not rely on the planner having noticed)
    matrix = regression_matrix(before, repo, PATH, plan.edits, [profile], NOT_RUN)
    assert matrix.lost == (f"{profile.label}: --moe-backend did not move",)
    assert matrix.blocked is not None and "--moe-backend did not move" in matrix.blocked


def test_a_value_the_policy_holds_is_kept_and_listed(source: OverlaySource, pinned: Rules) -> None:
    """An accuracy lever without a passing eval keeps its value, visibly (offered to tick
    until an eval passes), while the other settings of the same container land."""
    text = RECIPE.replace(
        '          - "32768"\n', '          - "32768"\n          - "--kv-cache-dtype"\n'
        '          - "fp8"\n', 1
    )  # fmt: skip
    overlay = replace(source, files={PATH: text.encode()})
    changes = {"--kv-cache-dtype": "auto", "--max-num-seqs": "77"}
    _, _, plan = _plan(overlay, pinned, changes)
    assert plan.status == "patch", (plan.failure, plan.skipped)
    assert plan.after is not None
    after = _argv(plan.after, "h200")
    assert _value(after, "--kv-cache-dtype") == "fp8"
    assert _value(after, "--max-num-seqs") == "77"
    (offered,) = [e for e in plan.offered if e.subject == "--kv-cache-dtype"]
    assert offered.after == "--kv-cache-dtype auto"
    assert plan.waits_for(offered) == Wait(
        "eval",
        "--kv-cache-dtype",
        "a quantized KV cache (e.g. fp8) trades accuracy for capacity",
    )


def test_a_dotted_unit_is_overridden_by_the_same_dotted_unit(
    source: OverlaySource, pinned: Rules
) -> None:
    """``--limit-mm-per-prompt.video 0`` in model.base_args, changed on H200: the override
    spells the dotted unit (the renderer drops an earlier unit only for the same flag text),
    not ``--limit-mm-per-prompt 1``, which would lose the key and render the flag twice."""
    text = RECIPE.replace(
        '    - "16384"\n', '    - "16384"\n    - "--limit-mm-per-prompt.video"\n    - "0"\n', 1
    )
    overlay = replace(source, files={PATH: text.encode()})
    before, profile, plan = _plan(overlay, pinned, {"--limit-mm-per-prompt.video": "1"})
    assert plan.status == "patch", (plan.failure, plan.skipped)
    (edit,) = [e for e in plan.edits if e.subject == "--limit-mm-per-prompt"]
    assert edit.node == "variants.default.hardware_overrides.h200.extra_args"
    assert edit.after == "--limit-mm-per-prompt.video 1"
    assert plan.after is not None
    after = _argv(plan.after, "h200")
    assert _value(after, "--limit-mm-per-prompt.video") == "1"
    assert after.count("--limit-mm-per-prompt.video") == 1
    assert not any(t.startswith("--limit-mm-per-prompt ") or t == "--limit-mm-per-prompt"
                   for t in after)  # fmt: skip
    assert _argv(plan.after, "h100") == _argv(before, "h100")
    matrix = regression_matrix(before, plan.after, PATH, plan.edits, [profile], NOT_RUN)
    assert matrix.blocked is None, matrix.blocked
