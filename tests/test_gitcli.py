"""bot.gitcli: the one way bot/ runs git, and its one error."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from bot import gitcli
from bot.errors import InputError, RecipeSyncError

BOT = Path(__file__).resolve().parent.parent / "bot"
GIT_MODULE = BOT / "gitcli.py"


PROCESS_STARTERS = {"run", "Popen", "call", "check_call", "check_output", "getoutput",
                    "getstatusoutput", "system", "popen"}  # fmt: skip


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _git_calls(source: str, name: str) -> list[str]:
    """Where ``source`` starts git itself or imports GitPython (``name:line what``)."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
        else:
            modules = []
        found += [f"{where} imports {m}" for m in modules if m.split(".")[0] in ("git", "gitdb")]
        # an argument list starting with "git": ["git", ...], ("git", ...)
        if isinstance(node, ast.List | ast.Tuple) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and first.value == "git":
                found.append(f"{where} builds a git command line")
        # a shell line: os.system("git ..."), subprocess.run("git ...", shell=True)
        if isinstance(node, ast.Call) and node.args and _called(node) in PROCESS_STARTERS:
            first = node.args[0]
            head = first.value if isinstance(first, ast.Constant) else None
            if isinstance(first, ast.JoinedStr) and first.values:  # its first literal part
                part = first.values[0]
                head = part.value if isinstance(part, ast.Constant) else None
            if isinstance(head, str) and head.startswith("git "):
                found.append(f"{where} runs a git shell line")
    return found


def test_only_gitcli_runs_git() -> None:
    offenders = [
        hit
        for path in sorted(BOT.rglob("*.py"))
        if path != GIT_MODULE
        for hit in _git_calls(path.read_text(encoding="utf-8"), str(path.relative_to(BOT.parent)))
    ]
    assert not offenders, "git outside bot/gitcli.py:\n" + "\n".join(offenders)


def test_the_guard_sees_both_stacks() -> None:
    probe = (
        "import subprocess, os\nimport git\nfrom gitdb.base import IStream\n"
        "subprocess.run(['git', 'status'])\nos.system('git status')\n"
        "subprocess.run(f'git log {x}', shell=True)\nsubprocess.run(['node', 'x.js'])\n"
        "raise ValueError(f'git push {x}: refused')\n"
    )
    hits = [hit.split(" ", 1)[1] for hit in _git_calls(probe, "probe.py")]
    assert sorted(hits) == sorted(
        [
            "imports git",
            "imports gitdb.base",
            "builds a git command line",
            "runs a git shell line",
            "runs a git shell line",
        ]
    )


def test_gitpython_is_not_a_dependency() -> None:
    pyproject = (BOT.parent / "pyproject.toml").read_text(encoding="utf-8").lower()
    assert "gitpython" not in pyproject


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    gitcli.run(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("hello\n")
    gitcli.run(repo, "add", "a.txt")
    identity = {"user.name": "t", "user.email": "t@example.com", "commit.gpgsign": "false"}
    gitcli.run(repo, "commit", "-q", "-m", "one", config=identity)
    return repo


def test_a_failing_command_is_one_line_naming_command_and_repository(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with pytest.raises(gitcli.GitError) as raised:
        gitcli.run(repo, "rev-parse", "--verify", "no-such-branch")
    err = raised.value
    assert not isinstance(err, subprocess.CalledProcessError)
    assert not isinstance(err, RecipeSyncError)  # the service retries it (not the PR's fault)
    text = str(err)
    assert "\n" not in text
    assert text.startswith(f"{repo}: git rev-parse --verify no-such-branch failed: ")
    assert "fatal" in text and err.returncode == 128 and "fatal" in err.stderr
    as_input = err.as_input()  # how the reading layers report it: the same line
    assert isinstance(as_input, InputError) and str(as_input) == text


def test_the_cli_prints_a_git_failure_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.commands.main import main

    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))  # git cannot start
    status = main(["fixtures", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.startswith("recipe-sync: error: ") and "git init" in err
    assert "could not start" in err and len(err.strip().splitlines()) == 1


def test_not_a_repository_and_no_repository(tmp_path: Path) -> None:
    with pytest.raises(gitcli.GitError, match=rf"^{tmp_path}: git log failed: .*not a git"):
        gitcli.run(tmp_path, "log")
    with pytest.raises(gitcli.GitError, match=r"^git: git check-ref-format --branch a..b failed"):
        gitcli.run(None, "check-ref-format", "--branch", "a..b")


def test_secrets_are_masked_and_config_is_not_named(tmp_path: Path) -> None:
    with pytest.raises(gitcli.GitError) as raised:
        gitcli.run(tmp_path, "log", "s3cret", config={"user.name": "x"}, secrets=["s3cret"])
    assert "s3cret" not in raised.value.stderr
    assert "user.name" not in str(raised.value)


def test_text_and_cat_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    head = gitcli.text(repo, "rev-parse", "HEAD").strip()
    assert len(head) == 40
    batch = gitcli.CatFile(repo)
    try:
        assert batch.read(f"{head}:a.txt") == b"hello\n"
        assert batch.read(f"{head}:missing.txt") is None
        assert batch.read("0" * 40) is None
        assert batch.read("HEAD:a.txt") == b"hello\n"  # still answering after a miss
    finally:
        batch.close()
