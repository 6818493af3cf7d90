"""Which benchmark PR introduced each counted difference, read from git history.

A drifted value is spelled on one line of the benchmark repository: a ``vllm serve`` flag on
its script line, an environment variable on its assignment, an image on the config key's
``image:`` line. The commit that introduced the value is the newest commit that changed that
line (``git log -L N,N:file``: a later commit would have changed it again), or the line of
the variable assignment it reads (``--speculative-config "$SPEC_CONFIG"``), whichever is
newer. The PR is the number a squash or merge subject names (``… (#2259)``, ``Merge pull
request #N``). Nothing of the repository is run: ``git log`` reads its objects.

Pure parsing (:func:`pr_of`, :func:`parse_log`, :func:`sites`) is separate from the one
``git`` call per line (:class:`LineHistory`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bot import gitcli
from bot.audit.model import AuditRow, FlagRow, Introduced
from bot.benchmarks import BenchRepo
from bot.digits import is_integer

SQUASH = re.compile(r"\(#(\d+)\)\s*$")
MERGE = re.compile(r"^Merge pull request #(\d+) ")
_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
SEP = "\x1f"
GIT_TIMEOUT = 60  # seconds per line; a history that slow says "unknown" instead


def pr_of(subject: str) -> int | None:
    """The PR a commit subject names: ``Fix x (#12)`` (squash) or ``Merge pull request #12``."""
    found = SQUASH.search(subject) or MERGE.match(subject)
    return int(found.group(1)) if found else None


def parse_log(text: str) -> list[tuple[str, int, str]]:
    """``(sha, committer time, subject)`` of each ``--format=%H<SEP>%ct<SEP>%s`` line."""
    out = []
    for line in text.splitlines():
        parts = line.split(SEP)
        if len(parts) == 3 and is_integer(parts[1]):
            out.append((parts[0], int(parts[1]), parts[2]))
    return out


def assignment_line(lines: Sequence[str], name: str, before: int) -> int | None:
    """1-based line of the last ``[export] NAME=`` above line ``before`` (else anywhere)."""
    pattern = re.compile(rf"^\s*(export\s+)?{re.escape(name)}=")
    found = [n for n, text in enumerate(lines, 1) if pattern.match(text)]
    above = [n for n in found if n < before]
    chosen = above or found
    return chosen[-1] if chosen else None


def sites(flag: FlagRow, lines: Sequence[str] | None, image_at: str) -> tuple[str, ...]:
    """``file:line`` where the benchmark spells ``flag``'s value, first the main one.

    ``lines`` is the text of the file ``flag.bench_at`` names (None when unreadable);
    ``image_at`` the config key's ``image:`` line. A value only the recipe has is spelled
    nowhere: ().
    """
    if not flag.bench:
        return ()
    if flag.kind == "image":
        return (image_at,) if image_at else ()
    file, _, number = flag.bench_at.rpartition(":")
    if not file or not is_integer(number) or lines is None:
        return ()
    line = int(number)
    if flag.kind == "env":
        found = assignment_line(lines, flag.flag, line)
        return (f"{file}:{found}",) if found is not None else ()
    out = [f"{file}:{line}"]
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    for name in dict.fromkeys(_VAR.findall(text)):  # the variables the flag's value reads
        found = assignment_line(lines, name, line)
        if found is not None:
            out.append(f"{file}:{found}")
    return tuple(out)


@dataclass
class LineHistory:
    """The newest commit that changed a line, read with ``git log -L`` (cached per line)."""

    repo: Path
    commit: str
    _seen: dict[str, tuple[str, int, str] | None]

    @classmethod
    def at(cls, repo: Path, commit: str) -> LineHistory:
        return cls(repo, commit, {})

    def last_change(self, at: str) -> tuple[str, int, str] | None:
        if at not in self._seen:
            file, _, line = at.rpartition(":")
            try:
                out = gitcli.text(
                    self.repo,
                    "log",
                    "-n1",
                    "-s",
                    f"--format=%H{SEP}%ct{SEP}%s",
                    f"-L{line},{line}:{file}",
                    self.commit,
                    timeout=GIT_TIMEOUT,
                )
                found = parse_log(out)
            except gitcli.GitError:
                found = []  # shallow clone, moved file, …: the introduction stays unknown
            self._seen[at] = found[0] if found else None
        return self._seen[at]

    def introduced(self, at: Sequence[str]) -> Introduced | None:
        """The newest change among the lines a value is spelled on."""
        changes = [(c, where) for where in at if (c := self.last_change(where)) is not None]
        if not changes:
            return None
        (sha, time, subject), where = max(changes, key=lambda item: item[0][1])
        return Introduced(commit=sha, subject=subject, pr=pr_of(subject), at=where, time=time)


def _image_line(bench: BenchRepo, key: str) -> str:
    node = bench.configs.get(key)
    line = node.line_at([key, "image"]) if node is not None else None
    return f"{node.file}:{line}" if node is not None and line is not None else ""


def with_introductions(
    rows: Iterable[AuditRow], bench: BenchRepo, history: LineHistory
) -> tuple[AuditRow, ...]:
    """Each counted difference with the commit and PR that introduced it; an env var's and an
    image's ``bench_at`` move to the line that spells them."""
    texts: dict[str, list[str] | None] = {}

    def lines(path: str) -> list[str] | None:
        if path and path not in texts:
            source = bench.source
            texts[path] = (
                source.read_bytes(path).decode("utf-8", "replace").splitlines()
                if source.exists(path)
                else None
            )
        return texts.get(path)

    out: list[AuditRow] = []
    for row in rows:
        if not any(f.drift for f in row.flags):
            out.append(row)
            continue
        flags = []
        for flag in row.flags:
            if flag.drift:
                spelled = lines(flag.bench_at.rpartition(":")[0])  # script or library
                where = sites(flag, spelled, _image_line(bench, row.config_key))
                flag = replace(
                    flag,
                    bench_at=where[0] if where else flag.bench_at,
                    introduced=history.introduced(where) if where else None,
                )
            flags.append(flag)
        out.append(replace(row, flags=tuple(flags)))
    return tuple(out)
