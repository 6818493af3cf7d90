"""Strict scoring (issue #31), on recipes histories built as real git repositories: each rule
turns an adoption the loose scorer counted into what a maintainer would call it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest
import yaml

from bot.agreement.links import BenchmarkPR, Link, Linker
from bot.agreement.proposals import (
    LOOSE,
    STRICT,
    History,
    Proposal,
    Replay,
    Strictness,
    score_proposals,
)
from bot.agreement.recipes_history import BlobReader, maintainer_commits, recipe_at
from bot.agreement.score import score_links, totals
from bot.agreement.taxonomy import Taxonomy
from bot.backtest.history import first_parent_log
from bot.backtest.model import EditRow, LaunchDigest, PRRow
from bot.recipes.leaves import recipe_leaves
from bot.rules import default_rules
from tests.backtest.conftest import commit, git, new_repo

from .conftest import digest

RECIPE = "models/x/M.yaml"
TAXONOMY_YAML = {
    "hardware_profiles": {
        "mi300x": {"brand": "AMD", "generation": "cdna3", "display_name": "MI300X"},
        "mi355x": {"brand": "AMD", "generation": "cdna4", "display_name": "MI355X"},
        "b200": {"brand": "NVIDIA", "generation": "blackwell", "display_name": "B200"},
    }
}
TAXONOMY = Taxonomy.from_yaml(TAXONOMY_YAML)
MI355X = "variants.mxfp8.hardware_overrides.mi355x"
PR = 100
MERGED = 12  # day of the month the benchmark PR merged


def when(day: int) -> str:
    """Day ``day`` counted from 2030-01-01 (day 1), as a git date."""
    return f"{date(2030, 1, 1) + timedelta(days=day - 1)}T00:00:00Z"


def moment(day: int) -> int:
    return 1893456000 + (day - 1) * 86400  # 2030-01-<day> 00:00 UTC


class Recipes:
    """A recipes repository: a base commit, then maintainer commits, each a whole recipe."""

    def __init__(self, path: Path, base: dict[str, object]) -> None:
        self.path = new_repo(path)
        files = {"taxonomy.yaml": yaml.safe_dump(TAXONOMY_YAML), RECIPE: yaml.safe_dump(base)}
        self.base = commit(self.path, "Add M (#1)", when(1), files)

    def commit(self, day: int, recipe: dict[str, object], subject: str = "Tune M (#2)") -> str:
        return commit(self.path, subject, when(day), {RECIPE: yaml.safe_dump(recipe)})

    def history(
        self, replays: Sequence[Replay], prs: Sequence[BenchmarkPR]
    ) -> tuple[History, tuple[Link, ...]]:
        log = first_parent_log(self.path, "main", bodies=True)
        commits = maintainer_commits(self.path, log)
        linker = Linker(prs, TAXONOMY)
        links = tuple(link for c in commits for link in linker.links(c))
        reader = BlobReader(self.path)
        try:
            existing = {
                (r.recipes_sha, RECIPE): recipe_leaves(
                    RECIPE, recipe_at(reader, r.recipes_sha, RECIPE)
                )
                for r in replays
            }
        finally:
            reader.close()
        positions = {c.sha: i for i, c in enumerate(log)}
        return History(commits, positions, moment(60), links, existing), links


def lane(env: dict[str, str], args: dict[str, str] | None = None) -> LaunchDigest:
    """What the benchmark PR launched on MI355X and changed (all of it: a new lane)."""
    return digest("mi355x", env, args, key="m-fp8-mi355x-vllm")


def edit(kind: str, subject: str, node: str, after: str, before: str | None = None) -> EditRow:
    return EditRow(RECIPE, kind, subject, node, before, after, ("mi355x",), ("mxfp8",),
                   ("single_node_tp",))  # fmt: skip


def row(*edits: EditRow, offered: tuple[EditRow, ...] = ()) -> PRRow:
    return PRRow(PR, "sha", "base", "2030-01-12", "Tune M", "r", "alignment PR", "x",
                 edits=edits, offered=offered)  # fmt: skip


def scored(
    recipes: Recipes, replay_row: PRRow, digest: LaunchDigest, strictness: Strictness
) -> tuple[Proposal, ...]:
    replay = Replay(replay_row, recipes.base, moment(10), 0, moment(MERGED))
    pr = BenchmarkPR(PR, "Tune M", moment(10), moment(MERGED), (digest,))
    history, _ = recipes.history([replay], [pr])
    return score_proposals([replay], history, default_rules(), TAXONOMY, strictness)


def env_at(scope: str, env: dict[str, str], base: dict[str, object] | None = None) -> dict:
    data: dict[str, object] = json.loads(json.dumps(base or {}))
    node = data
    for part in scope.split("."):
        node = node.setdefault(part, {})  # type: ignore[assignment]
    node.setdefault("extra_env", {}).update(env)  # type: ignore[attr-defined]
    return data


def test_an_adoption_needs_a_commit_linked_to_the_pr_within_21_days_of_its_merge(
    tmp_path: Path,
) -> None:
    digest = lane({"VLLM_X": "1"})
    proposed = row(edit("env-new", "VLLM_X", f"{MI355X}.extra_env.VLLM_X", "1"))
    # the same setting at the same node, 30 days after the merge: no longer an answer
    late = Recipes(tmp_path / "late", {"model": {"hf_id": "org/M"}})
    late.commit(MERGED + 30, env_at(MI355X, {"VLLM_X": "1"}, {"model": {"hf_id": "org/M"}}))
    assert [p.outcome for p in scored(late, proposed, digest, LOOSE)] == ["same node"]
    assert [p.outcome for p in scored(late, proposed, digest, STRICT)] == ["unlinked"]
    # within the window, the commit carries what the PR changed: linked, adopted
    soon = Recipes(tmp_path / "soon", {"model": {"hf_id": "org/M"}})
    soon.commit(MERGED + 2, env_at(MI355X, {"VLLM_X": "1"}, {"model": {"hf_id": "org/M"}}))
    [found] = scored(soon, proposed, digest, STRICT)
    assert found.outcome == "same node" and found.adopted


def test_fields_already_in_the_recipe_are_not_leaves_of_the_edit(tmp_path: Path) -> None:
    """The bot restates the variant's attention backend inside the JSON it writes at the GPU
    node; maintainers write their own JSON there (the backend, another field). The only field
    the edit changes was not adopted."""
    base = {
        "model": {"hf_id": "org/M"},
        "variants": {"mxfp8": {"extra_args": ["--attention-config", '{"backend": "A"}']}},
    }
    recipes = Recipes(tmp_path / "r", base)
    theirs = json.loads(json.dumps(base))
    theirs["variants"]["mxfp8"]["hardware_overrides"] = {
        "mi355x": {"extra_args": ["--attention-config", '{"backend": "A", "other": 1}']}
    }
    recipes.commit(MERGED + 2, theirs, "Tune M on MI355X (InferenceX #100)")
    digest = lane({}, {"--attention-config.backend": "A", "--attention-config.use_x": "true"})
    proposed = row(
        edit("flag-new", "--attention-config", f"{MI355X}.extra_args",
             '--attention-config {"backend":"A","use_x":true}')
    )  # fmt: skip
    [loose] = scored(recipes, proposed, digest, LOOSE)
    assert loose.outcome == "partly"  # the restated backend counted as adopted
    [strict] = scored(recipes, proposed, digest, STRICT)
    assert [leaf.subject for leaf in strict.leaves] == ["--attention-config.use_x"]
    assert [leaf.subject for leaf in strict.restated] == ["--attention-config.backend"]
    assert strict.outcome == "not adopted"


def test_a_value_already_rendered_otherwise_is_still_a_change(tmp_path: Path) -> None:
    """The variant sets the value, the AMD layer overrides it: writing it at the GPU node
    changes what the lane renders, so it is the edit's leaf."""
    base = env_at("variants.mxfp8", {"VLLM_X": "1"}, {"model": {"hf_id": "org/M"}})
    base = env_at("hardware_overrides.amd", {"VLLM_X": "0"}, base)
    recipes = Recipes(tmp_path / "r", base)
    proposed = row(edit("env-new", "VLLM_X", f"{MI355X}.extra_env.VLLM_X", "1"))
    [found] = scored(recipes, proposed, lane({"VLLM_X": "1"}), STRICT)
    assert [leaf.subject for leaf in found.leaves] == ["VLLM_X"] and not found.restated


