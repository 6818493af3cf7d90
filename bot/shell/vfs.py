"""The files a script sees, behind one protocol (in the spirit of mvdan/sh's ``OpenHandler``
and ``StatHandler``): the repository, read only and never outside it, under the files the
script "wrote" in memory. Nothing is ever written to disk, no symlink is followed."""

from __future__ import annotations

import posixpath

from bot.errors import InputError
from bot.shell.host import Host
from bot.shell.result import SourceSpan
from bot.shell.text import (
    Text,
    opaque,
)
from bot.shell.usage import data_read
from bot.sources import FileSource, is_symlink


class VirtualFiles:
    """:class:`~bot.shell.protocols.Files` over the repository (a
    :class:`~bot.sources.FileSource`, read only, mounted at ``workdir``) under the current
    state's in-memory files."""

    def __init__(self, ev: Host, source: FileSource, workdir: str | None) -> None:
        self.ev = ev
        self.source = source
        self.workdir = workdir.rstrip("/") if workdir else None

    def repo_path(self, path: Text) -> str | None:
        """Repository-relative path for ``path`` if it lies inside the repository."""
        if not path.known or not path.s or "\x00" in path.s:
            return None
        raw = path.s
        if raw.startswith("/"):
            if self.workdir is None or not (raw + "/").startswith(self.workdir + "/"):
                return None
            raw = raw[len(self.workdir) :].lstrip("/")
        elif self.ev.st.cwd is None:
            return None
        else:
            raw = posixpath.join(self.ev.st.cwd, raw)
        normal = posixpath.normpath(raw)
        if normal.startswith("..") or normal.startswith("/"):
            return None
        return "" if normal == "." else normal

    def fs_key(self, path: str) -> str:
        if path.startswith("/"):
            return posixpath.normpath(path)
        base = self.ev.st.cwd if self.ev.st.cwd is not None else "<cwd>"
        return posixpath.normpath(posixpath.join(base, path))

    def write_file(self, path: str, content: Text, *, append: bool) -> None:
        key = self.fs_key(path)
        if append and key in self.ev.st.fs.files:
            content = self.ev.st.fs.files[key] + content
        self.ev.budget.check_string(len(content.s), self.ev.script, None)
        self.ev.st.fs.files[key] = content
        self.ev.st.fs.dirs.add(posixpath.dirname(key))

    def read_file(self, path: Text, span: SourceSpan) -> Text | None:
        """Contents of a file the script wrote, or of a repository file; None when unknown."""
        if not path.known:
            return opaque(
                "file",
                "command-output",
                self.ev.unresolved(span, "file contents", "the file name is not known"),
            )
        key = self.fs_key(path.s)
        if key in self.ev.st.fs.files:
            return self.ev.st.fs.files[key]
        repo = self.repo_path(path)
        if repo is not None and is_symlink(self.source, repo):
            item = self.ev.unresolved(span, f"contents of {path.s}", "symlink not followed")
            return opaque("file", "command-output", item)
        if repo is not None and self.source.exists(repo):
            try:
                data_read(repo)  # every byte of it counts, a library's too
                data = self.source.read_bytes(repo)
            except (InputError, OSError) as err:
                reason = getattr(err, "reason", None) or "file could not be read"
                item = self.ev.unresolved(span, f"contents of {path.s}", f"not read: {reason}")
                return opaque("file", "command-output", item)
            return Text.lit(data.decode("utf-8", "replace"))
        reason = "file outside the repository, not read"
        if repo is not None:
            reason = "file does not exist in the repository"
        item = self.ev.unresolved(span, f"contents of {path.s}", reason)
        return opaque("file", "command-output", item)

    def file_test(self, op: str, path: Text, span: SourceSpan) -> bool | None:
        if not path.known:
            return None
        key = self.fs_key(path.s)
        fs = self.ev.st.fs
        if op in ("-f", "-e", "-s", "-r") and key in fs.files:
            return True if op != "-s" else bool(fs.files[key].s)
        if op in ("-d", "-e") and key in fs.dirs:
            return True
        repo = self.repo_path(path)
        if repo == "":
            return op in ("-d", "-e", "-r")  # the repository root
        if repo is not None:
            if op in ("-f", "-e", "-r", "-s") and self.source.exists(repo):
                return True
            if op in ("-d", "-e") and any(True for _ in self.source.iter_files(repo)):
                return True
            if op in ("-f", "-d", "-e"):
                return False
        return None
