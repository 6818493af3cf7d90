"""Launch settings a maintainer recently took out of a recipe file, read from its git history.

A setting a maintainer removed, or changed from one value to another, on purpose is not
proposed again (issue #31: #2512 re-added an MLA prefill backend a week after the recipes
commit "Let Kimi recipes auto-select MLA prefill backend" removed it). The history is the
file's commits in the ``days`` before the recipes commit the alignment reads, by anyone but a
bot; a setting moved to another node, or put back later, was not withdrawn. Nothing is checked
out and nothing of the repository is run: ``git log`` and ``git show`` read its objects.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from bot import gitcli
from bot.errors import InputError, RecipeSyncError
from bot.recipes.leaves import Leaf, LeafChange, diff_leaves, recipe_leaves
from bot.sources import FileSource, GitTreeSource
from bot.yamlio.yaml12 import load_yaml

WINDOW_DAYS = 30
SEP = "\x1f"


@dataclass(frozen=True)
class Withdrawal:
    """One setting a maintainer commit removed, or changed away from ``leaf.value``."""

    leaf: Leaf  # the setting as it was before the commit
    removed: bool  # True: taken out; False: changed to ``now``
    now: str | None
    commit: str
    day: str  # YYYY-MM-DD
    author: str
    title: str
    # the maintainer's spelling when ``leaf`` is read as the setting it means (a deprecated
    # field vLLM reads as another: bot/vllm/superseded.py)
    spelled: str | None = None

    def reverted_by(self, subject: str, value: str | None) -> bool:
        """Would setting ``subject`` to ``value`` (None: removing it) undo this commit?
        Re-adding a removed setting does; re-setting the value it was changed away from does."""
        if value is None or self.leaf.subject != subject:
            return False
        return self.removed or value == self.leaf.value

    def words(self) -> str:
        """``a maintainer removed it from NODE on DAY (sha “title”, author)``, or changed it
        from one value to another at NODE; a deprecated spelling is named as such."""
        node = self.leaf.node
        spelling = f"{self.spelled}, this setting's deprecated spelling,"
        if self.removed:
            how = f"removed {'it' if self.spelled is None else spelling} from {node}"
        elif self.spelled is None:
            how = f"changed it from {self.leaf.value!r} to {self.now!r} at {node}"
        else:
            how = f"changed {spelling} to {self.now!r} at {node}"
        cited = f"{self.commit[:7]} “{self.title}”, {self.author}"
        return f"a maintainer {how} on {self.day} ({cited})"


@dataclass(frozen=True)
class History:
    """What a recipes source can tell about recent maintainer changes (``known`` False: a
    plain directory or an unreadable history; ``why`` says which)."""

    known: bool
    why: str = ""
    withdrawals: tuple[Withdrawal, ...] = ()


def recent_withdrawals(source: FileSource, path: str, days: int = WINDOW_DAYS) -> History:
    """The withdrawals in ``path`` during the ``days`` before the source's commit."""
    if not isinstance(source, GitTreeSource):
        return History(False, "the recipes were read from a directory, not a git commit")
    try:
        found = _withdrawals(str(Path(source.repo_path).resolve()), source.commit_sha, path, days)
    except (RecipeSyncError, gitcli.GitError, OSError, ValueError) as err:
        return History(False, f"the history of {path} could not be read: {err}")
    return History(True, "", found)


@lru_cache(maxsize=512)
def _withdrawals(repo: str, commit: str, path: str, days: int) -> tuple[Withdrawal, ...]:
    when = dt.datetime.fromisoformat(_git(repo, "show", "-s", "--format=%cI", commit).strip())
    since = (when - dt.timedelta(days=days)).isoformat()
    log = _git(
        repo, "log", f"--since={since}", f"--format=%H{SEP}%P{SEP}%an{SEP}%ae{SEP}%cs{SEP}%s",
        commit, "--", path,
    )  # fmt: skip
    # oldest first: a later commit that sets the value again (the same commit moving it to
    # another node, or a maintainer putting it back) cancels the withdrawal
    found: dict[tuple[str, str], Withdrawal] = {}
    for line in reversed(log.splitlines()):
        sha, parents, name, email, day, title = line.split(SEP, 5)
        if not parents or _is_bot(name, email):
            continue
        before = _leaves(repo, parents.split()[0], path)
        after = _leaves(repo, sha, path)
        if before is None or after is None:
            continue  # the file was added or deleted: a new or retired recipe, not a setting
        changes = diff_leaves(before, after)
        for change in changes:
            withdrawal = _withdrawal(change, sha, day, name or email, title)
            if withdrawal is not None:
                found[(withdrawal.leaf.subject, withdrawal.leaf.value)] = withdrawal
        for change in changes:
            if not change.removed:
                found.pop((change.leaf.subject, change.leaf.value), None)
    return tuple(found.values())


def _withdrawal(
    change: LeafChange, sha: str, day: str, author: str, title: str
) -> Withdrawal | None:
    if not change.leaf.launch or change.before is None:
        return None  # a new setting withdraws nothing
    if change.removed:
        return Withdrawal(change.leaf, True, None, sha, day, author, title)
    old = Leaf(change.leaf.recipe, change.leaf.node, change.leaf.slot, change.leaf.subject,
               change.before)  # fmt: skip
    return Withdrawal(old, False, change.leaf.value, sha, day, author, title)


def _leaves(repo: str, commit: str, path: str) -> dict[tuple[str, str, str], Leaf] | None:
    try:
        text = _git(repo, "show", f"{commit}:{path}")
    except gitcli.GitError:
        return None
    try:
        return recipe_leaves(path, load_yaml(text, f"{path}@{commit[:12]}"))
    except InputError:
        return None  # a version that did not load: nothing to read from it


def _is_bot(name: str, email: str) -> bool:
    return "[bot]" in name or "[bot]" in email or "recipe-sync" in f"{name} {email}".lower()


def _git(repo: str, *args: str) -> str:
    out = gitcli.text(repo, *args, errors="strict", timeout=60)
    return out.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as ever
