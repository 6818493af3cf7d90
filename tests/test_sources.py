from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.errors import InputError
from bot.sources import DirectorySource, GitTreeSource, git_blob_sha


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "x.sh").write_text("echo hi\n")
    (root / "top.yaml").write_text("k: v\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (root / "top.yaml").write_text("k: w\n")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
    return root


def test_directory_and_git_sources_agree(repo: Path) -> None:
    head = GitTreeSource(repo, "HEAD")
    first = GitTreeSource(repo, "HEAD~1")
    folder = DirectorySource(repo)
    assert list(head.iter_files()) == ["a/b/x.sh", "top.yaml"]
    assert list(folder.iter_files()) == ["a/b/x.sh", "top.yaml"]
    assert list(head.iter_files("a")) == ["a/b/x.sh"]
    assert first.read_bytes("top.yaml") == b"k: v\n"
    assert head.read_bytes("top.yaml") == folder.read_bytes("top.yaml") == b"k: w\n"
    expected = _git(repo, "hash-object", "a/b/x.sh")
    assert head.blob_sha("a/b/x.sh") == folder.blob_sha("a/b/x.sh") == expected
    assert git_blob_sha(b"echo hi\n") == expected
    assert head.exists("a/b/x.sh") and not head.exists("a/b/missing.sh")


def test_paths_cannot_escape(repo: Path) -> None:
    for source in (DirectorySource(repo), GitTreeSource(repo, "HEAD")):
        with pytest.raises(InputError):
            source.read_bytes("../etc/passwd")
        with pytest.raises(InputError, match="does not exist"):
            source.read_bytes("nope.txt")


def test_bad_ref_is_an_input_error(repo: Path) -> None:
    with pytest.raises(InputError, match="cannot resolve git ref 'no-such-branch'"):
        GitTreeSource(repo, "no-such-branch")


def test_open_source_picks_a_commit_or_the_directory(repo: Path) -> None:
    from bot.sources import open_source

    assert open_source(repo, "HEAD~1").read_bytes("top.yaml") == b"k: v\n"
    assert isinstance(open_source(repo), DirectorySource)
    assert open_source(repo).read_bytes("top.yaml") == b"k: w\n"
