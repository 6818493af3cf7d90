"""The planner on the seed recipe: placement, conflicts, policy, invariants (§5)."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

import pytest

from bot.align.compare import compare
from bot.align.edits import verified_edit
from bot.align.nodes import bench_value_text, scope_of
from bot.align.plan import (
    AlignmentPlan,
    PlannedEdit,
    Target,
    invariants,
    plan_recipe,
    repeated_flags,
)
from bot.align.profile import Profile, map_profile
from bot.align.result import AlignInputs
from bot.align.run import outcome
from bot.align.verify import run_image
from bot.benchmarks import BenchRepo, LaunchLine, extract, load_bench_repo, points
from bot.fixtures import SeedFixtures
from bot.recipes import RecipesRepo, load_recipes, render
from bot.recipes.edit import EnsurePath, InsertKey, RemoveItems, SetScalar
from bot.rules import Rules, default_rules
from bot.sources import GitTreeSource
from bot.vllm import FlagDiff, Verdict
from bot.vllm.versions import NEWEST, fmt_version
from tests.ungated import ungated

KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"
RECIPE = "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"
MOE_NODE = "hardware_overrides.amd.extra_args[3]"


@pytest.fixture(scope="module")
def rules() -> Rules:
    return ungated(default_rules())


@pytest.fixture(scope="module")
def bench(seed: SeedFixtures) -> BenchRepo:
    return load_bench_repo(GitTreeSource(seed.bench_repo, seed.bench_pr_head))


@pytest.fixture(scope="module")
def source(seed: SeedFixtures) -> GitTreeSource:
    return GitTreeSource(seed.recipes_repo, seed.recipes_base)


@pytest.fixture(scope="module")
def recipes(source: GitTreeSource) -> RecipesRepo:
    return load_recipes(source)


@pytest.fixture(scope="module")
def launch(bench: BenchRepo) -> LaunchLine:
    point, arm = next(p for p in points(bench, KEY) if p[1] == "eval")
    return extract(bench, KEY, point, arm)


def _target(recipes: RecipesRepo, rules: Rules, launch: LaunchLine) -> Target:
    profile = map_profile(recipes, rules, launch)
    assert isinstance(profile, Profile)
    return Target(KEY, profile, (compare(recipes, rules, launch, profile),))


def _with_token(launch: LaunchLine, flag: str, value: str | None, runner: str = "") -> LaunchLine:
    """The launch with ``flag``'s value replaced (``None``: the flag and value removed)."""
    argv, sources = list(launch.argv), list(launch.argv_sources)
    index = argv.index(flag)
    if value is None:
        del argv[index : index + 2], sources[index : index + 2]
    else:
        argv[index + 1] = value
    return replace(
        launch, argv=tuple(argv), argv_sources=tuple(sources), runner=runner or launch.runner
    )


def _nodes(plan: AlignmentPlan) -> dict[str, PlannedEdit]:
    return {edit.node: edit for edit in plan.edits}


SO_MI355X = "strategy_overrides.single_node_tp.hardware_overrides.mi355x"


