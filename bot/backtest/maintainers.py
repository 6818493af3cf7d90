"""What the recipe maintainers changed for a benchmark PR, next to what the bot proposed.

A recipes commit that cites the PR is diffed leaf by leaf (YAML path → value) against its
first parent. Each changed leaf is matched with the bot's edits: the same path and value is
"same edit"; the same flag or env var (the value or the key of the leaf) at another path is
"same subject at another layer"; anything else is "not proposed by the bot".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from bot.backtest.history import Commit, git
from bot.backtest.model import EditRow, MaintainerEdit
from bot.digits import is_integer
from bot.errors import InputError
from bot.vllm import canonical_flag
from bot.yamlio.bounds import check_expansion


def leaves(data: Any, prefix: str = "") -> dict[str, str]:
    """Every scalar of a YAML document by its dotted path (``a.b[2].c``)."""
    out: dict[str, str] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            out.update(leaves(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out.update(leaves(value, f"{prefix}[{index}]"))
    else:
        out[prefix] = "" if data is None else str(data)
    return out


def _yaml_at(repo: Path, sha: str, path: str) -> Any:
    try:
        text = git(repo, "show", f"{sha}:{path}")
    except InputError:
        return None  # added or removed by the commit
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    check_expansion(data, f"{path}@{sha[:12]}")  # leaves() walks it as a tree
    return data


def _subjects(edit: EditRow) -> set[str]:
    found = {edit.subject}
    for value in (edit.after or "").split():
        if value.startswith("--"):
            found.add(value)
    return {canonical_flag(s) for s in found if s}


def _subject_of(node: str, after: str | None, tree: dict[str, str]) -> set[str]:
    """The flag or env var a leaf belongs to: its own value (``--flag``), its key (an env
    var), or the flag before it in an argument list (``[--flag, value]``)."""
    found = {node.rsplit(".", 1)[-1].split("[", 1)[0]}
    if after:
        found.add(after)
    head, _, index = node.rpartition("[")
    if is_integer(index[:-1]) and int(index[:-1]) > 0:
        previous = tree.get(f"{head}[{int(index[:-1]) - 1}]", "")
        if previous.startswith("--"):
            found.add(previous)
    return {canonical_flag(s) for s in found}


def _match(
    recipe: str, node: str, after: str | None, tree: dict[str, str], edits: Sequence[EditRow]
) -> str:
    mine = [e for e in edits if e.recipe == recipe]
    for edit in mine:
        if edit.node == node and (edit.after or "") == (after or ""):
            return "same edit"
    subjects = _subject_of(node, after, tree)
    for edit in mine:
        if subjects & _subjects(edit):
            return "same subject at another layer"
    return "not proposed by the bot"


def maintainer_edits(
    repo: Path, commits: Iterable[Commit], edits: Sequence[EditRow]
) -> tuple[MaintainerEdit, ...]:
    out: list[MaintainerEdit] = []
    for commit in commits:
        if not commit.parents:
            continue
        parent = commit.parents[0]
        names = git(repo, "diff", "--no-renames", "--name-only", parent, commit.sha).splitlines()
        for path in sorted(p for p in names if p.startswith("models/") and p.endswith(".yaml")):
            before = leaves(_yaml_at(repo, parent, path))
            after = leaves(_yaml_at(repo, commit.sha, path))
            for node in sorted({*before, *after}):
                old, new = before.get(node), after.get(node)
                if old == new:
                    continue
                match = _match(path, node, new, after, edits)
                out.append(MaintainerEdit(commit.sha, path, node, old, new, match))
    return tuple(out)
