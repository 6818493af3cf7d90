"""Regression matrix and the recipes builder (docs/alignment.md §6)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from bot.align.builder import BUILDER, NOT_INSTALLED, missing_packages, run_builder
from bot.align.compare import compare
from bot.align.overlay import OverlaySource
from bot.align.plan import AlignmentPlan, Target, plan_recipe
from bot.align.profile import Profile, map_profile
from bot.align.regression import (
    BuilderReport,
    RegressionMatrix,
    RenderingId,
    regression_matrix,
    targets,
)
from bot.benchmarks import extract, load_bench_repo, points
from bot.fixtures import SeedFixtures
from bot.recipes import RecipesRepo, load_recipes
from bot.rules import default_rules
from bot.sources import DirectorySource, GitTreeSource
from tests.seed_cli import SEED_RECIPE, AlignCli, git
from tests.ungated import ungated

KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"
NOT_RUN = BuilderReport(False, True, "", "not run: test")


@pytest.fixture(scope="module")
def seed_plan(seed: SeedFixtures) -> tuple[RecipesRepo, GitTreeSource, AlignmentPlan]:
    rules = ungated(default_rules())
    source = GitTreeSource(seed.recipes_repo, seed.recipes_base)
    recipes = load_recipes(source)
    bench = load_bench_repo(GitTreeSource(seed.bench_repo, seed.bench_pr_head))
    point, arm = next(p for p in points(bench, KEY) if p[1] == "eval")
    launch = extract(bench, KEY, point, arm)
    profile = map_profile(recipes, rules, launch)
    assert isinstance(profile, Profile)
    target = Target(KEY, profile, (compare(recipes, rules, launch, profile),))
    return recipes, source, plan_recipe(recipes, source, rules, [target])


def _matrix(
    seed_plan: tuple[RecipesRepo, GitTreeSource, AlignmentPlan], after: RecipesRepo
) -> RegressionMatrix:
    recipes, _, plan = seed_plan
    profiles = [t.profile for t in plan.targets]
    return regression_matrix(recipes, after, SEED_RECIPE, plan.edits, profiles, NOT_RUN)


@pytest.fixture(scope="module")
def seed_matrix(
    seed_plan: tuple[RecipesRepo, GitTreeSource, AlignmentPlan],
) -> RegressionMatrix:
    """The seed plan's regression matrix over its edited tree."""
    _, _, plan = seed_plan
    assert plan.after is not None
    return _matrix(seed_plan, plan.after)


def test_seed_matrix_moves_only_what_the_edits_apply_to(
    seed_plan: tuple[RecipesRepo, GitTreeSource, AlignmentPlan], seed_matrix: RegressionMatrix
) -> None:
    _, _, plan = seed_plan
    matrix = seed_matrix
    assert matrix.blocked is None and matrix.unexpected == () and matrix.ineffective == ()
    moved = {(r.id.hardware, r.id.strategy) for r in matrix.moved}
    # only the benchmarked GPU moves: MI300X/MI325X/MI350X share the amd block, not the edit
    assert {hw for hw, _ in moved} == {"mi355x"}
    with_moe = {
        (r.id.hardware, r.id.strategy)
        for r in matrix.moved
        if "--moe-backend aiter_triton_mxfp4_bf16 → aiter" in r.changes
    }
    assert with_moe == {
        ("mi355x", "single_node_tp"),
        ("mi355x", "kv_store_centralized_mooncake"),  # served by single_node_tp
        ("mi355x", "kv_store_distributed_mooncake"),
    }
    assert not any("--max-num-seqs 128" in r.changes for r in matrix.moved)
    # a profile's renderings with and without the benchmarked features are one group; the
    # fact only the feature set has is stated for it
    unmoved = [
        g for g in matrix.groups if not g.moved and any(m.features is not None for m in g.members)
    ]
    nvidia = [g for g in unmoved if not g.label.startswith("MI3")]
    assert nvidia and all(
        "with the benchmarked features, --speculative-config keeps "
        "enable_adaptive_verification: true" in g.result
        for g in nvidia
    )
    assert all(any(m.features is None for m in g.members) for g in nvidia)
    # no evidence here: the nightly build is not pinned (that needs a passing eval on it);
    # the variant on MI355X follows the nightly channel the lane runs
    images = [e for e in plan.edits if e.kind == "image"]
    assert [(e.node, e.after) for e in images] == [
        (
            "variants.default.hardware_overrides.mi355x.docker_image",
            "vllm/vllm-openai-rocm:nightly",
        )
    ]