def test_seed_plan_places_each_edit(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    plan = plan_recipe(recipes, source, rules, [_target(recipes, rules, launch)])
    assert plan.status == "patch" and plan.skipped == () and plan.failure is None
    nodes = _nodes(plan)
    # the amd block is shared by MI300X/MI325X/MI350X renderings nobody benchmarked: the new
    # value is an override at the MI355X layer after it (later layers win), not an edit of it
    assert MOE_NODE not in nodes
    moe = nodes[f"{SO_MI355X}.extra_args"]
    assert moe.subject == "--moe-backend" and moe.edit == EnsurePath(
        f"{SO_MI355X}.extra_args", ["--moe-backend", "aiter"]
    )
    assert moe.placement.startswith("overrides hardware_overrides.amd.extra_args[2] for mi355x")
    assert "no benchmarked point ran (on mi300x, mi325x, mi350x" in moe.placement
    # the GPU's variable joins the GPU's image in the variant x GPU layer, where maintainers
    # put one GPU's settings (issue #24: InferenceX #1951's AITER env)
    variant = "variants.default.hardware_overrides.mi355x"
    env = nodes[f"{variant}.extra_env.AITER_TRITON_LOG_LEVEL"]
    assert env.edit == EnsurePath(f"{variant}.extra_env", {"AITER_TRITON_LOG_LEVEL": "ERROR"})
    assert "not at hardware_overrides.amd" in env.placement
    # no evidence: the nightly build is not pinned, the lane's variant follows its channel,
    # and verification is not claimed
    assert "model.docker_image.amd" not in nodes
    image = nodes[f"{variant}.docker_image"]
    assert image.after == "vllm/vllm-openai-rocm:nightly"
    assert not [s for s in plan.settings if s.knob == "image"]
    assert [(v.hardware, v.state) for v in plan.verifications] == [("mi355x", "no-evidence")]
    assert "meta.hardware.mi355x" not in nodes
    # tuning is not proposed, only offered to tick (rules/policy.yaml knob_policy tuning:
    # reproduction), and so not listed again as a setting not carried
    assert not any(e.subject == "--max-num-seqs" for e in plan.edits)
    (offered,) = [e for e in plan.offered if e.subject == "--max-num-seqs"]
    assert offered.after == "--max-num-seqs 128"
    wait = plan.waits_for(offered)
    assert wait is not None and wait.reason == "tuning"
    assert not [s for s in plan.settings if s.subject == "--max-num-seqs"]
    assert [n.subject for n in plan.front_end] == ["--host", "--disable-uvicorn-access-log"]
    assert [n.subject for n in plan.benchmark_only] == ["GPU_METRICS_CSV"]


def test_tuning_pin_keeps_the_narrowest_scope(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    knobs = rules.policy.knob_policy.model_copy(update={"tuning": "pin"})
    pinned = replace(rules, policy=rules.policy.model_copy(update={"knob_policy": knobs}))
    plan = plan_recipe(recipes, source, pinned, [_target(recipes, pinned, launch)])
    new = _nodes(plan)[f"{SO_MI355X}.extra_args"]
    assert new.edit == EnsurePath(new.node, ["--moe-backend", "aiter", "--max-num-seqs", "128"])
    assert "rules/flags.yaml tuning" in next(
        e.placement for e in plan.edits if e.subject == "--max-num-seqs"
    )
    assert not [s for s in plan.settings if s.subject == "--max-num-seqs"]


def test_each_benchmarked_gpu_gets_its_own_override(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    other = _with_token(launch, "--moe-backend", "triton", runner="cluster:mi350x-amds")
    targets = [_target(recipes, rules, launch), _target(recipes, rules, other)]
    assert targets[1].profile.hardware == "mi350x"
    plan = plan_recipe(recipes, source, rules, targets)
    nodes = _nodes(plan)
    assert MOE_NODE not in nodes and not plan.skipped
    assert nodes[f"{SO_MI355X}.extra_args"].after == "--moe-backend aiter"
    mi350x = "strategy_overrides.single_node_tp.hardware_overrides.mi350x.extra_args"
    assert nodes[mi350x].after == "--moe-backend triton"


def test_two_points_of_one_profile_wanting_different_values_conflict(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    other = _with_token(launch, "--moe-backend", "triton")
    profile = map_profile(recipes, rules, launch)
    assert isinstance(profile, Profile)
    both = (compare(recipes, rules, launch, profile), compare(recipes, rules, other, profile))
    plan = plan_recipe(recipes, source, rules, [Target(KEY, profile, both)])
    assert not any(e.subject == "--moe-backend" for e in plan.edits)
    (conflict,) = [s for s in plan.skipped if s.startswith("conflict")]
    assert conflict.startswith(f"conflict at {SO_MI355X}.extra_args (--moe-backend): ")
    assert "wants `--moe-backend aiter`" in conflict and "wants `--moe-backend triton`" in conflict


def test_a_point_already_matching_a_shared_node_pins_it(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    keeps = _with_token(
        launch, "--moe-backend", "aiter_triton_mxfp4_bf16", runner="cluster:mi350x-amds"
    )
    targets = [_target(recipes, rules, launch), _target(recipes, rules, keeps)]
    plan = plan_recipe(recipes, source, rules, targets)
    nodes = _nodes(plan)
    assert MOE_NODE not in nodes
    assert nodes[f"{SO_MI355X}.extra_args"].after == "--moe-backend aiter"


def test_recipe_only_flags_are_reported_or_removed_by_policy(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    without = _with_token(launch, "--gpu-memory-utilization", None)
    target = _target(recipes, rules, without)
    reported = plan_recipe(recipes, source, rules, [target])
    assert [n.subject for n in reported.recipe_only] == ["--gpu-memory-utilization"]
    assert reported.recipe_only[0].node == "hardware_overrides.amd.extra_args[0]"
    assert not any(e.kind == "flag-remove" for e in reported.edits)

    policy = rules.policy.model_copy(update={"recipe_only_flags": "remove"})
    removing = plan_recipe(recipes, source, replace(rules, policy=policy), [target])
    (removal,) = [e for e in removing.edits if e.kind == "flag-remove"]
    assert removal.edit == RemoveItems("hardware_overrides.amd.extra_args", 0, 2)
    assert removing.status == "patch" and removing.result is not None
    assert '-      - "--gpu-memory-utilization"\n-      - "0.9"\n' in removing.result.diff


def test_new_env_at_a_missing_map_creates_it(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    serving = [
        r.model_copy(update={"placement": "profile"}) if r.pattern == "AITER_*" else r
        for r in rules.env.serving
    ]
    profiled = replace(rules, env=rules.env.model_copy(update={"serving": serving}))
    plan = plan_recipe(recipes, source, profiled, [_target(recipes, profiled, launch)])
    assert plan.status == "patch", plan.failure
    container = "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_env"
    env = _nodes(plan)[f"{container}.AITER_TRITON_LOG_LEVEL"]
    assert env.edit == EnsurePath(container, {"AITER_TRITON_LOG_LEVEL": "ERROR"})
    assert env.scope == "MI355X + single_node_tp only"
    assert plan.after is not None
    after = render(plan.after, plan.targets[0].profile.request()).commands[0]
    assert after.env["AITER_TRITON_LOG_LEVEL"] == "ERROR"
    mi350x = replace(plan.targets[0].profile.request(), hardware="mi350x")
    assert "AITER_TRITON_LOG_LEVEL" not in render(plan.after, mi350x).commands[0].env


def test_invariants_name_a_difference_the_edit_did_not_close(
    recipes: RecipesRepo, rules: Rules, launch: LaunchLine
) -> None:
    target = _target(recipes, rules, launch)
    rendering = render(recipes, target.profile.request())
    claimed = PlannedEdit(
        SetScalar(MOE_NODE, "aiter"), "flag", "--moe-backend", None, "aiter", "", "", "", "", ()
    )
    failure = invariants(recipes, rules, [target], [rendering], [claimed])
    assert failure is not None and failure.startswith(
        f"the edit would not align {target.profile.label}; it would still differ: the benchmark "
        "sets --moe-backend"
    )
    assert invariants(recipes, rules, [target], [rendering], []) is None


def test_repeated_flags_counts_every_spelling() -> None:
    argv = ("vllm", "serve", "m", "--max-num-seqs", "1", "--max_num_seqs=2", "--x", "--y")
    assert repeated_flags(argv) == ["--max-num-seqs"]
    assert repeated_flags(("vllm", "serve", "m", "--a", "1")) == []


def test_verified_is_inserted_in_taxonomy_order(recipes: RecipesRepo) -> None:
    recipe = recipes.by_path[RECIPE]
    assert verified_edit(recipe, recipes, "mi355x") == InsertKey(
        "meta.hardware", "mi355x", "verified", after="mi350x"
    )
    assert verified_edit(recipe, recipes, "h100") == InsertKey(
        "meta.hardware", "h100", "verified", before="h200"
    )
    assert verified_edit(recipe, recipes, "b200") is None  # already verified


def test_run_image_reads_a_pyxis_squash_name() -> None:
    image = "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"
    squash = "/it-share/squash/" + image.replace("/", "+").replace(":", "+") + ".sqsh"
    assert run_image(squash, image) == image
    assert run_image(squash, "vllm/vllm-openai-rocm:latest") == squash
    assert run_image(image, image) == image and run_image(None, image) is None


def test_bench_value_text_keeps_the_benchmark_spelling() -> None:
    def diff(tokens: tuple[str, ...], value: object = None, only: tuple[str, ...] = ()) -> FlagDiff:
        return FlagDiff(
            "flag", "k", "--x", Verdict.DIFFERS, value, None, tokens, (), "", "engine", only
        )

    assert bench_value_text(diff(("--x", "1"))) == "1"
    assert bench_value_text(diff(("--x=1",))) == "1"
    assert bench_value_text(diff(("--x",))) is None
    stripped = diff(
        ("--x", "{}"),
        {"method": "dspark", "synthetic_acceptance_length": 3},
        ("synthetic_acceptance_length",),
    )
    assert bench_value_text(stripped) == '{"method":"dspark"}'
    # a JSON the script pretty-prints (real history: InferenceX #2707's --kv-transfer-config)
    # is one line in the recipe, key order kept; other values keep their newlines
    pretty = '{\n  "kv_connector": "X",\n  "extra": {\n    "lazy": false\n  }\n}'
    one_line = '{"kv_connector":"X","extra":{"lazy":false}}'
    assert bench_value_text(diff(("--x", pretty))) == one_line
    assert bench_value_text(diff((f"--x={pretty}",))) == one_line
    assert bench_value_text(diff(("--x", "a\nb"))) == "a\nb"


def test_scope_in_words(recipes: RecipesRepo) -> None:
    assert scope_of(("model", "docker_image", "amd"), recipes) == "every AMD rendering"
    assert scope_of(("model", "base_args", 0), recipes) == "every rendering of the recipe"
    assert scope_of(("strategy_overrides", "pd_cluster", "extra_args"), recipes) == (
        "every pd_cluster rendering"
    )
    assert scope_of(
        ("features", "spec_decoding", "modes", "dspark", "hardware_overrides", "amd"), recipes
    ) == ("renderings with spec_decoding on AMD")


def _with_tokens(launch: LaunchLine, *tokens: str) -> LaunchLine:
    """The launch with ``tokens`` appended (each sourced from the last token's line)."""
    return replace(
        launch,
        argv=(*launch.argv, *tokens),
        argv_sources=(*launch.argv_sources, *(launch.argv_sources[-1] for _ in tokens)),
    )


def test_a_field_of_a_whole_json_config_is_written_as_its_dotted_flag(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    """InferenceX #2621/#2647/#2707: the benchmark passes ``--attention-config '{…}'`` whole;
    the recipe lacks the field. The edit writes the field's own value on its dotted flag
    (vLLM merges it into the config), not the whole JSON after the dotted flag, and after
    the edit nothing planned differs ("plan failed" before)."""
    config = '{"use_prefill_query_quantization":true,"indexer_kv_dtype":"fp8"}'
    edited = _with_tokens(launch, "--attention-config", config)
    # both fields are accuracy levers (rules/knobs.yaml): carried as when an eval passed
    knobs = rules.policy.knob_policy.model_copy(update={"accuracy": "recipe"})
    rules = replace(rules, policy=rules.policy.model_copy(update={"knob_policy": knobs}))
    plan = plan_recipe(recipes, source, rules, [_target(recipes, rules, edited)])
    assert plan.failure is None, plan.failure
    values = {e.subject: e.after for e in plan.edits if e.subject.startswith("--attention")}
    assert values == {
        "--attention-config.use_prefill_query_quantization": (
            "--attention-config.use_prefill_query_quantization true"
        ),
        "--attention-config.indexer_kv_dtype": "--attention-config.indexer_kv_dtype fp8",
    }
    assert plan.after is not None
    profile = map_profile(plan.after, rules, edited)
    assert isinstance(profile, Profile)
    again = compare(plan.after, rules, edited, profile)
    assert not [d for d in again.drift if d.flag.startswith("--attention-config")]


def test_a_failed_plan_names_the_file_and_what_could_not_be_done(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    """No internal wording ("plan failed"): the outcome says no edit of which file is
    proposed, and why in the words of the check that stopped it."""
    plan = plan_recipe(recipes, source, rules, [_target(recipes, rules, launch)])
    why = "the edit would not align X; it would still differ: Y"
    found = outcome(cast(AlignInputs, None), recipes, replace(plan, failure=why))
    assert (found.status, found.reason) == (
        "failed",
        f"no alignment edit of {RECIPE} is proposed: {why}",
    )


def test_an_argument_past_the_catalogue_on_a_nightly_lane_is_a_note_not_a_block(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    # the seed lane runs a nightly: a flag recipe-sync's vLLM catalogue lacks may be newer
    newer = replace(
        launch,
        argv=(*launch.argv, "--prefix-match-unit", "64"),
        argv_sources=(*launch.argv_sources, *launch.argv_sources[-2:]),
    )
    plan = plan_recipe(recipes, source, rules, [_target(recipes, rules, newer)])
    assert plan.status == "patch" and plan.failure is None
    assert not [s for s in plan.skipped if "--prefix-match-unit" in s]
    (note,) = [n for n in plan.notes if "--prefix-match-unit" in n]
    assert note.endswith(
        f"recipe-sync knows vLLM's arguments to {fmt_version(NEWEST)} and the lane's image is a "
        "nightly build, which may be newer, so it is neither compared nor carried"
    )
    # an image naming a release the catalogue knows: there vLLM would reject it, and the
    # drift no edit closes holds the PR back
    released = replace(newer, image="vllm/vllm-openai-rocm:v0.30.0")
    plan = plan_recipe(recipes, source, rules, [_target(recipes, rules, released)])
    (skipped,) = [s for s in plan.skipped if "--prefix-match-unit" in s]
    assert skipped.endswith("vLLM would reject it")


def test_a_config_key_outside_its_releases_on_a_nightly_lane_is_a_note_not_a_block(
    recipes: RecipesRepo, source: GitTreeSource, rules: Rules, launch: LaunchLine
) -> None:
    """InferenceX #2224 and #2241 ran `use_fp4_indexer_cache` (vLLM 0.22–0.27.1) on nightly
    images; recipe-sync judged it on the 0.33 it assumes for a nightly and blocked both PRs
    with "vLLM would reject it", which the lanes that launched with it contradict."""
    key = "--attention-config.use_fp4_indexer_cache=True"
    nightly = replace(
        launch,
        argv=(*launch.argv, key),
        argv_sources=(*launch.argv_sources, launch.argv_sources[-1]),
    )
    plan = plan_recipe(recipes, source, rules, [_target(recipes, rules, nightly)])
    assert not [s for s in plan.skipped if "use_fp4_indexer_cache" in s]
    (note,) = [n for n in plan.notes if "use_fp4_indexer_cache" in n]
    assert note.endswith(
        "the lane's image is a nightly build of a vLLM version not known (recipe-sync assumed "
        f"{fmt_version(NEWEST)}), so whether it accepts the key is not known; it is neither "
        "compared nor carried"
    )
    # a release the catalogue knows to lack the key: there vLLM would reject it
    released = replace(nightly, image=f"vllm/vllm-openai-rocm:v{fmt_version(NEWEST)}")
    plan = plan_recipe(recipes, source, rules, [_target(recipes, rules, released)])
    (skipped,) = [s for s in plan.skipped if "use_fp4_indexer_cache" in s]
    assert skipped.endswith("vLLM would reject it")
