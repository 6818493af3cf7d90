"""A flag ignored for a recipe on the dashboard issue is never proposed for it (the service
passes the store's ignores in ``SyncRequest.ignored_flags``); the plan says so."""

from __future__ import annotations

from bot.align.result import AlignInputs, RecipeOutcome
from bot.align.run import align
from bot.evidence.source import DirRunSource
from bot.fixtures import BENCH_REPO_NAME, SeedFixtures
from bot.rules import default_rules
from bot.sources import GitTreeSource, git_blob_sha_at
from tests.seed_cli import SEED_RECIPE
from tests.ungated import ungated


def inputs(seed: SeedFixtures, ignored: dict[str, frozenset[str]]) -> AlignInputs:
    assert seed.evidence_dir is not None
    return AlignInputs(
        bench=GitTreeSource(seed.bench_repo, seed.bench_pr_head),
        bench_base=GitTreeSource(seed.bench_repo, seed.bench_base),
        recipes=GitTreeSource(seed.recipes_repo, seed.recipes_base),
        rules=ungated(default_rules()),
        runs=DirRunSource(seed.evidence_dir),
        bench_repo=BENCH_REPO_NAME,
        pr_number=seed.bench_pr_number,
        head_sha=seed.bench_pr_head,
        head_branch=seed.bench_pr_branch,
        blob_sha_at=git_blob_sha_at(seed.bench_repo),
        ignored_flags=ignored,
    )


def _subjects(outcome: RecipeOutcome) -> set[str]:
    return {edit.subject for edit in outcome.plan.edits}


def test_an_ignored_flag_is_left_out_of_the_patch(seed: SeedFixtures) -> None:
    (plain,) = align(inputs(seed, {})).patches
    assert "--moe-backend" in _subjects(plain)
    (ignoring,) = align(inputs(seed, {SEED_RECIPE: frozenset({"--moe-backend"})})).patches
    assert "--moe-backend" not in _subjects(ignoring)
    assert "--moe-backend: ignored for this recipe on the drift dashboard" in ignoring.plan.skipped
    # the other edits stay (the image and the AITER log level); with the MoE backend left as
    # it is, the recipe no longer renders what the eval ran, so MI355X is not marked verified
    assert {"image", "AITER_TRITON_LOG_LEVEL"} <= _subjects(ignoring) < _subjects(plain)
    assert ignoring.fingerprint != plain.fingerprint
    # an ignore for another recipe file changes nothing here
    (other,) = align(inputs(seed, {"models/x/Y.yaml": frozenset({"--moe-backend"})})).patches
    assert other.patch == plain.patch