@pytest.mark.parametrize(
    ("scope", "loose", "strict"),
    [
        ("variants.mxfp8.hardware_overrides.mi300x", "same value elsewhere", "not covering"),
        ("variants.mxfp8.hardware_overrides.b200", "same value elsewhere", "not covering"),
        ("variants.other", "same value elsewhere", "not covering"),  # another variant
        ("variants.mxfp8.hardware_overrides.amd", "same value elsewhere", "same value elsewhere"),
        ("hardware_overrides.cdna4", "same value elsewhere", "same value elsewhere"),
        ("variants.mxfp8", "same value elsewhere", "same value elsewhere"),
    ],
)
def test_another_node_counts_only_when_its_renderings_include_the_benchmarked_gpu(
    tmp_path: Path, scope: str, loose: str, strict: str
) -> None:
    base = {"model": {"hf_id": "org/M"}}
    recipes = Recipes(tmp_path / "r", base)
    recipes.commit(MERGED + 2, env_at(scope, {"VLLM_X": "1"}, base), "Tune M (InferenceX #100)")
    proposed = row(edit("env-new", "VLLM_X", f"{MI355X}.extra_env.VLLM_X", "1"))
    digest = lane({"VLLM_X": "1"})
    assert [p.outcome for p in scored(recipes, proposed, digest, LOOSE)] == [loose]
    assert [p.outcome for p in scored(recipes, proposed, digest, STRICT)] == [strict]


