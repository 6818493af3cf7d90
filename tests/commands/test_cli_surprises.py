"""A CLI that never surprises (issue #35): nothing it did not make is overwritten, every bad
input is exit 2 with one line naming the flag (no traceback, no library text), the same
did-you-mean everywhere, progress off a terminal, the same options across the replays."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.commands.main import build_parser, main
from bot.commands.progress import Progress
from bot.fixtures import SEED_CONFIG_KEY, SeedFixtures


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The single stderr line of a refused command (notes about HEAD aside)."""
    lines = [
        line
        for line in capsys.readouterr().err.splitlines()
        if not line.startswith("recipe-sync: --")
    ]
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0] and "Command '[" not in lines[0]
    return lines[0]


def test_fixtures_refuses_to_replace_what_it_did_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "recipes"
    mine.mkdir()
    (mine / "my-work.yaml").write_text("keep me\n")
    assert main(["fixtures", str(tmp_path)]) == 2
    assert one_error(capsys) == (
        f"recipe-sync: error: OUT: {mine} already exists and `recipe-sync fixtures` did not "
        "make it: choose another directory, or pass --force to replace it"
    )
    assert (mine / "my-work.yaml").read_text() == "keep me\n"  # nothing lost
    assert main(["fixtures", str(tmp_path), "--force"]) == 0
    assert not (mine / "my-work.yaml").exists()
    assert main(["fixtures", str(tmp_path)]) == 0  # its own output is rebuilt without --force


def test_demo_refuses_to_replace_repos_it_did_not_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "repos").mkdir()
    assert main(["demo", "--out", str(tmp_path)]) == 2
    assert "pass --force to replace it" in one_error(capsys)


@pytest.mark.parametrize("which", ["empty", "benchmark"])
def test_audit_refuses_a_folder_that_is_not_a_recipes_repository(
    seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    recipes = tmp_path if which == "empty" else seed.bench_repo
    argv = ["audit", "--bench-repo", str(seed.bench_repo), "--recipes", str(recipes)]
    assert main(argv) == 2
    line = one_error(capsys)
    assert line.startswith(f"recipe-sync: error: --recipes: {recipes}")
    assert line.endswith("is not a recipes repository (no taxonomy.yaml)")


def test_diff_refuses_a_version_that_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    side = tmp_path / "side.json"
    side.write_text('{"argv": ["vllm", "serve", "m"]}')
    argv = ["diff", "--bench-json", str(side), "--recipe-json", str(side)]
    assert main([*argv, "--vllm-version", "banana"]) == 2
    assert one_error(capsys) == (
        "recipe-sync: error: --vllm-version: 'banana' is not a vLLM version (a release such "
        "as 0.27.1 or v0.33, nightly, or latest)"
    )
    assert main([*argv, "--vllm-version", "v0.27.1"]) == 0


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd, check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture
def history(tmp_path: Path, seed: SeedFixtures) -> tuple[Path, Path]:
    """A benchmark history (its root commit names PR #5, not counted as merged: it has no
    parent), and the seed's recipes."""
    bench = tmp_path / "bench"
    bench.mkdir()
    git(bench, "init", "-q", "-b", "main")
    (bench / "a.txt").write_text("1\n")
    git(bench, "add", "-A")
    git(bench, "commit", "-q", "-m", "Add a key (#5)", "--date", "2030-01-03T00:00:00Z")
    recipes = tmp_path / "recipes"
    shutil.copytree(seed.recipes_repo, recipes)
    return bench, recipes


@pytest.mark.parametrize("command", ["backtest", "score"])
@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            ["--pr", "999999"],
            "--pr: #999999 is not a merged PR on the first-parent history of main in {bench}",
        ),
        (
            ["--since", "2030-02-01", "--until", "2030-01-01"],
            "--since: 2030-02-01 is after --until 2030-01-01: no day between",
        ),
        (["--since", "banana"], "--since: 'banana' is not a day (YYYY-MM-DD)"),
        (
            ["--bench-ref", "mian"],
            "--bench-ref: 'mian' is not a commit, branch or tag of {bench} (did you mean 'main'?)",
        ),
    ],
)
def test_replays_refuse_bad_windows_prs_and_refs(
    history: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    command: str,
    extra: list[str],
    expected: str,
) -> None:
    bench, recipes = history
    argv = [command, "--bench-repo", str(bench), "--recipes", str(recipes), *extra]
    assert main(argv) == 2
    assert one_error(capsys) == "recipe-sync: error: " + expected.format(bench=bench)