def test_a_rendering_that_never_sets_a_changed_flag_is_absent_not_kept(
    seed_matrix: RegressionMatrix,
) -> None:
    matrix = seed_matrix
    by_place = {(r.id.hardware, r.id.strategy, r.id.features): r for r in matrix.rows}
    # the AMD GPUs that share the old MoE backend keep it; NVIDIA renderings never set one
    mi300x = [r for (hw, _, _), r in by_place.items() if hw == "mi300x"]
    assert mi300x and all("--moe-backend" in r.kept for r in mi300x)
    nvidia = [r for (hw, _, _), r in by_place.items() if not hw.startswith("mi")]
    assert nvidia and all(
        "--moe-backend" in r.absent and "--moe-backend" not in r.kept for r in nvidia
    )
    for row in matrix.rows:  # one state per changed subject
        assert not set(row.kept) & set(row.absent) and not set(row.subjects) & set(row.absent)


def test_unplanned_movement_blocks(
    seed_plan: tuple[RecipesRepo, GitTreeSource, AlignmentPlan],
) -> None:
    _, source, plan = seed_plan
    assert plan.result is not None
    text = plan.result.text.replace(
        'nvidia: "vllm/vllm-openai:deepseekv41-flash-0909"', 'nvidia: "vllm/vllm-openai:latest"'
    )
    after = load_recipes(OverlaySource(source, {SEED_RECIPE: text.encode()}))
    matrix = _matrix(seed_plan, after)
    assert matrix.blocked is not None and matrix.blocked.startswith("unexpected movement: ")
    assert "H200 single_node_tp" in matrix.unexpected
    assert not any(label.startswith("MI") for label in matrix.unexpected)


def test_an_edit_that_moves_nothing_is_reported(
    seed_plan: tuple[RecipesRepo, GitTreeSource, AlignmentPlan],
) -> None:
    recipes, _, _ = seed_plan
    matrix = _matrix(seed_plan, recipes)  # "after" == before: nothing moved
    assert matrix.moved == () and matrix.unexpected == ()
    assert "MI355X single_node_tp" in matrix.ineffective


def test_targets_follow_the_layering_of_a_path(recipes_repo: RecipesRepo) -> None:
    hw = recipes_repo.hardware
    node = ("strategy_overrides", "single_node_tp", "hardware_overrides", "mi355x", "extra_args")

    def rid(hardware: str, strategy: str) -> RenderingId:
        return RenderingId("m", hardware, strategy, "default")

    assert targets(node, rid("mi355x", "single_node_tp"), hw["mi355x"])
    assert not targets(node, rid("mi355x", "pd_cluster"), hw["mi355x"])
    assert not targets(node, rid("mi350x", "single_node_tp"), hw["mi350x"])
    kv = rid("mi355x", "kv_store_centralized_mooncake")
    assert targets(node, kv, hw["mi355x"], serving="single_node_tp")
    amd = ("hardware_overrides", "amd", "extra_env")
    assert targets(amd, rid("mi300x", "pd_cluster"), hw["mi300x"])
    assert not targets(amd, rid("h200", "single_node_tp"), hw["h200"])
    assert not targets(
        ("meta", "hardware", "mi355x"), rid("mi355x", "single_node_tp"), hw["mi355x"]
    )
    image = ("model", "docker_image", "nvidia")
    assert targets(image, rid("gb200", "pd_cluster"), hw["gb200"])
    assert not targets(image, rid("mi355x", "pd_cluster"), hw["mi355x"])


