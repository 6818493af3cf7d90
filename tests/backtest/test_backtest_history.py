"""The history walk, the recipes pairing, citations and the CLI, on small real git repos."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from bot import sources
from bot.align.result import AlignRun
from bot.backtest.history import RecipesTimeline, cited_prs, first_parent_log, merged_prs
from bot.backtest.maintainers import maintainer_edits
from bot.backtest.model import EditRow, PRRow
from bot.backtest.run import (
    Backtester,
    Replayer,
    Settings,
    classify,
    plan_jobs,
    run_backtest,
    settings_for,
)
from bot.benchmarks import configs
from bot.commands.main import main
from bot.fixtures import SeedFixtures
from tests.backtest.conftest import commit, git, new_repo
from tests.ungated import ungated_rules_dir

# the recipes shape a maintainer edits: a flag list at a hardware override
RECIPE = """model:
  hf_id: org/m
hardware_overrides:
  mi355x:
    extra_args:
      - "--max-num-seqs"
      - "{seqs}"
"""


@pytest.fixture()
def repos(tmp_path: Path) -> tuple[Path, Path]:
    bench = new_repo(tmp_path / "bench")
    commit(bench, "initial import", "2030-01-01T00:00:00Z", {"a.txt": "0\n"})
    commit(bench, "Add a key (#5)", "2030-01-03T00:00:00Z", {"a.txt": "1\n"})
    git(bench, "checkout", "-q", "-b", "topic")
    commit(bench, "work on the topic", "2030-01-04T00:00:00Z", {"b.txt": "1\n"})
    git(bench, "checkout", "-q", "main")
    commit(bench, "unrelated direct push", "2030-01-05T00:00:00Z", {"c.txt": "1\n"})
    git(
        bench,
        "merge",
        "-q",
        "--no-ff",
        "topic",
        "-m",
        "Merge pull request #7 from o/topic",
        when="2030-01-06T00:00:00Z",
    )
    commit(bench, "Tune (#9)", "2030-01-09T00:00:00Z", {"a.txt": "2\n"})
    recipes = new_repo(tmp_path / "recipes")
    commit(
        recipes, "first (#1)", "2030-01-02T00:00:00Z", {"models/org/m.yaml": RECIPE.format(seqs=64)}
    )
    commit(
        recipes,
        "Align m with InferenceX PR #9 (#2)",
        "2030-01-10T00:00:00Z",
        {"models/org/m.yaml": RECIPE.format(seqs=128)},
    )
    return bench, recipes


def test_merged_prs_are_first_parent_squashes_and_merges(repos: tuple[Path, Path]) -> None:
    bench, _ = repos
    commits = first_parent_log(bench, "main")
    prs = merged_prs(commits)
    assert [p.number for p in prs] == [5, 7, 9]  # the topic commit is not first-parent
    merge = prs[1]
    assert merge.base == git(bench, "rev-parse", f"{merge.sha}^1")
    assert git(bench, "rev-parse", f"{merge.sha}^2") == git(bench, "rev-parse", "topic")
    assert [p.number for p in merged_prs(commits, since="2030-01-06")] == [7, 9]
    assert [p.number for p in merged_prs(commits, until="2030-01-05")] == [5]
    assert [p.number for p in merged_prs(commits, only=[9])] == [9]


def test_recipes_commit_current_at_the_merge(repos: tuple[Path, Path]) -> None:
    bench, recipes = repos
    jobs, timeline = plan_jobs(settings_for(bench, recipes))
    assert timeline is not None
    first, second = (c.sha for c in timeline.commits)
    by_pr = {j.pr.number: j for j in jobs}
    assert by_pr[5].recipes_sha == first  # the recipes commit of 01-02 is current on 01-03
    assert by_pr[9].recipes_sha == first  # the recipes commit of 01-10 is newer
    assert [c.sha for c in by_pr[9].citing] == [second]
    assert by_pr[5].citing == ()
    # before the first recipes commit: the earliest you have
    assert RecipesTimeline(timeline.commits).at(0) is None


def test_a_plain_directory_is_used_for_every_pr(repos: tuple[Path, Path], tmp_path: Path) -> None:
    bench, _ = repos
    plain = tmp_path / "snapshot" / "models"
    plain.mkdir(parents=True)
    jobs, timeline = plan_jobs(settings_for(bench, plain.parent))
    assert timeline is None and {j.recipes_sha for j in jobs} == {""}


def test_citations() -> None:
    text = "Align (InferenceX#12, InferenceX PR #13)\nhttps://github.com/SemiAnalysisAI/InferenceX/pull/14"
    assert cited_prs(text) == {12, 13, 14}
    assert cited_prs("Add Laguna recipe (#608)") == set()


def test_maintainers_edits_are_matched_by_path_value_and_subject(repos: tuple[Path, Path]) -> None:
    _, recipes = repos
    timeline = RecipesTimeline(first_parent_log(recipes, "main", bodies=True))
    citing = timeline.citing(9)
    node = "hardware_overrides.mi355x.extra_args[1]"
    same = EditRow("models/org/m.yaml", "flag", "--max-num-seqs", node, "64", "128")
    found = maintainer_edits(recipes, citing, [same])
    assert [(m.node, m.before, m.after, m.match) for m in found] == [
        (node, "64", "128", "same edit")
    ]
    elsewhere = EditRow(
        "models/org/m.yaml",
        "flag-new",
        "--max-num-seqs",
        "strategy_overrides.x.extra_args",
        None,
        "--max-num-seqs 128",
    )
    found = maintainer_edits(recipes, citing, [elsewhere])
    assert found[0].match == "same subject at another layer"
    assert maintainer_edits(recipes, citing, [])[0].match == "not proposed by the bot"


def test_cli_reports_every_pr_with_a_reason_and_resumes(
    seed_history: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache.jsonl"
    out = tmp_path / "report.json"
    args = [
        "backtest",
        "--bench-repo",
        str(seed_history.bench_repo),
        "--recipes",
        str(seed_history.recipes_repo),
        "--since",
        "2030-01-01",
        "--format",
        "json",
        "--out",
        str(out),
        "--cache",
        str(cache),
        "--rules",  # the planner's mechanics: every candidate proposed (tests.ungated)
        str(ungated_rules_dir(tmp_path)),
    ]
    assert main(args) == 1  # a PR calls for an alignment PR
    data = json.loads(out.read_text())
    rows = {r["number"]: r for r in data["prs"]}
    assert rows[3001]["outcome"] == "no vLLM change" and rows[3001]["reason"]
    seed = rows[3058]
    assert seed["outcome"] == "alignment PR", seed["reason"]
    # the reason counts what the PR writes: node edits (no saved runs here: no verified mark,
    # and the image follows the nightly channel rather than pinning the build) and the
    # guide's reproduction section
    assert seed["reason"] == (
        "3 edits and 1 reproduction section in the guide to "
        "models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"
    )
    assert seed["files"] == ["models/deepseek-ai/DeepSeek-V4.1-Flash.yaml"]
    variant = "variants.default.hardware_overrides.mi355x"
    assert {e["node"] for e in seed["edits"]} == {
        f"{variant}.docker_image",
        # the recipe's only AMD lane runs it: the amd block (placement by domain)
        "hardware_overrides.amd.extra_env.AITER_TRITON_LOG_LEVEL",
        "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args",
    }
    assert all(r["reason"] for r in data["prs"]) and data["counts"].get("error") is None
    assert len(cache.read_text().splitlines()) == 2
    first = out.read_bytes()
    assert main(args) == 1  # from the cache: same bytes, no new cache lines
    assert out.read_bytes() == first
    assert len(cache.read_text().splitlines()) == 2
    assert "2 merged PRs: 1 alignment PR, 1 no vLLM change; 0 errors" in capsys.readouterr().err
    for fmt in ("md", "html"):
        assert main([*args[:-4], "--format", fmt, "--out", str(tmp_path / f"r.{fmt}")]) == 1
    assert "| #3058 |" in (tmp_path / "r.md").read_text()


def test_bad_input_is_exit_2(tmp_path: Path) -> None:
    assert main(["backtest", "--bench-repo", str(tmp_path / "no"), "--recipes", str(tmp_path)]) == 2
    assert (
        main(
            ["backtest", "--bench-repo", str(tmp_path), "--recipes", str(tmp_path), "--jobs", "-1"]
        )
        == 2
    )
    assert main(["backtest", "--bench-repo", str(tmp_path), "--recipes", str(tmp_path)]) == 2


def test_a_failed_plan_is_its_own_outcome_not_blocked() -> None:
    failed = SimpleNamespace(
        status="failed",
        recipe_path="models/a.yaml",
        reason="no alignment edit of models/a.yaml is proposed: the edit would not align X",
    )
    blocked = SimpleNamespace(status="blocked", recipe_path="models/b.yaml", reason="R")
    run = cast(AlignRun, SimpleNamespace(patches=(), outcomes=(blocked, failed)))
    assert classify(run) == ("no edit found", failed.reason)
    run = cast(AlignRun, SimpleNamespace(patches=(), outcomes=(blocked,)))
    assert classify(run) == ("blocked", "models/b.yaml: R")


def test_caches_do_not_change_a_single_row(seed_history: SeedFixtures) -> None:
    """The parse caches (per-key chunks, whole files), the git object cache and the engine's
    caches shared across PRs (script evaluations, recipes trees and renderings) give the rows
    a cold run gives, field for field (the timing aside)."""
    settings = settings_for(seed_history.bench_repo, seed_history.recipes_repo)

    def rows(settings: Settings) -> list[dict[str, object]]:
        report = run_backtest(settings, since="2030-01-01")
        return [{k: v for k, v in r.to_json().items() if k != "seconds"} for r in report.rows]

    warm = rows(settings)
    saved = configs.PARSE_CACHE_SIZE
    configs.PARSE_CACHE_SIZE = 0  # no parse cache, no per-key chunks: whole-file parses
    configs._PARSED.clear()
    configs._CHUNKS.clear()
    sources._OBJECTS.clear()
    try:
        cold = rows(replace(settings, engine_caches=False))
    finally:
        configs.PARSE_CACHE_SIZE = saved
    assert cold == warm and len(cold) == 2


def test_a_later_pr_reuses_evaluations_and_equals_a_cold_run(
    seed_history: SeedFixtures, tmp_path: Path
) -> None:
    """A PR that adds a perf-changelog entry naming the key (and a file no script reads)
    reads its launch lines at base and head with the same scripts: every evaluation comes
    from the earlier PR, and its row is the cold one."""
    bench = tmp_path / "bench"
    shutil.copytree(seed_history.bench_repo, bench)
    changelog = bench / "perf-changelog.yaml"
    entry = (
        "\n- config-keys:\n    - dsv41flash-fp4-mi355x-vllm-agentic-mtp\n  description:\n"
        '    - "Re-run the agentic sweep"\n  pr-link: https://example.invalid/pull/3060\n'
    )
    commit(bench, "Re-run (#3060)", "2030-01-03T00:00:00Z", {})
    changelog.write_text(changelog.read_text() + entry)
    commit(bench, "Re-run the sweep (#3061)", "2030-01-04T00:00:00Z", {"benchmarks/NOTES": "x\n"})
    settings = settings_for(bench, seed_history.recipes_repo)
    jobs, _ = plan_jobs(settings, since="2030-01-02")
    assert [j.pr.number for j in jobs] == [3058, 3060, 3061]

    def rows(tester: Backtester) -> list[dict[str, object]]:
        return [{k: v for k, v in tester.row(j).to_json().items() if k != "seconds"} for j in jobs]

    tester = Backtester(settings)
    warm = rows(tester)
    cold = rows(Backtester(replace(settings, engine_caches=False)))
    assert warm == cold
    assert warm[2]["keys"] == ("dsv41flash-fp4-mi355x-vllm-agentic-mtp",)
    assert tester.caches is not None
    evaluations = tester.caches.evaluations
    # the later PRs evaluate nothing the first did not (base and head lines alike)
    first = Backtester(settings)
    first.row(jobs[0])
    assert first.caches is not None
    assert evaluations.hits > 0 and evaluations.misses == first.caches.evaluations.misses
    # its launch lines are those of #3058: nothing to align (the line memo: test_align_line_memo)
    assert warm[2]["outcome"] == "no vLLM change", warm[2]


def test_workers_share_evaluations_and_give_the_rows_of_one_process(
    seed_history: SeedFixtures, tmp_path: Path
) -> None:
    """Two workers (each replaying runs of PRs) write their evaluations to one directory and
    take each other's where the read-sets hold: the rows are those of a cold run, and the
    directory is gone once the replay ends."""
    bench = tmp_path / "bench"
    shutil.copytree(seed_history.bench_repo, bench)
    script = bench / "benchmarks" / "NOTES"
    for number in (3060, 3061, 3062):  # files no script reads: the same evaluations again
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(f"{number}\n")
        commit(bench, f"Notes (#{number})", f"2030-01-0{number - 3057}T00:00:00Z", {})
    settings = settings_for(bench, seed_history.recipes_repo)
    jobs, _ = plan_jobs(settings, since="2030-01-01")
    assert len(jobs) >= 4  # enough for the pool

    def plain(rows: Iterable[PRRow]) -> list[dict[str, object]]:
        return [{k: v for k, v in r.to_json().items() if k != "seconds"} for r in rows]

    with Replayer(settings, 2) as replayer:
        pooled = plain(replayer.rows(jobs))
        shared = replayer._shared
        assert shared is not None and any(shared.iterdir())  # evaluations were written
    assert not shared.exists()
    cold = Backtester(replace(settings, engine_caches=False))
    assert pooled == plain(cold.row(job) for job in jobs)


def test_recipes_before_the_yaml_format_are_out_of_scope(repos: tuple[Path, Path]) -> None:
    """A benchmark PR merged while the recipes repo had no taxonomy.yaml (before 2026-04)
    has nothing to align with: out of scope with that reason, not bad input."""
    bench, recipes = repos
    commit(bench, "Tune a key (#11)", "2030-01-11T00:00:00Z", {"configs/amd-master.yaml": "{}\n"})
    report = run_backtest(settings_for(bench, recipes), only=[11])
    (row,) = report.rows
    assert row.outcome == "out of scope"
    assert "predate the YAML recipes (no taxonomy.yaml)" in row.reason
