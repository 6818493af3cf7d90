"""What recipe maintainers changed, commit by commit, read from the recipes git history.

Each first-parent commit of the recipes main that touches ``models/**.yaml`` becomes a
:class:`MaintainerCommit`: its leaf changes (:mod:`bot.recipes.leaves`), the guide text it
added, and the variants it created. Nothing is checked out: blobs are read through one
``git cat-file --batch`` process.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot import gitcli
from bot.backtest.history import Commit, git
from bot.errors import InputError, Location
from bot.recipes.leaves import LeafChange, diff_leaves, recipe_leaves
from bot.yamlio.yaml12 import load_yaml


@dataclass(frozen=True)
class GuideAddition:
    recipe: str
    text: str  # the guide lines the commit added, joined

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(self.text.splitlines())


@dataclass(frozen=True)
class MaintainerCommit:
    sha: str
    time: int
    subject: str
    body: str
    changes: tuple[LeafChange, ...]
    guide: tuple[GuideAddition, ...]
    new_variants: tuple[tuple[str, str], ...]  # (recipe, variant) the commit created
    recipes: tuple[str, ...]  # recipe files touched
    created: tuple[str, ...] = ()  # recipe files the commit adds (a new recipe, not a change)
    author: str = ""  # the author's e-mail

    @property
    def launch_changes(self) -> tuple[LeafChange, ...]:
        return tuple(c for c in self.changes if c.leaf.launch)

    def moved(self, recipe: str) -> set[tuple[str, str]]:
        """(subject, value) the commit removes at one node of ``recipe`` and adds at another:
        a move, not new content."""
        added = {(c.leaf.subject, c.leaf.value) for c in self.changes
                 if c.leaf.recipe == recipe and c.leaf.launch and not c.removed}  # fmt: skip
        removed = {(c.leaf.subject, c.leaf.value) for c in self.changes
                   if c.leaf.recipe == recipe and c.leaf.launch and c.removed}  # fmt: skip
        return added & removed

    @property
    def day(self) -> str:
        return Commit(self.sha, (), self.time, self.subject).day


class BlobReader:
    """``git cat-file --batch`` over one repository: ``read(rev, path)`` → bytes or None."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._batch = gitcli.CatFile(repo)

    def read(self, rev: str, path: str) -> bytes | None:
        return self._batch.read(f"{rev}:{path}")

    def close(self) -> None:
        self._batch.close()


def _load(data: bytes | None, where: str) -> Any:
    if data is None:
        return None
    try:
        return load_yaml(data.decode("utf-8", "replace"), where)
    except InputError:
        return None  # a broken recipe in history: its leaves are unknown, not empty


def _guide_added(before: Any, after: Any) -> str:
    old = before.get("guide") if isinstance(before, dict) else None
    new = after.get("guide") if isinstance(after, dict) else None
    old_lines = str(old or "").splitlines()
    new_lines = str(new or "").splitlines()
    added = [
        line[1:]
        for line in difflib.unified_diff(old_lines, new_lines, lineterm="", n=0)
        if line.startswith("+") and not line.startswith("+++")
    ]
    return "\n".join(added).strip("\n")


def _variants(data: Any) -> set[str]:
    variants = data.get("variants") if isinstance(data, dict) else None
    return {str(v) for v in variants} if isinstance(variants, dict) else set()


def read_commit(reader: BlobReader, commit: Commit) -> MaintainerCommit | None:
    """The maintainer change of one commit; None when it touches no recipe file."""
    if not commit.parents:
        return None
    parent = commit.parents[0]
    names = git(reader.repo, "diff", "--no-renames", "--name-only", parent, commit.sha)
    paths = sorted(
        p for p in names.splitlines() if p.startswith("models/") and p.endswith((".yaml", ".yml"))
    )
    if not paths:
        return None
    changes: list[LeafChange] = []
    guide: list[GuideAddition] = []
    variants: list[tuple[str, str]] = []
    new_files: list[str] = []
    for path in paths:
        before = _load(reader.read(parent, path), f"{path}@{parent[:12]}")
        after = _load(reader.read(commit.sha, path), f"{path}@{commit.sha[:12]}")
        if before is None and after is None:
            continue
        changes.extend(diff_leaves(recipe_leaves(path, before), recipe_leaves(path, after)))
        text = _guide_added(before, after)
        if text:
            guide.append(GuideAddition(path, text))
        if before is not None:
            variants.extend((path, v) for v in sorted(_variants(after) - _variants(before)))
        else:
            new_files.append(path)
    return MaintainerCommit(
        commit.sha,
        commit.time,
        commit.subject,
        commit.body,
        tuple(changes),
        tuple(guide),
        tuple(variants),
        tuple(paths),
        tuple(new_files),
        commit.author,
    )


def maintainer_commits(
    repo: Path, commits: Sequence[Commit], *, since: int | None = None
) -> tuple[MaintainerCommit, ...]:
    """The recipe changes of ``commits`` (oldest first) at or after ``since``."""
    reader = BlobReader(repo)
    try:
        found = []
        for commit in commits:
            if since is not None and commit.time < since:
                continue
            change = read_commit(reader, commit)
            if change is not None:
                found.append(change)
        return tuple(found)
    except OSError as err:
        raise InputError(Location(str(repo)), f"cannot read the recipes history: {err}") from err
    finally:
        reader.close()


def recipe_at(reader: BlobReader, sha: str, path: str) -> Any:
    return _load(reader.read(sha, path), f"{path}@{sha[:12]}")


def touched(commits: Iterable[MaintainerCommit], recipe: str) -> tuple[MaintainerCommit, ...]:
    return tuple(c for c in commits if recipe in c.recipes)