@pytest.fixture(scope="module")
def recipes_repo(seed: SeedFixtures) -> RecipesRepo:
    return load_recipes(GitTreeSource(seed.recipes_repo, seed.recipes_base))


# ------------------------------------------------------------------------------ builder

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _tree_with_builder(seed: SeedFixtures, tmp_path: Path, script: str) -> Path:
    tree = tmp_path / "recipes"
    shutil.copytree(seed.recipes_repo, tree)
    (tree / BUILDER).parent.mkdir(parents=True, exist_ok=True)
    (tree / BUILDER).write_text(script)
    return tree


def test_without_the_builder_our_summary_is_reported(
    seed: SeedFixtures, recipes_repo: RecipesRepo
) -> None:
    report = run_builder(GitTreeSource(seed.recipes_repo, "main"), {}, recipes_repo)
    assert (report.ran, report.ok) == (False, True)
    assert report.detail == f"not run: {BUILDER} is not in the recipes tree"
    assert report.summary.startswith("the edited tree: 3 models (3 with recommended_command")
    # an edit of one recipe builds that recipe: no other recipe's output can move
    edited = run_builder(GitTreeSource(seed.recipes_repo, "main"), {SEED_RECIPE: b""}, recipes_repo)
    assert edited.summary.startswith("the edited recipe: 1 model (1 with recommended_command")


@needs_node
def test_the_builder_runs_on_the_edited_tree(
    seed: SeedFixtures, tmp_path: Path, recipes_repo: RecipesRepo
) -> None:
    script = (
        'import { readFileSync } from "node:fs";\n'
        f'const text = readFileSync("{SEED_RECIPE}", "utf8");\n'
        'console.log("building…");\n'
        'console.log("✓ JSON API: edited=" + text.includes("EDITED"));\n'
    )
    tree = _tree_with_builder(seed, tmp_path, script)
    report = run_builder(DirectorySource(tree), {SEED_RECIPE: b"EDITED"}, recipes_repo)
    assert report == BuilderReport(True, True, "✓ JSON API: edited=true", "")
    assert "EDITED" not in (tree / SEED_RECIPE).read_text()  # the tree itself is untouched


@needs_node
def test_a_failing_builder_is_reported(
    seed: SeedFixtures, tmp_path: Path, recipes_repo: RecipesRepo
) -> None:
    tree = _tree_with_builder(seed, tmp_path, 'console.error("boom");\nprocess.exit(3);\n')
    report = run_builder(DirectorySource(tree), {}, recipes_repo)
    assert report == BuilderReport(True, False, "", "exit status 3: boom")
    missing = _tree_with_builder(seed, tmp_path / "deps", 'import yaml from "js-yaml";\n')
    skipped = run_builder(DirectorySource(missing), {}, recipes_repo)
    assert (skipped.ran, skipped.ok) == (False, True)
    assert "node dependencies are not installed" in skipped.detail


def test_a_builder_that_imports_an_uninstalled_package_is_not_started(
    seed: SeedFixtures, tmp_path: Path, recipes_repo: RecipesRepo
) -> None:
    tree = _tree_with_builder(seed, tmp_path, 'import fs from "fs";\nimport yaml from "js-yaml";\n')
    (tree / "package.json").write_text('{"dependencies": {"js-yaml": "^4.1.1"}}')
    never = str(tmp_path / "no-such-node")  # starting it would say "node could not start"
    report = run_builder(DirectorySource(tree), {}, recipes_repo, node=never)
    assert report.detail == NOT_INSTALLED and (report.ran, report.ok) == (False, True)
    assert missing_packages(DirectorySource(tree), None) == ("js-yaml",)
    modules = tmp_path / "node_modules"
    modules.mkdir()
    assert missing_packages(DirectorySource(tree), modules) == ()
    (tree / "package.json").write_text('{"dependencies": {}}')  # not one of its packages
    report = run_builder(DirectorySource(tree), {}, recipes_repo, node=never)
    assert report.detail.startswith("not run: node could not start")


