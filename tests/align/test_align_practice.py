"""The planner aligns the way recipe maintainers do (issue #14), on small variations of the seed
launch line and recipe: one test per practice (kernel, accuracy, tuning, workload, harness,
narrow scope, images, parallelism)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import cast

from bot.align.compare import compare
from bot.align.demands.model import FeatureDemand
from bot.align.edits import build_edits, unique_edits
from bot.align.model import Wait
from bot.align.overlay import OverlaySource
from bot.align.plan import AlignmentPlan, PlannedEdit, Target, plan_recipe
from bot.align.profile import Profile, map_profile
from bot.benchmarks import LaunchLine
from bot.evidence.model import Evidence
from bot.present.sections.summary import other_parallelism_note
from bot.recipes import RecipesRepo, RenderRequest, load_recipes, render
from bot.recipes.edit import apply_edits
from bot.rules import Rules
from bot.sources import FileSource, GitTreeSource
from tests.seed_cli import AlignCli, commit_edit

KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"
RECIPE = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"
SO_MI355X = "strategy_overrides.single_node_tp.hardware_overrides.mi355x"
NIGHTLY = "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"
# a passing eval the planner can cite (verification itself is tested with real logs elsewhere)
PASSED = cast(Evidence, SimpleNamespace(launch=None))


def _edited(source: FileSource, old: str, new: str) -> OverlaySource:
    text = source.read_bytes(RECIPE).decode()
    assert old in text
    return OverlaySource(source, {RECIPE: text.replace(old, new, 1).encode()})


def _plan(
    source: FileSource,
    rules: Rules,
    launch: LaunchLine,
    evidence: Evidence | None = None,
    tp: int | None = None,
    profile: Profile | None = None,
) -> tuple[RecipesRepo, AlignmentPlan]:
    recipes = load_recipes(source)
    if profile is None:
        mapped = map_profile(recipes, rules, launch)
        assert isinstance(mapped, Profile)
        profile = mapped
    target = Target(KEY, profile, (compare(recipes, rules, launch, profile),), evidence, tp=tp)
    return recipes, plan_recipe(recipes, source, rules, [target])


def _argv(launch: LaunchLine, *extra: str) -> LaunchLine:
    argv = (*launch.argv, *extra)
    return replace(launch, argv=argv, argv_sources=(*launch.argv_sources, *[None] * len(extra)))  # type: ignore[list-item]


def _edits(plan: AlignmentPlan) -> dict[str, PlannedEdit]:
    return {f"{e.node}:{e.subject}": e for e in plan.edits}


def _render(repo: RecipesRepo, hw: str, features: tuple[str, ...] = ()) -> str:
    rendering = render(repo, RenderRequest(repo.by_path[RECIPE].hf_id, hw, "single_node_tp",
                                           features=features))  # fmt: skip
    command = rendering.commands[0]
    return f"{rendering.image} {sorted(command.env.items())} {' '.join(command.argv)}"


# 1. kernel/backend selection is carried into the recipe
def test_kernel_selection_is_carried(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    _, plan = _plan(source, rules, launch)
    edit = _edits(plan)[f"{SO_MI355X}.extra_args:--moe-backend"]
    assert edit.after == "--moe-backend aiter"


# 2. accuracy-sensitive levers only with a passing eval at those settings
def test_accuracy_lever_needs_a_passing_eval(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    name = "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION"
    int4 = replace(launch, env={**launch.env, name: "INT4"})
    _, without = _plan(source, rules, int4)
    assert not any(e.subject == name for e in without.edits)
    # offered to tick, whatever its kind's estimate, until an eval passes at these settings
    (offered,) = [e for e in without.offered if e.subject == name]
    assert offered.after == "INT4"
    assert without.waits_for(offered) == Wait("eval", name, "INT4/FP8 quantized all-reduce")
    assert not any(s.subject == name for s in without.settings)  # listed once, as offered
    _, passed = _plan(source, rules, int4, evidence=PASSED)
    assert any(e.subject == name and e.after == "INT4" for e in passed.edits)


# 3. throughput tuning is documented for reproduction, not pinned
def test_tuning_goes_to_reproduction(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    _, plan = _plan(source, rules, _argv(launch, "--stream-interval", "20"))
    assert not any(e.subject in ("--max-num-seqs", "--stream-interval") for e in plan.edits)
    # offered to tick (never proposed), and not listed again as a setting not carried
    offered = {e.subject: w.reason for e in plan.offered if (w := plan.waits_for(e))}
    assert offered["--max-num-seqs"] == offered["--stream-interval"] == "tuning"
    assert not {"--max-num-seqs", "--stream-interval"} & {s.subject for s in plan.settings}


# 4. workload settings go behind the recipe's opt-in feature for the workload; a recipe
# without one gets no made-up feature (maintainers adopted none of 51 such edits, issue #24)
def test_a_workload_flag_without_the_recipes_feature_goes_to_reproduction(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    assert launch.point.scenario == "agentic-coding"
    _, plan = _plan(source, rules, _argv(launch, "--no-enable-prefix-caching"))
    assert not [e for e in plan.edits if "agentic" in e.node]
    (setting,) = [s for s in plan.settings if s.subject == "--enable-prefix-caching"]
    assert setting.knob == "workload" and setting.bench == "--no-enable-prefix-caching"
    assert "the recipe has no agentic feature" in setting.reason
    assert "does not add recipe structure" in setting.reason


def test_a_new_workload_feature_demanded_on_two_generations_is_one_block(
    source: GitTreeSource,
) -> None:
    """Real history (InferenceX #2690 on MiniMax-M3): agentic points on NVIDIA and AMD both
    demanded the new feature, and two blocks each creating ``features.agentic`` failed."""
    recipes = load_recipes(source)
    recipe = recipes.by_path[RECIPE]

    def demand(hw: str, flag: str) -> FeatureDemand:
        path = ("features", "agentic", "hardware_overrides", hw, "args")
        return FeatureDemand(
            node=f"features.agentic.hardware_overrides.{hw}.args::{flag}",
            feature="agentic",
            hardware=hw,
            items=(flag,),
            new=True,
            description="Agentic workloads",
            kind="flag-new",
            subject=flag,
            path=path,
            reason="r",
            placement="p",
            target=hw,
        )

    demands = [
        demand("amd", "--no-enable-prefix-caching"),
        demand("nvidia", "--no-enable-prefix-caching"),
        demand("nvidia", "--async-scheduling"),
    ]
    planned, problems = build_edits(demands, recipe, recipes)
    assert problems == []
    edits = unique_edits(planned)
    assert len(edits) == 2  # the feature block and its opt-in entry
    text = source.read_bytes(RECIPE).decode()
    result = apply_edits(text, edits, file=RECIPE)
    after = load_recipes(OverlaySource(source, {RECIPE: result.text.encode()}))
    feature = after.by_path[RECIPE].data["features"]["agentic"]
    assert feature["hardware_overrides"]["amd"]["args"] == ["--no-enable-prefix-caching"]
    assert feature["hardware_overrides"]["nvidia"]["args"] == [
        "--no-enable-prefix-caching",
        "--async-scheduling",
    ]
    assert after.by_path[RECIPE].data["opt_in_features"].count("agentic") == 1


def test_an_existing_workload_feature_is_in_the_profile(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    text = source.read_bytes(RECIPE).decode()
    block = (
        '  agentic:\n    description: "Agentic workloads"\n'
        '    args:\n      - "--async-scheduling"\n'
    )
    overlay = OverlaySource(
        source, {RECIPE: text.replace("features:\n", "features:\n" + block, 1).encode()}
    )
    recipes = load_recipes(overlay)
    profile = map_profile(recipes, rules, _argv(launch, "--no-enable-prefix-caching"))
    assert isinstance(profile, Profile) and "agentic" in profile.features
    _, plan = _plan(
        overlay, rules, _argv(launch, "--no-enable-prefix-caching", "--async-scheduling")
    )
    assert plan.result is not None
    assert (
        '+          - "--async-scheduling"\n+          - "--no-enable-prefix-caching"'
        in plan.result.diff
    )
    assert "+  agentic:" not in plan.result.diff  # the feature exists: only its override


# 5. harness settings are never carried
def test_harness_settings_are_never_carried(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    env = {**launch.env, "VLLM_RPC_TIMEOUT": "100000", "PYTHONNOUSERSITE": "1"}
    _, plan = _plan(source, rules, replace(launch, env=env))
    assert not any(e.subject in env and e.subject.startswith(("VLLM_RPC", "PYTHON"))
                   for e in plan.edits + plan.offered)  # fmt: skip
    harness = {s.subject for s in plan.settings if s.knob == "harness"}
    assert "VLLM_RPC_TIMEOUT" in harness
    # a harness variable env.yaml does not list is benchmark-only in the diff itself
    assert "PYTHONNOUSERSITE" in {n.subject for n in plan.benchmark_only}


# 6. edits are scoped to what was verified
def test_a_shared_amd_value_changed_for_mi355x_is_overridden_at_mi355x(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    before, plan = _plan(source, rules, launch)
    assert "hardware_overrides.amd.extra_args[3]:--moe-backend" not in _edits(plan)
    assert plan.after is not None
    for hw in ("mi300x", "mi325x", "mi350x"):
        assert _render(plan.after, hw) == _render(before, hw)
    assert "--moe-backend aiter" in _render(plan.after, "mi355x")


def test_a_broad_node_only_verified_renderings_draw_from_is_edited_in_place(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    # move the MoE backend to the MI355X + single_node_tp layer: nothing else draws from it
    text = source.read_bytes(RECIPE).decode()
    text = text.replace(
        '      - "--moe-backend"\n      - "aiter_triton_mxfp4_bf16"\n', "", 1
    ).replace(
        "    tp:\n      amd: 4\n",
        "    tp:\n      amd: 4\n    hardware_overrides:\n      mi355x:\n        extra_args:\n"
        '          - "--moe-backend"\n          - "aiter_triton_mxfp4_bf16"\n',
        1,
    )
    overlay = OverlaySource(source, {RECIPE: text.encode()})
    _, plan = _plan(overlay, rules, launch)
    edit = _edits(plan)[f"{SO_MI355X}.extra_args[1]:--moe-backend"]
    assert edit.before == "aiter_triton_mxfp4_bf16" and edit.after == "aiter"


def test_a_mode_arg_changed_on_one_gpu_is_a_mode_hardware_override(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    argv = list(launch.argv)
    index = argv.index("--speculative-config")
    argv[index + 1] = argv[index + 1].replace(
        '"num_speculative_tokens":5', '"num_speculative_tokens":3'
    )
    assert argv[index + 1] != launch.argv[index + 1]
    before, plan = _plan(source, rules, replace(launch, argv=tuple(argv)))
    nodes = [e.node for e in plan.edits if e.subject == "--speculative-config"]
    assert nodes and all(
        ".hardware_overrides.mi355x." in n and n.startswith("features.") for n in nodes
    )
    assert plan.after is not None
    features = ("spec_decoding",)
    assert _render(plan.after, "mi350x", features) == _render(before, "mi350x", features)


# 7. images: floating stays floating; a pin is re-pinned with evidence
def test_a_floating_image_stays_floating(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    floating = _edited(source, 'amd: "vllm/vllm-openai-rocm:deepseekv41-flash-0909"',
                       'amd: "vllm/vllm-openai-rocm:nightly"')  # fmt: skip
    _, plan = _plan(floating, rules, launch, evidence=PASSED)
    assert not any(e.kind == "image" for e in plan.edits)
    (image,) = [s for s in plan.settings if s.knob == "image"]
    assert image.bench == NIGHTLY and "keeps floating" in image.reason


def test_a_pinned_image_is_repinned_with_evidence(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    # without a passing eval the nightly build is not pinned: the variant on MI355X follows
    # the nightly channel the lane runs
    _, without = _plan(source, rules, launch)
    (channel,) = [e for e in without.edits if e.kind == "image"]
    assert channel.after == "vllm/vllm-openai-rocm:nightly"
    assert channel.node == "variants.default.hardware_overrides.mi355x.docker_image"
    _, plan = _plan(source, rules, launch, evidence=PASSED)
    (image,) = [e for e in plan.edits if e.kind == "image"]
    assert image.after == NIGHTLY
    assert image.node == "variants.default.hardware_overrides.mi355x.docker_image"


# 8. another parallelism: the variant's tp only under the stated evidence
def test_variant_tp_is_proposed_when_every_point_runs_it_and_the_eval_passed(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    _, plan = _plan(source, rules, launch, evidence=PASSED, tp=8)
    (edit,) = [e for e in plan.edits if e.kind == "tp"]
    assert edit.node == "variants.default.tp.mi355x" and edit.after == "8"
    assert plan.after is not None and "--tensor-parallel-size 8" in _render(plan.after, "mi355x")
    assert "--tensor-parallel-size 4" in _render(plan.after, "mi350x")


def test_settings_taken_from_another_parallelism_are_said_to_be(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    """Without a passing eval the recipe keeps its TP and takes the lane's other settings:
    the PR's opening paragraph says they were benchmarked at another TP only."""
    at = launch.argv.index("--tensor-parallel-size")
    argv = (*launch.argv[: at + 1], "8", *launch.argv[at + 2 :])
    tp8 = replace(launch, argv=argv, point=replace(launch.point, tp=8))
    assert other_parallelism_note(_plan(source, rules, launch)[1]) == ""  # the recipe's TP
    _, plan = _plan(source, rules, tp8)
    note = other_parallelism_note(plan)
    ran, kept = "`--tensor-parallel-size 8`", "`--tensor-parallel-size 4`"
    assert f"`{KEY}` ran {ran}, the recipe renders {kept}" in note
    assert "benchmarked only at the lane's" in note
    _, proposing_tp = _plan(source, rules, tp8, evidence=PASSED, tp=8)
    assert other_parallelism_note(proposing_tp) == ""  # the tp edit says so itself


def test_a_workload_flag_without_a_feature_end_to_end_is_documented_not_edited(
    align_cli: AlignCli, bench_clone: Path
) -> None:
    script = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"
    commit_edit(
        bench_clone,
        script,
        "  --disable-uvicorn-access-log\n)",
        "  --disable-uvicorn-access-log\n  --no-enable-prefix-caching\n)",
    )
    status, out = align_cli(evidence=False, bench=bench_clone, bench_ref="pr")
    assert status == 1
    patch = (out / "recipe.patch").read_text()
    assert "agentic:" not in patch and '- "--no-enable-prefix-caching"' not in patch
    data = json.loads((out / "plan.json").read_text())
    matrix = data["plans"][0]["matrix"]
    assert matrix["unexpected"] == [] and matrix["ineffective"] == []
    title = (out / "pr-title.txt").read_text()
    assert "agentic" not in title
    body = (out / "pr-body.md").read_text()
    (line,) = [x for x in body.splitlines() if x.startswith("- workload: ")]
    assert "`--no-enable-prefix-caching`" in line and "no agentic feature" in line


# a field of a config the recipe spells as a whole JSON goes into that JSON. Compilation
# configs are tuning (documented for reproduction); these tests carry them with a policy that
# pins tuning, to exercise the JSON placement any carried JSON-valued flag goes through
def _pinning(rules: Rules) -> Rules:
    knobs = rules.policy.knob_policy.model_copy(update={"tuning": "pin"})
    return replace(rules, policy=rules.policy.model_copy(update={"knob_policy": knobs}))


def test_a_field_of_a_whole_json_in_the_recipe_is_changed_inside_it(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    """InferenceX#2707: a dotted ``--compilation-config.cudagraph_mode`` beside the recipe's
    ``--compilation-config '{…}'`` would make vLLM discard the whole JSON (custom_ops lost).
    The shared JSON is overridden for the benchmarked hardware by a whole JSON holding the
    recipe's other keys and every carried field, in one value."""
    moe = '      - "--moe-backend"\n      - "aiter_triton_mxfp4_bf16"\n'
    config = """'{"cudagraph_mode":"PIECEWISE","custom_ops":["all"]}'"""
    shared = f'      - "--compilation-config"\n      - {config}\n'
    edited = _edited(source, moe, moe + shared)
    bench = _argv(launch, "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY","mode":0}')
    before, plan = _plan(edited, _pinning(rules), bench)
    assert plan.failure is None, plan.failure
    edits = [e for e in plan.edits if e.subject.startswith("--compilation-config")]
    merged = '{"cudagraph_mode":"FULL_DECODE_ONLY","custom_ops":["all"],"mode":0}'
    assert [(e.subject, e.node, e.after) for e in edits] == [
        ("--compilation-config", f"{SO_MI355X}.extra_args", f"--compilation-config {merged}")
    ]
    assert plan.after is not None
    after = _render(plan.after, "mi355x")
    assert after.count("--compilation-config") == 1 and "--compilation-config." not in after
    for hw in ("mi300x", "mi325x", "mi350x"):  # the shared JSON is untouched for them
        assert _render(plan.after, hw) == _render(before, hw)


def test_a_whole_json_only_the_benchmarked_point_draws_from_is_changed_in_place(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    tp = "  single_node_tp:\n"
    config = """'{"cudagraph_mode":"PIECEWISE","custom_ops":["all"]}'"""
    own = (
        "    hardware_overrides:\n      mi355x:\n        extra_args:\n"
        f'          - "--compilation-config"\n          - {config}\n'
    )
    edited = _edited(source, tp, tp + own)
    bench = _argv(launch, "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}')
    _, plan = _plan(edited, _pinning(rules), bench)
    assert plan.failure is None, plan.failure
    edits = [e for e in plan.edits if e.subject.startswith("--compilation-config")]
    assert [(e.node, e.before, e.after) for e in edits] == [
        (
            f"{SO_MI355X}.extra_args[1]",
            '{"cudagraph_mode":"PIECEWISE","custom_ops":["all"]}',
            '{"cudagraph_mode":"FULL_DECODE_ONLY","custom_ops":["all"]}',
        )
    ]


def test_a_field_of_a_json_a_shared_feature_sets_is_reported_not_overridden(
    source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    """A feature's args come after every override layer: no override could win over its
    JSON, and a dotted flag would make vLLM discard it. Said, not edited."""
    parser = '      - "--enable-auto-tool-choice"\n'
    config = """'{"cudagraph_mode":"PIECEWISE","custom_ops":["all"]}'"""
    edited = _edited(source, parser, parser + f'      - "--compilation-config"\n      - {config}\n')
    bench = _argv(launch, "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}')
    _, plan = _plan(edited, _pinning(rules), bench)
    assert not [e for e in plan.edits if e.subject.startswith("--compilation-config")]
    assert any("no override of a feature's JSON is written" in s for s in plan.skipped)
