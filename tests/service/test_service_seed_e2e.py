"""End to end on the seed fixtures with the real engine (``bot.service.engine:AlignEngine``).

A signed ``pull_request.labeled`` delivery on benchmark PR #3058's fixture (a fork PR, as the
real one was) → one alignment PR
in the recipes repo whose branch holds exactly the patch ``recipe-sync align`` computes
offline, one verification comment and one check run on the benchmark PR, with the evidence
read from the fake GitHub's Actions API (the seed's saved runs and job logs).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.align.result import AlignInputs
from bot.align.run import align
from bot.commands.main import main
from bot.evidence.source import DirRunSource
from bot.fixtures import SEED_RECIPE, SeedFixtures, build_seed_fixtures
from bot.present.posted import VERIFY_MARKER
from bot.rules import default_rules
from bot.service.intake import CHECK_NAME
from bot.sources import GitTreeSource, git_blob_sha_at
from tests.service.conftest import BOT, MAINTAINER, Harness
from tests.service.fakegithub import FakeGitHub, ServerThread, git
from tests.service.seeded import BENCH, FORK, RECIPES, SEED_PR_TITLE, open_seed_pull, serve_seed

SCRIPT = "benchmarks/single_node/agentic/dsv41flash_fp4_mi355x_vllm_mtp.sh"


@pytest.fixture
def seeded(
    tmp_path: Path, app_key: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeGitHub, SeedFixtures, Harness]]:
    built = build_seed_fixtures(tmp_path / "seed")
    fake = FakeGitHub(tmp_path / "remotes", public_key=app_key[1])
    fake.enforce_git_permissions(monkeypatch)
    with ServerThread(fake.app) as server:
        fake.base_url = server.url
        serve_seed(fake, built)
        (tmp_path / "service").mkdir()
        harness = Harness(
            fake,
            tmp_path / "service",
            app_key,
            recipes_repo=RECIPES,
            engine="bot.service.engine:AlignEngine",
        )
        try:
            yield fake, built, harness
        finally:
            harness.close()
    fake.check_contract()


def offline_patch(built: SeedFixtures) -> bytes:
    """What ``recipe-sync align`` computes for the same PR with the saved runs."""
    assert built.evidence_dir is not None
    run = align(
        AlignInputs(
            bench=GitTreeSource(built.bench_repo, built.bench_pr_head),
            bench_base=GitTreeSource(built.bench_repo, built.bench_base),
            recipes=GitTreeSource(built.recipes_repo, built.recipes_base),
            rules=default_rules(),
            runs=DirRunSource(built.evidence_dir),
            bench_repo=BENCH,
            pr_number=built.bench_pr_number,
            head_sha=built.bench_pr_head,
            base_sha=built.bench_base,
            head_branch=built.bench_pr_branch,
            head_repo=FORK,
            recipes_repo=RECIPES,
            recipes_sha=built.recipes_base,
            blob_sha_at=git_blob_sha_at(built.bench_repo),
        )
    )
    (patch,) = run.patches
    assert patch.new_text is not None
    return patch.new_text


def cli_args(built: SeedFixtures, out: Path) -> list[str]:
    """``recipe-sync align`` on what the App reads for the seed PR."""
    assert built.evidence_dir is not None
    return [
        "align",
        "--bench-repo",
        str(built.bench_repo),
        "--bench-ref",
        built.bench_pr_head,
        "--bench-base",
        built.bench_base,
        "--bench-name",
        BENCH,
        "--bench-pr",
        str(built.bench_pr_number),
        "--recipes",
        str(built.recipes_repo),
        "--recipes-ref",
        built.recipes_base,
        "--recipes-name",
        RECIPES,
        "--evidence",
        str(built.evidence_dir),
        "--out",
        str(out),
    ]


def label(fake: FakeGitHub, harness: Harness, number: int) -> None:
    pr = fake.pulls[BENCH][number]
    pr["labels"].append("recipe-sync")
    payload = fake.pull_request_payload(
        BENCH, number, "labeled", sender=MAINTAINER, label="recipe-sync"
    )
    assert harness.deliver("pull_request", payload).status_code == 202
    harness.drain()


def test_labeled_seed_pr_gets_the_alignment_pr_comment_and_check_run(
    seeded: tuple[FakeGitHub, SeedFixtures, Harness],
) -> None:
    fake, built, harness = seeded
    number = open_seed_pull(fake, built)
    assert fake.pulls[BENCH][number]["head_sha"] == built.bench_pr_head
    label(fake, harness, number)

    # one alignment PR whose branch holds exactly the offline patch
    (pr,) = fake.pulls[RECIPES].values()
    assert pr["title"] == SEED_PR_TITLE
    assert pr["user"] == BOT and pr["base_ref"] == "main"
    tip = fake.repos[RECIPES].ref_sha(f"refs/heads/{pr['head_ref']}")
    assert tip is not None
    recipes = fake.repos[RECIPES].path
    assert git(recipes, "rev-parse", f"{tip}^") == built.recipes_base
    pushed = git(recipes, "show", f"{tip}:{SEED_RECIPE}") + "\n"
    assert pushed.encode() == offline_patch(built)
    assert "mi355x: verified" in pushed  # the eval read through the Actions API verified it
    body = pr["body"]
    assert "InferenceX run [34710937012]" in body and "(attempt 2)" in body
    assert "strict-match 0.9689 ± 0.0048, flexible-extract 0.9682 ± 0.0048, both PASS" in body
    assert "--max-num-seqs 128" in body and "Regression checks" in body

    # one verification comment and one check run on the benchmark PR
    comments = [c for c in fake.comments_on(BENCH, number) if c["body"].startswith(VERIFY_MARKER)]
    (comment,) = comments
    assert comment["user"] == BOT and f"{RECIPES}#{pr['number']}" in comment["body"]
    (check,) = fake.check_runs_on(BENCH)
    assert check["name"] == CHECK_NAME and check["head_sha"] == built.bench_pr_head
    assert check["conclusion"] == "action_required"
    # annotations at the script lines that set the differing flags and env, and the image
    lines = {a["start_line"] for a in check["annotations"] if a["path"] == SCRIPT}
    # (--max-num-seqs at 24/48 is a benchmark setting now: listed, not annotated as drift)
    assert lines == {17, 22, 47}, check["annotations"]
    assert any(a["path"] == "configs/amd-master.yaml" for a in check["annotations"])

    # `recipe-sync align` on the same input writes the title and body the App posted
    out = built.root / "cli-out"
    assert main(cli_args(built, out)) == 1
    assert (out / "pr-title.txt").read_text(encoding="utf-8") == pr["title"] + "\n"
    assert (out / "pr-body.md").read_text(encoding="utf-8") == body

    # a redelivered label and a synchronize without change: still one PR, one comment
    label(fake, harness, number)
    assert len(fake.pulls[RECIPES]) == 1
    assert (
        len([c for c in fake.comments_on(BENCH, number) if c["body"].startswith(VERIFY_MARKER)])
        == 1
    )


def test_evidence_cli_reads_the_runs_through_the_actions_api(
    seeded: tuple[FakeGitHub, SeedFixtures, Harness],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake, built, _ = seeded
    number = fake.open_pull(
        BENCH, head_ref=built.bench_pr_branch, head_repo=FORK, number=built.bench_pr_number
    )
    fake.add_token("ghp_maintainer", MAINTAINER)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_maintainer")
    monkeypatch.setenv("RECIPE_SYNC_GITHUB_API_URL", fake.base_url)
    argv = ["evidence", "--repo", BENCH, "--pr", str(number), "--bench-repo", str(built.bench_repo)]
    assert main([*argv, "--script", SCRIPT]) == 0
    out = capsys.readouterr().out
    assert "InferenceX run [34710937012]" in out and "(attempt 2)" in out
    assert "strict-match 0.9689 ± 0.0048, flexible-extract 0.9682 ± 0.0048" in out
    assert "The script blob is identical at the run's head" in out
    assert "Attempt 1 of run" in out and "cancelled" in out


def _comment(
    fake: FakeGitHub, harness: Harness, repo: str, number: int, body: str, who: str
) -> str:
    payload = fake.comment_payload(repo, number, body, sender=who)
    response = harness.deliver("issue_comment", payload)
    assert response.status_code in (200, 202), response.text
    harness.drain()
    return str(response.json()["status"])


def test_a_maintainer_drops_one_hunk_and_the_next_update_leaves_it_out(
    seeded: tuple[FakeGitHub, SeedFixtures, Harness],
) -> None:
    fake, built, harness = seeded
    fake.set_permission(RECIPES, MAINTAINER, "write", "maintain")
    number = fake.open_pull(
        BENCH, head_ref=built.bench_pr_branch, head_repo=FORK, number=built.bench_pr_number
    )
    label(fake, harness, number)
    (pr,) = fake.pulls[RECIPES].values()
    recipes = fake.repos[RECIPES].path

    def pushed() -> str:
        tip = fake.repos[RECIPES].ref_sha(f"refs/heads/{pr['head_ref']}")
        return git(recipes, "show", f"{tip}:{SEED_RECIPE}")

    assert '- "aiter"' in pushed() and "Dropped on request" not in pr["body"]

    # someone without write access on the recipes repository: one refusal, nothing recorded
    _comment(fake, harness, RECIPES, pr["number"], "/recipe-sync drop --moe-backend", "visitor")
    refusals = [c for c in fake.comments_on(RECIPES, pr["number"]) if "visitor" in c["body"]]
    assert len(refusals) == 1 and "so nothing was recorded" in refusals[0]["body"]
    assert '- "aiter"' in pushed()

    # a maintainer drops the --moe-backend hunk on the alignment PR: the next update has no
    # --moe-backend hunk (and so no verification: the launch line runs aiter), and says why
    # spelled with underscores, as vLLM accepts it: recorded under the canonical name
    _comment(fake, harness, RECIPES, pr["number"], "/recipe-sync drop --moe_backend", MAINTAINER)
    assert len(fake.pulls[RECIPES]) == 1
    text = pushed()
    assert "--moe-backend" not in text.split("\nguide:", 1)[0].split("strategy_overrides:")[1]
    assert '- "aiter"' not in text and "AITER_TRITON_LOG_LEVEL" in text
    assert "mi355x: verified" not in text
    assert "aiter_triton_mxfp4_bf16" in text  # the shared AMD value, untouched
    body = fake.pulls[RECIPES][pr["number"]]["body"]
    assert "- Dropped on request: `--moe-backend` (by maintainer); `/recipe-sync keep" in body
    assert any(c[1] == "+1" for c in fake.reactions)

    # keep undoes it: the hunk is proposed again
    _comment(fake, harness, RECIPES, pr["number"], "/recipe-sync keep --moe-backend", MAINTAINER)
    assert '- "aiter"' in pushed() and "mi355x: verified" in pushed()
    assert "Dropped on request" not in fake.pulls[RECIPES][pr["number"]]["body"]
