"""One CLI grammar across commands (docs/cli.md "One grammar in every command"): the same
repository, ref, jobs, format and output options everywhere, the same message for a
repository that does not exist, suggestions for mistyped names, and --help pages without reST
markup."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.commands.grammar import did_you_mean, is_git, output_format, repo_name
from bot.commands.main import build_parser, main
from bot.fixtures import SEED_CONFIG_KEY, SeedFixtures
from tests.shared import corpus_dir

SEED_MODEL = "deepseek-ai/DeepSeek-V4.1-Flash"


def test_every_command_has_a_clean_description() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    choices = getattr(subparsers, "choices", {})
    assert set(choices) >= {"align", "audit", "render", "extract", "diff", "rules", "demo"}
    for name, sub in choices.items():
        text = sub.format_help()
        assert sub.description, f"{name} has no description"
        for markup in ("``", ":func:", ":mod:", ":class:"):
            assert markup not in text, f"{name} --help shows {markup}"


@pytest.mark.parametrize(
    ("out", "given", "expected"),
    [
        ("a.json", None, "json"),
        ("a.HTML", None, "html"),
        ("a.txt", None, "md"),
        ("a.json", "md", "md"),
    ],
)
def test_format_follows_the_out_extension(out: str, given: str | None, expected: str) -> None:
    argv = ["audit", "--bench-repo", "b", "--recipes", "r", "--out", out]
    args = build_parser().parse_args(argv + (["--format", given] if given else []))
    assert output_format(args) == expected


def test_workers_is_an_alias_of_jobs_that_warns(capsys: pytest.CaptureFixture[str]) -> None:
    from bot.commands.grammar import jobs

    args = build_parser().parse_args(["worker", "--workers", "3"])
    assert jobs(args) == 3
    assert "--workers is deprecated; use --jobs" in capsys.readouterr().err
    assert jobs(build_parser().parse_args(["serve", "--jobs", "4"])) == 4


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "--bench-repo", "{missing}", "--recipes", "{recipes}"],
        ["extract", "--bench-repo", "{missing}", "--config-key", "k"],
        ["align", "--bench-repo", "{missing}", "--recipes", "{recipes}"],
        ["backtest", "--bench-repo", "{missing}", "--recipes", "{recipes}"],
    ],
)
def test_a_missing_bench_repo_is_one_message_everywhere(
    argv: list[str], seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    filled = [a.format(missing=missing, recipes=seed.recipes_repo) for a in argv]
    assert main(filled) == 2
    err = capsys.readouterr().err
    assert err == f"recipe-sync: error: --bench-repo: {missing} does not exist\n"


def test_a_missing_recipes_repo_gives_the_same_kind_of_message(
    seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    for argv in (
        ["audit", "--bench-repo", str(seed.bench_repo), "--recipes", str(missing)],
        ["render", "--recipes", str(missing), "--model", SEED_MODEL, "--hardware", "mi355x"],
    ):
        assert main(argv) == 2
        assert capsys.readouterr().err.endswith(
            f"recipe-sync: error: --recipes: {missing} does not exist\n"
        )


def test_without_a_ref_head_is_read_and_said(
    seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "audit.json"
    argv = ["audit", "--bench-repo", str(seed.bench_repo), "--recipes", str(seed.recipes_repo)]
    assert main([*argv, "--out", str(out)]) in (0, 1)
    err = capsys.readouterr().err
    assert "--bench-repo: reading HEAD (" in err and "--recipes: reading HEAD (" in err
    assert json.loads(out.read_text())["summary"]["rows"] > 0  # JSON from the extension
    # the files on disk only when asked for, and said
    assert main([*argv, "--recipes-ref", "WORKTREE", "--out", str(out)]) in (0, 1)
    assert "--recipes: reading the working tree of" in capsys.readouterr().err


def test_extract_checks_the_runner_node(
    seed: SeedFixtures, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["extract", "--bench-repo", str(seed.bench_repo), "--bench-ref", seed.bench_pr_head]
    argv += ["--config-key", SEED_CONFIG_KEY, "--arm", "eval"]
    assert main([*argv, "--runner-node", "nosuchnode"]) == 2
    assert "--runner-node: unknown runner node 'nosuchnode'" in capsys.readouterr().err
    assert main([*argv, "--runner-node", "mi355x-amds_07"]) == 2
    assert "(did you mean 'mi355x-amds_03'" in capsys.readouterr().err
    assert main([*argv, "--runner-node", "b200-cw_00"]) == 2
    assert "does not run on this node" in capsys.readouterr().err
    assert main([*argv, "--runner-node", "mi355x-amds_03"]) == 0
    assert main([*argv[:-2], "--config-key", SEED_CONFIG_KEY[:-2]]) == 2
    assert f"did you mean '{SEED_CONFIG_KEY}'" in capsys.readouterr().err


def test_render_names_are_forgiving(seed: SeedFixtures, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["render", "--recipes", str(seed.recipes_repo), "--recipes-ref", seed.recipes_base]
    assert main([*base, "--model", SEED_MODEL, "--hardware", "MI355X"]) == 0
    assert "on mi355x" in capsys.readouterr().out  # the taxonomy's spelling
    cases = [
        (["--model", SEED_MODEL[:-1], "--hardware", "mi355x"], f"did you mean '{SEED_MODEL}'"),
        (["--model", SEED_MODEL, "--hardware", "mi355"], "did you mean 'mi355x'"),
        (
            ["--model", SEED_MODEL, "--hardware", "mi355x", "--strategy", "single_node_tpp"],
            "did you mean 'single_node_tp'",
        ),
        (
            ["--model", SEED_MODEL, "--hardware", "mi355x", "--features", "reasonin"],
            "did you mean 'reasoning'",
        ),
    ]
    for extra, hint in cases:
        assert main([*base, *extra]) == 2
        assert hint in capsys.readouterr().err


def test_render_warns_on_hardware_the_recipe_marks_unsupported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    corpus = corpus_dir()
    if not corpus.is_dir():
        pytest.skip("the real recipes corpus is not in ../shared")
    argv = ["render", "--recipes", str(corpus), "--model", "deepseek-ai/DeepSeek-V4-Pro"]
    assert main([*argv, "--hardware", "mi300x"]) == 0
    captured = capsys.readouterr()
    assert "marks mi300x unsupported" in captured.err
    assert "# warning: mi300x is marked unsupported by this recipe" in captured.out
    assert main([*argv, "--hardware", "mi355x"]) == 0
    assert "unsupported" not in capsys.readouterr().err


def test_diff_reads_what_extract_and_render_print(
    seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench, recipe = tmp_path / "bench.json", tmp_path / "recipe.json"
    extract = ["extract", "--bench-repo", str(seed.bench_repo), "--bench-ref", seed.bench_pr_head]
    extract += ["--config-key", SEED_CONFIG_KEY, "--arm", "eval", "--out", str(bench)]
    assert main(extract) == 0
    render = ["render", "--recipes", str(seed.recipes_repo), "--recipes-ref", seed.recipes_base]
    render += ["--model", SEED_MODEL, "--hardware", "mi355x", "--out", str(recipe)]
    assert main(render) == 0
    capsys.readouterr()
    argv = ["diff", "--bench-json", str(bench), "--recipe-json", str(recipe)]
    assert main([*argv, "--hardware", "MI355X"]) == 1  # the seed drift
    out = capsys.readouterr().out
    assert "--moe-backend" in out and "aiter_triton_mxfp4_bf16" in out
    # several launch lines: one message saying how to pick one
    extract[extract.index("eval")] = "throughput"
    assert main(extract) == 0
    assert main(argv) == 2
    assert "holds 6 launch lines; narrow `recipe-sync extract`" in capsys.readouterr().err


def test_repository_names_come_from_origin_else_local(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert repo_name(repo, None) == "local"
    assert repo_name(repo, "o/given") == "o/given"
    subprocess.run(
        ["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/bench.git"],
        check=True,
    )
    assert repo_name(repo, None) == "acme/bench"
    assert repo_name(tmp_path, None) == "local"  # not a git repository


def test_did_you_mean_is_case_insensitive() -> None:
    assert did_you_mean("MI355", ["mi355x", "h200"]) == " (did you mean 'mi355x'?)"
    assert did_you_mean("zzz", ["mi355x"]) == ""


def test_align_without_names_writes_no_local_path(
    seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["align", "--bench-repo", str(seed.bench_repo), "--bench-ref", seed.bench_pr_head]
    argv += ["--recipes", str(seed.recipes_repo), "--recipes-ref", seed.recipes_base]
    assert main([*argv, "--out", str(out)]) == 1
    body = (out / "pr-body.md").read_text()
    for name in ("pr-body.md", "pr-title.txt", "comment.md", "plan.json"):
        text = (out / name).read_text()
        assert str(seed.bench_repo) not in text and str(seed.recipes_repo) not in text, name
    assert "with the launch line local@" in body  # no origin remote: "local"


def test_work_trees_and_bare_repositories_are_git_and_plain_directories_are_not(
    tmp_path: Path,
) -> None:
    tree, bare, plain, decoy = (tmp_path / name for name in ("tree", "bare", "plain", "decoy"))
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    plain.mkdir()
    decoy.mkdir()
    (decoy / "HEAD").write_text("not a repository\n")  # a file of that name alone is not git
    assert is_git(tree) and is_git(bare)
    assert not is_git(plain) and not is_git(decoy) and not is_git(tree / "missing")