def test_a_bad_bench_ref_names_the_flag_not_git(
    seed: SeedFixtures, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["audit", "--bench-repo", str(seed.bench_repo), "--recipes", str(seed.recipes_repo)]
    assert main([*argv, "--bench-ref", "dsv41flash-mi355x-ck-mo"]) == 2
    assert one_error(capsys) == (
        f"recipe-sync: error: --bench-ref: 'dsv41flash-mi355x-ck-mo' is not a commit, branch "
        f"or tag of {seed.bench_repo} (did you mean 'dsv41flash-mi355x-ck-moe'?)"
    )


def test_align_suggests_the_config_key_meant(
    seed: SeedFixtures, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = SEED_CONFIG_KEY[:-1] + "x"
    argv = ["align", "--bench-repo", str(seed.bench_repo), "--bench-ref", seed.bench_pr_head]
    argv += ["--recipes", str(seed.recipes_repo), "--config-key", typo, "--out", str(tmp_path)]
    assert main(argv) == 2
    line = one_error(capsys)
    assert line.startswith(f"recipe-sync: error: --config-key: unknown master-config key '{typo}'")
    assert f"did you mean '{SEED_CONFIG_KEY}'" in line


@pytest.mark.parametrize(
    ("argv", "usage", "hint"),
    [
        (["audit", "--bench-repo", "b", "--recipes", "r", "--formt", "md"], "audit",
         "unrecognized arguments: --formt md (did you mean '--format'?)"),
        (["audti"], "", "invalid choice: 'audti' (did you mean 'audit'?)"),
        (["audit", "--bench-repo", "b", "--recipes", "r", "--format", "mdd"], "audit",
         "invalid choice: 'mdd' (did you mean 'md'?)"),
        (["serve", "--log-level", "inf"], "serve", "invalid choice: 'inf' (did you mean 'info'?)"),
    ],
)  # fmt: skip
def test_argparse_errors_use_the_same_did_you_mean_and_the_subcommand_usage(
    capsys: pytest.CaptureFixture[str], argv: list[str], usage: str, hint: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: recipe-sync {usage}".rstrip() + " ")
    assert err.rstrip().endswith(hint)


def test_the_replays_and_audit_take_the_same_options_with_the_same_defaults() -> None:
    common = ["--bench-repo", "b", "--recipes", "r"]
    shared = ("bench_ref", "bench_name", "recipes_ref", "recipes_name", "jobs", "format", "out")
    parsed = {
        c: vars(build_parser().parse_args([c, *common])) for c in ("audit", "backtest", "score")
    }
    for command, values in parsed.items():
        assert {k: values[k] for k in shared} == {k: parsed["audit"][k] for k in shared}, command
    assert parsed["backtest"]["jobs"] == 0


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_off_a_terminal_is_a_plain_line_every_few_seconds() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress(stream, "backtest", "PRs", clock=clock)
    progress.start(100)
    for done in range(1, 100):
        clock.now = done * 0.5  # one PR every half second
        progress.reach(done, 100, f"#{done} no vLLM change")
    progress.reach(100, 100, "#100 alignment PR")
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert len(lines) == 9  # every 5 s of a 50 s run, not at the end (the summary says it)
    assert lines[0] == "backtest: 10/100 PRs, 5 s; last #10 no vLLM change"


def test_progress_on_a_terminal_is_one_bar_redrawn() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    progress = Progress(stream, "audit", "launch lines")
    progress.start(4)
    for _ in range(4):
        progress.advance(1, "acme-fp8-mi355x-vllm")
    progress.finish()
    assert "\raudit [##############################] 4/4 launch lines" in stream.getvalue()
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\n") == 1


def test_backtest_off_a_terminal_reports_progress(
    history: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import bot.commands.progress as progress

    monkeypatch.setattr(progress, "PLAIN_EVERY", -1.0)  # every row, for the test
    bench, recipes = history
    for number in (6, 7):
        git(bench, "commit", "-q", "--allow-empty", "-m", f"Tune (#{number})")
    argv = ["backtest", "--bench-repo", str(bench), "--recipes", str(recipes), "--jobs", "1"]
    main(argv)
    err = capsys.readouterr().err
    assert "backtest: 1/2 PRs, " in err and "; last #6 no vLLM change" in err