def test_a_forced_setting_is_not_adopted_by_an_opt_in_feature_nor_the_reverse(
    tmp_path: Path,
) -> None:
    base = {"model": {"hf_id": "org/M"}}
    feature = {**base, "features": {"fast_moe": {"args": ["--enable-x"]}}}
    forced = {**base, "variants": {"mxfp8": {"extra_args": ["--enable-x"]}}}
    digest = lane({}, {"--enable-x": ""})
    at_gpu = row(edit("flag-new", "--enable-x", f"{MI355X}.extra_args", "--enable-x"))
    behind = row(edit("flag-new", "--enable-x", "features.fast_moe.args", "--enable-x"))
    for name, theirs, proposed in (("opt-in", feature, at_gpu), ("forced", forced, behind)):
        recipes = Recipes(tmp_path / name, base)
        recipes.commit(MERGED + 2, theirs, "Tune M (InferenceX #100)")
        assert [p.outcome for p in scored(recipes, proposed, digest, LOOSE)] == [
            "same value elsewhere"
        ]
        assert [p.outcome for p in scored(recipes, proposed, digest, STRICT)] == ["other choice"]


def test_linked_leaves_count_the_diff_and_the_checklist_apart(tmp_path: Path) -> None:
    """A linked maintainer change: one leaf the diff proposes, one the PR only offers as a
    checkbox, one the maintainers set for the PR's MI300X lane where the bot proposed it for
    MI355X only (strict: not the same setting)."""
    base = {"model": {"hf_id": "org/M"}}
    recipes = Recipes(tmp_path / "r", base)
    theirs = env_at(MI355X, {"VLLM_A": "1", "VLLM_B": "1"}, base)
    theirs = env_at("variants.mxfp8.hardware_overrides.mi300x", {"VLLM_C": "1"}, theirs)
    sha = recipes.commit(MERGED + 2, theirs, "Tune M (InferenceX #100)")
    digest = lane({"VLLM_A": "1", "VLLM_B": "1", "VLLM_C": "1"})
    mi300x = replace(digest, key="m-fp8-mi300x-vllm", hardware="mi300x")
    proposed = row(
        edit("env-new", "VLLM_A", f"{MI355X}.extra_env.VLLM_A", "1"),
        edit("env-new", "VLLM_C", f"{MI355X}.extra_env.VLLM_C", "1"),
        offered=(edit("env-new", "VLLM_B", f"{MI355X}.extra_env.VLLM_B", "1"),),
    )
    replay = Replay(proposed, recipes.base, moment(10), 0, moment(MERGED))
    pr = BenchmarkPR(PR, "Tune M", moment(10), moment(MERGED), (digest, mi300x))
    history, links = recipes.history([replay], [pr])
    assert [(link.sha, link.hardware) for link in links] == [(sha, ("mi300x", "mi355x"))]
    at_link = {(PR, sha): replay}
    rules = default_rules()
    strict = score_links(links, at_link, rules, TAXONOMY, STRICT)
    status = {v.leaf.subject: (v.status, v.offered) for v in strict[0].leaves}
    assert status == {
        "VLLM_A": ("same node", None),
        "VLLM_B": ("missed", "same node"),
        "VLLM_C": ("missed", None),
    }
    result = totals(score_proposals([replay], history, rules, TAXONOMY), strict)
    assert (result.linked_hit, result.linked_in_checklist, result.leaves_total) == (1, 1, 3)
    loose = score_links(links, at_link, rules, TAXONOMY, LOOSE)
    assert {v.leaf.subject: v.status for v in loose[0].leaves}["VLLM_C"] == "elsewhere"
    offered = score_proposals([replay], history, rules, TAXONOMY, offered=True)
    assert [(p.edit.subject, p.outcome) for p in offered] == [("VLLM_B", "same node")]


