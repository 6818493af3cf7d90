"""Read-only views of a repository's files: a directory, or a git tree at a ref.

Benchmark and recipes repos are always read through a :class:`FileSource`, so the same code
reads a working directory (CLI) or a commit of a bare repository (the App reads the PR head
without checking anything out, let alone running it).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Protocol

from bot import gitcli
from bot.errors import InputError, Location

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


@lru_cache(maxsize=16_384)
def _clean(path: str) -> str:
    # memoised: script lookup asks about the same few thousand paths hundreds of thousands
    # of times per backtest, and PurePosixPath is the cost (a refused path raises every time)
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

    def is_symlink(self, path: str) -> bool:
        """Whether ``path`` (or a directory on it) is a symbolic link inside the root."""
        try:
            parts = _clean(path).split("/")
        except InputError:
            return False
        current = self.root
        for part in parts:
            current = current / part
            if current.is_symlink():
                return True
        return False

    def link_target(self, path: str) -> str | None:
        """What the symbolic link ``path`` points to, as written; None when not a link."""
        try:
            link = self.root / _clean(path)
        except InputError:
            return None
        return os.readlink(link) if link.is_symlink() else None

    def iter_files(self, directory: str = "") -> Iterator[str]:
        base = self._path(directory)
        if not base.is_dir():
            return
        for item in sorted(base.rglob("*")):
            if item.is_file() and not item.is_symlink() and ".git" not in item.parts:
                yield item.relative_to(self.root).as_posix()

    def blob_sha(self, path: str) -> str:
        return git_blob_sha(self.read_bytes(path))


class _GitObjects:
    """One repository's objects read through ``git`` itself: a commit's whole tree listed once
    (``git ls-tree -r``) and blobs through one long-lived ``git cat-file --batch``. Trees and
    blobs are kept by object id (immutable), so consecutive commits, which share most of their
    files, are read once; far cheaper than walking trees object by object."""

    TREES = 64  # listed trees kept (a backtest alternates base and head of neighbouring PRs)
    BLOB_BYTES = 96 * 1024 * 1024  # blob contents kept, by total size

    def __init__(self, repo_path: Path) -> None:
        self.repo_path = repo_path
        self._trees: OrderedDict[str, dict[str, tuple[str, str, int]]] = OrderedDict()
        self._blobs: OrderedDict[str, bytes] = OrderedDict()
        self._blob_bytes = 0
        self._batch = gitcli.CatFile(repo_path)
        self._lock = threading.Lock()  # the service reads from worker threads

    def _git(self, *args: str) -> bytes:
        return gitcli.run(self.repo_path, *args, timeout=300)

    def commit(self, ref: str) -> str:
        return self._git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()

    def tree(self, commit: str) -> dict[str, tuple[str, str, int]]:
        """path → (mode, blob sha, size) of every blob of ``commit``, symlinks included (mode
        ``120000``: the caller never follows them); no submodules."""
        with self._lock:
            return self._tree(commit)

    def _tree(self, commit: str) -> dict[str, tuple[str, str, int]]:
        found = self._trees.get(commit)
        if found is not None:
            self._trees.move_to_end(commit)
            return found
        out = self._git("ls-tree", "-r", "-l", "-z", "--full-tree", commit)
        found = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, kind, sha, size = meta.split()
            if kind != b"blob":
                continue
            found[path.decode("utf-8", "surrogateescape")] = (
                mode.decode(),
                sha.decode(),
                int(size),
            )
        self._trees[commit] = found
        while len(self._trees) > self.TREES:
            self._trees.popitem(last=False)
        return found

    def blob(self, sha: str) -> bytes:
        with self._lock:
            return self._blob(sha)

    def _blob(self, sha: str) -> bytes:
        data = self._blobs.get(sha)
        if data is not None:
            self._blobs.move_to_end(sha)
            return data
        data = self._read(sha)
        self._blobs[sha] = data
        self._blob_bytes += len(data)
        while self._blob_bytes > self.BLOB_BYTES and len(self._blobs) > 1:
            _, dropped = self._blobs.popitem(last=False)
            self._blob_bytes -= len(dropped)
        return data

    def _read(self, sha: str) -> bytes:
        data = self._batch.read(sha)
        if data is None:
            raise InputError(Location(str(self.repo_path)), f"git object {sha} is missing")
        return data


_OBJECTS: dict[tuple[int, Path], _GitObjects] = {}


def _objects(repo_path: Path) -> _GitObjects:
    """The process's reader of ``repo_path`` (per process: a forked worker opens its own)."""
    key = (os.getpid(), repo_path.resolve())
    found = _OBJECTS.get(key)
    if found is None:
        found = _OBJECTS[key] = _GitObjects(repo_path)
    return found


