"""Read-only views of a repository's files: a directory, or a git tree at a ref.

Benchmark and recipes repos are always read through a :class:`FileSource`, so the same code
reads a working directory (CLI) or a commit of a bare repository (the App reads the PR head
without checking anything out, let alone running it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Protocol

from bot.errors import InputError, Location

if TYPE_CHECKING:  # GitPython is imported where a git tree is read (~0.3 s of start-up)
    import git

MAX_FILE_BYTES = 4 * 1024 * 1024  # larger files are refused, never read whole


class FileSource(Protocol):
    """Files addressed by POSIX paths relative to the repository root."""

    label: str  # for messages: a directory path or "<repo>@<sha>"

    def read_bytes(self, path: str) -> bytes: ...
    def exists(self, path: str) -> bool: ...
    def iter_files(self, directory: str = "") -> Iterator[str]: ...
    def blob_sha(self, path: str) -> str: ...


def git_blob_sha(data: bytes) -> str:
    """The SHA-1 git gives a blob with this content (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def read_text(source: FileSource, path: str) -> str:
    try:
        return source.read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(Location(f"{source.label}:{path}"), "file is not UTF-8") from err


def _clean(path: str) -> str:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts:
        raise InputError(Location(path), "path must be relative and stay inside the repository")
    return str(pure) if str(pure) != "." else ""


@dataclass
class DirectorySource:
    root: Path
    label: str = ""

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.label = self.label or str(self.root)
        if not self.root.is_dir():
            raise InputError(Location(str(self.root)), "directory does not exist")

    def _path(self, path: str) -> Path:
        full = (self.root / _clean(path)).resolve()
        if not full.is_relative_to(self.root):  # a symlink pointing outside
            raise InputError(Location(f"{self.label}:{path}"), "path leaves the repository")
        return full

    def read_bytes(self, path: str) -> bytes:
        full = self._path(path)
        if not full.is_file():
            raise InputError(Location(f"{self.label}:{path}"), "file does not exist")
        if full.stat().st_size > MAX_FILE_BYTES:
            raise InputError(Location(f"{self.label}:{path}"), "file is too large to read")
        return full.read_bytes()

    def exists(self, path: str) -> bool:
        try:
            return self._path(path).is_file()
        except InputError:
            return False

    def iter_files(self, directory: str = "") -> Iterator[str]:
        base = self._path(directory)
        if not base.is_dir():
            return
        for item in sorted(base.rglob("*")):
            if item.is_file() and not item.is_symlink() and ".git" not in item.parts:
                yield item.relative_to(self.root).as_posix()

    def blob_sha(self, path: str) -> str:
        return git_blob_sha(self.read_bytes(path))


@dataclass
class GitTreeSource:
    """Files of ``ref`` in the git repository at ``repo_path`` (bare or not), no checkout."""

    repo_path: Path
    ref: str
    label: str = ""
    _tree: git.Tree = field(init=False, repr=False)
    commit_sha: str = field(init=False)

    def __post_init__(self) -> None:
        import git
        import gitdb.exc

        try:
            repo = git.Repo(self.repo_path)
            commit = repo.commit(self.ref)
        except (git.exc.GitError, gitdb.exc.ODBError, ValueError) as err:
            raise InputError(
                Location(str(self.repo_path)), f"cannot resolve git ref '{self.ref}': {err}"
            ) from err
        self._tree = commit.tree
        self.commit_sha = commit.hexsha
        self.label = self.label or f"{self.repo_path}@{self.commit_sha[:12]}"

    def _blob(self, path: str) -> git.Blob | None:
        import git

        try:
            item = self._tree / _clean(path)
        except KeyError:
            return None
        # mode 0o120000 is a symlink: never followed
        if isinstance(item, git.Blob) and item.mode != 0o120000:
            return item
        return None

    def read_bytes(self, path: str) -> bytes:
        blob = self._blob(path)
        if blob is None:
            raise InputError(Location(f"{self.label}:{path}"), "file does not exist")
        if blob.size > MAX_FILE_BYTES:
            raise InputError(Location(f"{self.label}:{path}"), "file is too large to read")
        data: bytes = blob.data_stream.read()
        return data

    def exists(self, path: str) -> bool:
        return self._blob(path) is not None

    def iter_files(self, directory: str = "") -> Iterator[str]:
        import git

        clean = _clean(directory)
        try:
            tree = self._tree / clean if clean else self._tree
        except KeyError:
            return
        if not isinstance(tree, git.Tree):
            return
        paths = [
            str(item.path)
            for item in tree.traverse()
            if isinstance(item, git.Blob) and item.mode != 0o120000
        ]
        yield from sorted(paths)

    def blob_sha(self, path: str) -> str:
        blob = self._blob(path)
        if blob is None:
            raise InputError(Location(f"{self.label}:{path}"), "file does not exist")
        sha: str = blob.hexsha
        return sha


def open_source(path: Path, ref: str | None = None) -> FileSource:
    """The files of ``ref`` in the git repository at ``path``, or the directory itself."""
    if ref:
        return GitTreeSource(path, ref)
    return DirectorySource(path)


def git_blob_sha_at(repo_path: Path) -> Callable[[str, str], str | None]:
    """``blob_sha_at(commit, path)`` over a local git repository; None when either is absent."""
    trees: dict[str, GitTreeSource | None] = {}

    def blob_sha_at(commit: str, path: str) -> str | None:
        if commit not in trees:
            try:
                trees[commit] = GitTreeSource(repo_path, commit)
            except InputError:
                trees[commit] = None
        tree = trees[commit]
        if tree is None or not tree.exists(path):
            return None
        return tree.blob_sha(path)

    return blob_sha_at


@dataclass
class WithoutFiles:
    """A view of ``inner`` without some files (e.g. recipes that do not load)."""

    inner: FileSource
    hidden: Mapping[str, str]
    label: str = ""

    def __post_init__(self) -> None:
        self.label = self.inner.label

    def read_bytes(self, path: str) -> bytes:
        if path in self.hidden:
            raise InputError(Location(f"{self.label}:{path}"), "file does not exist")
        return self.inner.read_bytes(path)

    def exists(self, path: str) -> bool:
        return path not in self.hidden and self.inner.exists(path)

    def iter_files(self, directory: str = "") -> Iterator[str]:
        return (p for p in self.inner.iter_files(directory) if p not in self.hidden)

    def blob_sha(self, path: str) -> str:
        return self.inner.blob_sha(path)
