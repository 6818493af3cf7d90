"""A repository view with some files replaced: the recipes tree as it is after an edit."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from bot.sources import FileSource, git_blob_sha


@dataclass
class OverlaySource:
    """``base`` with ``files`` (path → new bytes) written over it (never on disk)."""

    base: FileSource
    files: Mapping[str, bytes]
    label: str = field(default="")

    def __post_init__(self) -> None:
        self.label = self.label or f"{self.base.label} (edited)"

    def read_bytes(self, path: str) -> bytes:
        if path in self.files:
            return self.files[path]
        return self.base.read_bytes(path)

    def exists(self, path: str) -> bool:
        return path in self.files or self.base.exists(path)

    def iter_files(self, directory: str = "") -> Iterator[str]:
        prefix = directory.rstrip("/") + "/" if directory else ""
        extra = [p for p in self.files if p.startswith(prefix) and not self.base.exists(p)]
        yield from sorted({*self.base.iter_files(directory), *extra})

    def link_target(self, path: str) -> str | None:
        if path in self.files:
            return None
        probe = getattr(self.base, "link_target", None)
        return probe(path) if callable(probe) else None

    def blob_sha(self, path: str) -> str:
        if path in self.files:
            return git_blob_sha(self.files[path])
        return self.base.blob_sha(path)
