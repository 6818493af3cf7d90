"""Which benchmark PR introduced a counted difference (git history of the line that spells
it), and the one ``recipe-sync align`` command that fixes a drifted entry."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from bot.audit import AuditReport, AuditRow, FlagRow, render_html, render_markdown
from bot.audit.actions import fix_for
from bot.audit.introduced import LineHistory, pr_of, sites
from bot.audit.model import Introduced
from bot.service.dashboard_issue import dashboard_body

SCRIPT = "benchmarks/run.sh"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, check=True, text=True
    )
    return done.stdout.strip()


def commit(repo: Path, text: str, subject: str, when: int) -> str:
    (repo / SCRIPT).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    stamp = f"{when} +0000"
    subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "-m", subject],
        check=True,
        env={
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_DATE": stamp,
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@example.com",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@example.com",
            "PATH": "/usr/bin:/bin",
        },
    )
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Three PRs: the script (#10), a new MoE backend and spec config (#12), a comment (#13)."""
    repo = tmp_path / "bench"
    (repo / "benchmarks").mkdir(parents=True)
    git(repo, "init", "-q")
    first = (
        "export VLLM_X=1\n"
        'SPEC=\'{"method":"mtp"}\'\n'
        "vllm serve m \\\n"
        "  --moe-backend triton \\\n"
        '  --speculative-config "$SPEC"\n'
    )
    shas = {"10": commit(repo, first, "Add the script (#10)", 1_700_000_000)}
    second = first.replace("triton", "aiter").replace("mtp", "eagle")
    shas["12"] = commit(repo, second, "Retune the backend (#12)", 1_700_100_000)
    shas["13"] = commit(repo, "# tuned\n" + second, "Say why (#13)", 1_700_200_000)
    return repo, shas


def flag(kind: str, name: str, bench: str, at: str) -> FlagRow:
    return FlagRow(kind, name, bench, "x", "differs", "differs", True, "kernel", bench_at=at)


def test_pr_of_reads_squash_and_merge_subjects() -> None:
    assert pr_of("Retune the backend (#12)") == 12
    assert pr_of("Merge pull request #7 from a/b") == 7
    assert pr_of("(#3) is not at the end") is None


def test_the_newest_change_of_the_line_or_its_variable_introduced_the_value(
    history: tuple[Path, dict[str, str]],
) -> None:
    repo, shas = history
    lines = (repo / SCRIPT).read_text().splitlines()
    lines_at = LineHistory.at(repo, shas["13"])
    # the flag moved one line down in #13 (a comment above it): still #12's value
    moe = lines_at.introduced(
        sites(flag("flag", "--moe-backend", "aiter", f"{SCRIPT}:5"), lines, "")
    )
    assert moe is not None and (moe.pr, moe.commit) == (12, shas["12"])
    # the flag's line is #10's, the variable it reads was changed by #12
    spec = flag("flag", "--speculative-config", '{"method":"eagle"}', f"{SCRIPT}:6")
    found = sites(spec, lines, "")
    assert found == (f"{SCRIPT}:6", f"{SCRIPT}:3")
    intro = lines_at.introduced(found)
    assert intro is not None and intro.pr == 12 and intro.at == f"{SCRIPT}:3"
    # an env var: its assignment line (never changed after #10)
    env = flag("env", "VLLM_X", "1", f"{SCRIPT}:4")
    assert sites(env, lines, "") == (f"{SCRIPT}:2",)
    found_env = lines_at.introduced(sites(env, lines, ""))
    assert found_env is not None and found_env.pr == 10
    # a value only the recipe has is spelled nowhere in the benchmark
    assert sites(flag("flag", "--x", "", f"{SCRIPT}:4"), lines, "") == ()
    # an unreadable history leaves it unknown instead of failing
    assert LineHistory.at(repo, "0" * 40).introduced((f"{SCRIPT}:5",)) is None


def report_with(*flags: FlagRow, **extra: str) -> AuditReport:
    row = AuditRow(
        config_key="acme-fp8-mi355x-vllm",
        config_file="configs/amd-master.yaml",
        config_line=3,
        model="acme/Acme-7B",
        runner="mi355x",
        hardware="mi355x",
        image="img",
        point=None,
        arm="throughput",
        status="drifted",
        flags=flags,
        recipe_file="models/acme/Acme-7B.yaml",
    )
    fields: dict[str, str] = {"bench_commit": "c" * 40, **extra}
    return AuditReport("bench@ccc", "recipes", (row,), **fields)  # type: ignore[arg-type]


OLD = Introduced("a" * 40, "Add the script (#10)", 10, f"{SCRIPT}:4", 1)
NEW = Introduced("b" * 40, "Retune (#12)", 12, f"{SCRIPT}:5", 2)


def drifted(name: str, intro: Introduced | None, bench: str = "1") -> FlagRow:
    return FlagRow("flag", name, bench, "2", "differs", "r", True, "kernel", introduced=intro)


def test_fix_command_spans_from_the_oldest_introduction_to_the_audited_commit() -> None:
    report = report_with(
        bench_path="../ix",
        recipes_path="../recipes",
        bench_name="acme/bench",
        recipes_name="acme/recipes",
    )
    fix = fix_for(report, "acme-fp8-mi355x-vllm", (drifted("--a", NEW), drifted("--b", OLD)))
    words = shlex.split(fix.command)
    assert words[:2] == ["recipe-sync", "align"]
    options = dict(zip(words[2::2], words[3::2], strict=True))
    assert options["--bench-repo"] == "../ix" and options["--recipes"] == "../recipes"
    assert options["--bench-ref"] == "c" * 12
    assert options["--bench-base"] == "a" * 12 + "^"  # before the oldest (#10)
    assert options["--config-key"] == "acme-fp8-mi355x-vllm"
    assert "--bench-pr" not in options  # two PRs: the range is not one PR
    assert fix.prs == (10, 12)
    one = fix_for(report, "k", (drifted("--a", NEW),))
    assert "--bench-pr 12" in one.command
    # a difference only the recipe has names no PR and gives no command of its own
    alone = fix_for(report, "k", (drifted("--c", None, bench=""),))
    assert alone.command == "" and alone.recipe_only == ("--c",)


def test_both_reports_link_the_pr_and_give_the_command() -> None:
    flags = (drifted("--moe-backend", NEW), drifted("--only-recipe", None, bench=""))
    report = report_with(*flags, bench_name="acme/bench", recipes_name="acme/recipes")
    command = fix_for(report, "acme-fp8-mi355x-vllm", flags).command
    assert command.startswith("recipe-sync align --bench-repo bench ")
    html = render_html(report)
    assert "href='https://github.com/acme/bench/pull/12'>#12</a>" in html
    assert command.replace("'", "&#x27;") in html
    assert "only the recipe sets --only-recipe" in html
    md = render_markdown(report, safe=True)
    assert "([#12](https://github.com/acme/bench/pull/12))" in md
    assert f"  - fix: `{command}`" in md


def test_the_dashboard_issue_says_what_to_do() -> None:
    flags = (drifted("--moe-backend", NEW),)
    report = report_with(*flags, bench_name="acme/bench", recipes_name="acme/recipes")
    body = dashboard_body(report)
    command = fix_for(report, "acme-fp8-mi355x-vllm", flags).command
    assert "  - introduced by [#12](https://github.com/acme/bench/pull/12)" in body
    assert f"  - fix: `{command}`" in body