@needs_node
def test_a_failing_builder_blocks_the_alignment_pr(
    seed: SeedFixtures, tmp_path: Path, align_cli: AlignCli
) -> None:
    tree = _tree_with_builder(seed, tmp_path, 'console.error("broken recipe");\nprocess.exit(1);\n')
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "add a builder")
    status, out = align_cli(recipes=tree, recipes_ref="HEAD")
    assert status == 1 and not (out / "recipe.patch").exists()  # blocked: drift left
    comment = (out / "comment.md").read_text()
    assert (
        "— blocked" in comment
        and "the recipes builder failed: exit status 1: broken recipe" in comment
    )


def test_rendering_id_labels() -> None:
    rid = RenderingId("m", "h", "s", "v", ("a", "b"), (("b", "x"),))
    assert rid.features_label() == "a + b (x)"
    assert replace(rid, features=None).features_label() == "default features"


SCRIPT = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"


@pytest.mark.parametrize(
    ("flag", "subject"),
    [
        ("--no-enable-prefix-caching", "--enable-prefix-caching"),
        ("--no-disable-hybrid-kv-cache-manager", "--disable-hybrid-kv-cache-manager"),
    ],
)
def test_a_new_negated_boolean_is_its_own_expected_movement(
    seed: SeedFixtures, flag: str, subject: str
) -> None:
    """InferenceX #2590: the benchmark adds ``--no-disable-hybrid-kv-cache-manager`` on
    MI355X; the edit's subject is the flag (``--disable-hybrid-kv-cache-manager``) and the
    renderings that take it moved as planned, not "unexpected movement" of ``--no-…``.
    The recipe here has the agentic feature a workload flag goes behind (recipe-sync adds
    no recipe structure of its own)."""
    rules = ungated(default_rules())
    base = GitTreeSource(seed.recipes_repo, seed.recipes_base)
    text = base.read_bytes(SEED_RECIPE).decode()
    with_feature = text.replace(
        "\nfeatures:\n",
        '\nfeatures:\n  agentic:\n    description: "Agentic multi-turn workloads."\n'
        '    args:\n      - "--enable-prompt-tokens-details"\n',
        1,
    )
    assert with_feature != text
    source = OverlaySource(base, {SEED_RECIPE: with_feature.encode()})
    recipes = load_recipes(source)
    head = GitTreeSource(seed.bench_repo, seed.bench_pr_head)
    script = head.read_bytes(SCRIPT).decode()
    edited = script.replace(
        "  --disable-uvicorn-access-log\n", f"  --disable-uvicorn-access-log\n  {flag}\n"
    )
    assert edited != script
    bench = load_bench_repo(OverlaySource(head, {SCRIPT: edited.encode()}))
    point, arm = next(p for p in points(bench, KEY) if p[1] == "eval")
    launch = extract(bench, KEY, point, arm)
    assert flag in launch.argv
    profile = map_profile(recipes, rules, launch)
    assert isinstance(profile, Profile)
    target = Target(KEY, profile, (compare(recipes, rules, launch, profile),))
    plan = plan_recipe(recipes, source, rules, [target])
    new = [e for e in plan.edits if e.subject == subject]
    assert [e.after for e in new] == [flag], plan.edits
    assert plan.after is not None
    # a workload flag goes behind an opt-in feature: the planned profiles carry it (as in run.py)
    profiles = [t.profile for t in plan.targets]
    matrix = regression_matrix(recipes, plan.after, SEED_RECIPE, plan.edits, profiles, NOT_RUN)
    assert matrix.unexpected == () and matrix.blocked is None
    moved = [r for r in matrix.moved if f"+{flag}" in r.changes]
    assert moved and all(subject in r.subjects and r.expected for r in moved)