def test_git_dates_are_the_moments_the_tests_assume(tmp_path: Path) -> None:
    recipes = Recipes(tmp_path / "r", {"model": {"hf_id": "org/M"}})
    assert int(git(recipes.path, "log", "-1", "--format=%ct")) == moment(1)


@pytest.mark.parametrize(("tp", "status"), [("8", "restated"), ("4", "missed")])
def test_a_tp_the_lane_already_rendered_is_restated_not_missed(
    tmp_path: Path, tp: str, status: str
) -> None:
    """A maintainer's ``tp`` equal to the TP the benchmarked lane launched and the recipe
    already rendered for it (``--tensor-parallel-size`` agreed) restates it, as a flag
    already rendered does; another TP is a setting the bot could have proposed."""
    base = {"model": {"hf_id": "org/M"}, "variants": {"mxfp8": {"model_id": "org/M-FP8"}}}
    recipes = Recipes(tmp_path / "r", base)
    theirs = env_at(MI355X, {"VLLM_A": "1"}, base)
    theirs["variants"]["mxfp8"]["tp"] = int(tp)  # type: ignore[index]
    recipes.commit(MERGED + 2, theirs, "Tune M (InferenceX #100)")
    launched = replace(
        lane({"VLLM_A": "1"}, {"--tensor-parallel-size": "8"}),
        agrees=("--tensor-parallel-size",),
    )
    verdicts = _linked_verdicts(recipes, launched)
    assert verdicts["VLLM_A"][0] == "same node"
    assert verdicts["tp"][0] == status
    if status == "missed":
        assert verdicts["tp"][1] == "tp: the replay proposed no tp edit here"


@pytest.mark.parametrize(
    ("rendered", "variant", "status"),
    [
        ("vllm/vllm-openai-rocm:nightly", "mxfp8", "restated"),
        ("vllm/vllm-openai-rocm:v0.20.0", "mxfp8", "missed"),
        # the image the recipe rendered for a lane of another variant says nothing of this one
        ("vllm/vllm-openai-rocm:nightly", "mxfp4", "missed"),
    ],
)
def test_an_image_the_lane_already_rendered_is_restated_not_missed(
    tmp_path: Path, rendered: str, variant: str, status: str
) -> None:
    """A maintainer writing the floating tag the lane already ran at a node of their own (a
    new variant's GPU block) changes nothing for it, though the benchmark launched a pinned
    build of that tag: not a setting the bot could have proposed, so not a miss."""
    base = {"model": {"hf_id": "org/M"}, "variants": {"mxfp8": {"model_id": "org/M-FP8"}}}
    recipes = Recipes(tmp_path / "r", base)
    theirs = env_at(MI355X, {"VLLM_A": "1"}, base)
    theirs["variants"]["mxfp8"]["hardware_overrides"]["mi355x"]["docker_image"] = (  # type: ignore[index]
        "vllm/vllm-openai-rocm:nightly"
    )
    recipes.commit(MERGED + 2, theirs, "Tune M (InferenceX #100)")
    launched = replace(
        digest("mi355x", {"VLLM_A": "1"}, key="m-fp8-mi355x-vllm", variant=variant),
        recipe_image=rendered,
    )
    assert _linked_verdicts(recipes, launched)["image"][0] == status


def _linked_verdicts(recipes: Recipes, launched: LaunchDigest) -> dict[str, tuple[str, str]]:
    """Each leaf of the one maintainer commit linked to PR 100 (which proposed VLLM_A=1 at
    the MI355X block and launched ``launched``): its status and why."""
    proposed = row(edit("env-new", "VLLM_A", f"{MI355X}.extra_env.VLLM_A", "1"))
    replay = Replay(replace(proposed, launches=(launched,)), recipes.base, moment(10), 0,
                    moment(MERGED))  # fmt: skip
    pr = BenchmarkPR(PR, "Tune M", moment(10), moment(MERGED), (launched,))
    _, links = recipes.history([replay], [pr])
    [change] = score_links(links, {(PR, links[0].sha): replay}, default_rules(), TAXONOMY, STRICT)
    return {v.leaf.subject: (v.status, v.why) for v in change.leaves}