SYMLINK_MODE = "120000"


@dataclass
class GitTreeSource:
    """Files of ``ref`` in the git repository at ``repo_path`` (bare or not), no checkout."""

    repo_path: Path
    ref: str
    label: str = ""
    _files: dict[str, tuple[str, str, int]] = field(init=False, repr=False)
    _links: dict[str, str] = field(init=False, repr=False)  # path → blob of the target
    commit_sha: str = field(init=False)

    def __post_init__(self) -> None:
        objects = _objects(Path(self.repo_path))
        try:
            self.commit_sha = objects.commit(self.ref)
            if not self.commit_sha:
                raise ValueError("not a commit")
            blobs = objects.tree(self.commit_sha)
            # a symlink is not a file here, only reported as a link (the shell never follows
            # it); script lookup resolves links inside the repository (resolve_link)
            self._files = {p: v for p, v in blobs.items() if v[0] != SYMLINK_MODE}
            self._links = {p: v[1] for p, v in blobs.items() if v[0] == SYMLINK_MODE}
        except (OSError, ValueError, gitcli.GitError) as err:
            stderr = err.stderr if isinstance(err, gitcli.GitError) else ""
            # a failed rev-parse --quiet says nothing on stderr: its error names the command
            # line, which names nothing the user typed
            why = stderr.strip() or "no such commit, branch or tag"
            raise InputError(
                Location(str(self.repo_path)), f"cannot resolve git ref '{self.ref}': {why}"
            ) from err
        self._objects = objects
        self.label = self.label or f"{self.repo_path}@{self.commit_sha[:12]}"

    def read_bytes(self, path: str) -> bytes:
        found = self._files.get(_clean(path))
        if found is None:
            raise InputError(Location(f"{self.label}:{path}"), "file does not exist")
        if found[2] > MAX_FILE_BYTES:
            raise InputError(Location(f"{self.label}:{path}"), "file is too large to read")
        return self._objects.blob(found[1])

    def exists(self, path: str) -> bool:
        try:
            return _clean(path) in self._files
        except InputError:
            return False

    def is_symlink(self, path: str) -> bool:
        try:
            return _clean(path) in self._links
        except InputError:
            return False

    def link_target(self, path: str) -> str | None:
        """What the symbolic link ``path`` points to, as written (its blob); None when not a
        link."""
        try:
            sha = self._links.get(_clean(path))
        except InputError:
            return None
        if sha is None:
            return None
        return self._objects.blob(sha)[:4096].decode("utf-8", "surrogateescape")

    def iter_files(self, directory: str = "") -> Iterator[str]:
        clean = _clean(directory)
        prefix = clean + "/" if clean else ""
        yield from sorted(p for p in self._files if p.startswith(prefix))

    def blob_sha(self, path: str) -> str:
        found = self._files.get(_clean(path))
        if found is None:
            raise InputError(Location(f"{self.label}:{path}"), "file does not exist")
        return found[1]


MAX_LINK_HOPS = 8


def is_symlink(source: FileSource, path: str) -> bool:
    """Whether ``path`` is a symbolic link in ``source`` (sources without links: never)."""
    probe = getattr(source, "is_symlink", None)
    return bool(probe(path)) if callable(probe) else False


