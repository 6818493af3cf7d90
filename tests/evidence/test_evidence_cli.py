from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.commands.main import main
from bot.evidence.fixtures import materialise
from bot.github import actions
from tests.evidence.conftest import (
    EVAL_JOB,
    SEED,
    SEED_TEMPLATE_DIR,
    MemoryRunSource,
    build_bench_repo,
    eval_log,
    rest_job,
    rest_run,
)

KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["evidence", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("changed", [False, True])
def test_from_dir_with_bench_repo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changed: bool
) -> None:
    values = build_bench_repo(tmp_path / "bench", script_changes_after_run=changed)
    saved = materialise(SEED_TEMPLATE_DIR, tmp_path / "saved", values)
    status, out, err = run_cli(
        [
            "--from-dir",
            str(saved),
            "--bench-repo",
            str(tmp_path / "bench"),
            "--expected-argv",
            str(saved / "expected-argv.json"),
            "--config-key",
            KEY,
        ],
        capsys,
    )
    assert (status, err) == (0, "")
    run8, pr8 = values["RUN_HEAD_SHA"][:8], values["PR_HEAD_SHA"][:8]
    assert out.startswith("### MI355X runtime evidence\n")  # label from the runner via rules
    # the changelog is read from the bench repo at the PR head
    assert "`perf-changelog.yaml` entry for `dsv41flash-fp4-mi355x-vllm-agentic-mtp`" in out
    if changed:
        assert "No run of SemiAnalysisAI/InferenceX#3058 verifies this configuration" in out
        assert "stale: the benchmark script blob (`benchmarks/single_node/agentic/" in out
    else:
        assert (
            "gsm8k 5-shot — strict-match 0.9689 ± 0.0048, flexible-extract 0.9682 ± 0.0048, "
            "both PASS."
        ) in out
        assert (
            f"The script blob is identical at the run's head ({run8}) and "
            f"SemiAnalysisAI/InferenceX#3058's current head ({pr8})"
        ) in out


def test_json_report(seed_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(
        ["--from-dir", str(seed_dir), "--json", "--job", "agentic eval / *"], capsys
    )
    data = json.loads(out)
    assert status == 0
    assert data["pr_number"] == 3058 and data["pr_head_sha"] == SEED["PR_HEAD_SHA"]
    assert [e["job_id"] for e in data["evidence"]] == [97301230007, 97311840107, 97188400107]
    item = data["evidence"][1]
    assert item["job"]["model_prefix"] == "dsv41flash" and item["launch"]["kind"] == "printf-q"
    assert item["verifies"] is False  # no bench repo: the older head's blob cannot be compared
    assert item["blockers"] == [
        "the script blob could not be compared (no benchmark repository to read blobs from)"
    ]
    assert data["cited"] == []


def test_pr_head_is_required_without_pull_json(
    tmp_path: Path, seed_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (seed_dir / "pull.json").unlink()
    status, _, err = run_cli(["--from-dir", str(seed_dir)], capsys)
    assert status == 2
    assert err == "recipe-sync: error: the PR head SHA is unknown: pass --pr-head SHA\n"
    status, out, _ = run_cli(
        [
            "--from-dir",
            str(seed_dir),
            "--earlier-head",
            SEED["OLD_HEAD_SHA"],
            "--pr-head",
            SEED["RUN_HEAD_SHA"],
            "--pr",
            "3058",
            "--repo",
            "SemiAnalysisAI/InferenceX",
            "--hardware-label",
            "MI355X",
        ],
        capsys,
    )
    assert status == 0 and "The run is on SemiAnalysisAI/InferenceX#3058's current head" in out
    # no pull.json, so no branch: the earlier head's run is found through --earlier-head
    assert "(run [34688120455](" in out and "it ran on an older head (3f1c9a7e)" in out


def test_bad_inputs_are_one_line_errors(
    tmp_path: Path, seed_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_cli([], capsys)
    assert status == 2 and "give --repo OWNER/NAME --pr N" in err
    status, _, err = run_cli(["--from-dir", str(tmp_path)], capsys)
    assert status == 2 and err.endswith("runs.json: no saved workflow runs here\n")
    bad = tmp_path / "argv.json"
    bad.write_text('{"*": "vllm serve"}')
    status, _, err = run_cli(["--from-dir", str(seed_dir), "--expected-argv", str(bad)], capsys)
    assert status == 2 and "key '*': argv must be a list of strings" in err
    (seed_dir / "runs.json").write_text("{\n  nope")
    status, _, err = run_cli(["--from-dir", str(seed_dir)], capsys)
    assert status == 2 and "runs.json:2: malformed JSON" in err
    assert len(err.splitlines()) == 1


def test_online_needs_a_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    status, _, err = run_cli(["--repo", "o/r", "--pr", "1"], capsys)
    assert (status, err) == (
        2,
        "recipe-sync: error: GITHUB_TOKEN is not set; use --from-dir DIR to work offline\n",
    )


def test_online_through_the_actions_client(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = MemoryRunSource(
        [rest_run(1, "head", prs=(7,))], {(1, 1): [rest_job(11, EVAL_JOB)]}, {11: eval_log()}
    )
    calls: list[tuple[object, ...]] = []

    def run_source(repo: str, token: str) -> MemoryRunSource:
        calls.append(("run_source", repo, token))
        return source

    def get_pull(repo: str, token: str, number: int) -> dict[str, object]:
        calls.append(("get_pull", repo, token, number))
        return {"number": number, "head": {"sha": "head", "ref": "feature"}}

    monkeypatch.setattr(actions, "run_source", run_source)
    monkeypatch.setattr(actions, "get_pull", get_pull)
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    status, out, _ = run_cli(["--repo", "acme/bench", "--pr", "7"], capsys)
    assert status == 0
    assert calls == [
        ("run_source", "acme/bench", "secret"),
        ("get_pull", "acme/bench", "secret", 7),
    ]
    assert out.startswith("### MI999-XYZ runtime evidence\n")  # no rule for this runner
    assert "bench run [1](https://github.com/acme/bench/actions/runs/1), job" in out