def resolve_link(source: FileSource, path: str) -> str:
    """The repository file the symbolic link ``path`` leads to (through at most
    :data:`MAX_LINK_HOPS` links), so that it is read like any file: statically, as data.
    A link leaving the repository (absolute, or ``..`` above the root), dangling or looping
    is an :class:`InputError` naming the link: its target is never read."""
    probe = getattr(source, "link_target", None)
    current = path
    for _ in range(MAX_LINK_HOPS):
        raw = probe(current) if callable(probe) else None
        if raw is None:
            if not source.exists(current):
                raise InputError(
                    Location(f"{source.label}:{path}"),
                    f"symbolic link to {current}, which does not exist in the repository",
                )
            return current
        target = posixpath.normpath(posixpath.join(posixpath.dirname(current), raw))
        if posixpath.isabs(raw) or target == ".." or target.startswith("../"):
            raise InputError(
                Location(f"{source.label}:{path}"),
                f"symbolic link to {raw}, outside the repository: refused (never read)",
            )
        current = target
    raise InputError(
        Location(f"{source.label}:{path}"), f"more than {MAX_LINK_HOPS} symbolic links deep"
    )


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

    def link_target(self, path: str) -> str | None:
        probe = getattr(self.inner, "link_target", None)
        return probe(path) if callable(probe) else None


ReadKey = tuple[str, str]  # ("file" | "dir" | "link" | "target", path)


def file_state(source: FileSource, key: ReadKey) -> object:
    """What an evaluation could have learnt about one path: a file's blob SHA (None when it
    does not exist), a directory's listing, whether a path is a symbolic link."""
    kind, path = key
    if kind == "dir":
        return tuple(source.iter_files(path))
    if kind == "link":
        probe = getattr(source, "is_symlink", None)
        return bool(probe(path)) if callable(probe) else False
    if kind == "target":
        target = getattr(source, "link_target", None)
        return target(path) if callable(target) else None
    if not source.exists(path):
        return None
    try:
        return source.blob_sha(path)
    except InputError as err:  # too large, or a link leaving the repository
        return f"unreadable: {err.reason}"


@dataclass
class RecordingSource:
    """A view of ``inner`` that records every path asked about (its read-set) with the state
    found (:func:`file_state`), so a result computed from it can be reused for another source
    only where every recorded path is in the same state."""

    inner: FileSource
    label: str = ""
    seen: dict[ReadKey, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.label = self.inner.label

    def note(self, path: str) -> None:
        key = ("file", path)
        if key not in self.seen:
            self.seen[key] = file_state(self.inner, key)

    def read_bytes(self, path: str) -> bytes:
        self.note(path)
        return self.inner.read_bytes(path)

    def exists(self, path: str) -> bool:
        self.note(path)
        return self.inner.exists(path)

    def is_symlink(self, path: str) -> bool:
        key = ("link", path)
        found = self.seen[key] = file_state(self.inner, key)
        return bool(found)

    def link_target(self, path: str) -> str | None:
        key = ("target", path)
        found = self.seen[key] = file_state(self.inner, key)
        return found if isinstance(found, str) else None

    def iter_files(self, directory: str = "") -> Iterator[str]:
        key = ("dir", directory)
        listing = file_state(self.inner, key)
        self.seen[key] = listing
        assert isinstance(listing, tuple)
        return iter(listing)

    def blob_sha(self, path: str) -> str:
        self.note(path)
        return self.inner.blob_sha(path)


# a PR branch is compared with the first of these it is ahead of
MERGE_BASE_BRANCHES = ("main", "master", "origin/main", "origin/master")


def merge_base(repo_path: Path, ref: str) -> str:
    """Where ``ref`` left the first default branch it is ahead of (a PR's base)."""
    try:
        head = _commit_of(repo_path, ref)
    except gitcli.GitError as err:
        raise InputError(
            Location(str(repo_path)), f"cannot resolve git ref '{ref}': {err.detail}"
        ) from err
    for branch in MERGE_BASE_BRANCHES:
        try:
            base = gitcli.text(repo_path, "merge-base", head, _commit_of(repo_path, branch))
        except gitcli.GitError:
            continue
        base = base.strip()
        if base and base != head:
            return base
    raise InputError(
        Location(str(repo_path)),
        f"no base for '{ref}': it is not ahead of a default branch; pass --bench-base REF "
        "or --config-key KEY",
    )


def _commit_of(repo_path: Path, ref: str) -> str:
    out = gitcli.text(repo_path, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
    return out.strip()
