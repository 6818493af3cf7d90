"""The merged PRs of a repository's main, and the recipes commit current at each merge.

Pure over ``git`` output (read with ``git log``/``git diff``, nothing is checked out): a
merged PR is a first-parent commit of the default branch whose subject ends in ``(#N)``
(a squash merge) or reads ``Merge pull request #N from …`` (a merge commit). Its base is the
first parent, its head the commit itself.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from bot import gitcli
from bot.errors import InputError, Location

SQUASH = re.compile(r"\(#(\d+)\)\s*$")
MERGE = re.compile(r"^Merge pull request #(\d+) from ")
# How a recipes commit cites a benchmark PR: InferenceX#N, InferenceX PR #N, …/pull/N
CITATION = re.compile(
    r"InferenceX(?:MAX)?\s*(?:PR\s*)?#(\d+)|InferenceX(?:MAX)?/pull/(\d+)", re.IGNORECASE
)
DEFAULT_BRANCHES = ("main", "master", "origin/main", "origin/master", "HEAD")
SEP = "\x1f"


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    time: int  # committer time, unix seconds
    subject: str
    body: str = ""
    author: str = ""  # the author's e-mail (support by different maintainers is counted)

    @property
    def day(self) -> str:
        return datetime.fromtimestamp(self.time, UTC).date().isoformat()


@dataclass(frozen=True)
class MergedPR:
    number: int
    sha: str  # the merge (or squash) commit on main: the PR head as merged
    base: str  # its first parent
    time: int
    title: str

    @property
    def day(self) -> str:
        return datetime.fromtimestamp(self.time, UTC).date().isoformat()


def git(repo: Path, *args: str) -> str:
    """git's output in ``repo``; a failure is an :class:`InputError` naming the command."""
    try:
        return gitcli.text(repo, *args, timeout=300)
    except gitcli.GitError as err:
        raise err.as_input() from err


def is_git_repo(path: Path) -> bool:
    try:
        git(path, "rev-parse", "--git-dir")
    except InputError:
        return False
    return True


def default_branch(repo: Path) -> str:
    for branch in DEFAULT_BRANCHES:
        try:
            git(repo, "rev-parse", "--verify", "--quiet", branch + "^{commit}")
        except InputError:
            continue
        return branch
    raise InputError(Location(str(repo)), "no main, master or HEAD branch to walk")


def first_parent_log(repo: Path, ref: str, *, bodies: bool = False) -> tuple[Commit, ...]:
    """Commits of ``ref``'s first-parent history, oldest first."""
    fmt = SEP.join(("%H", "%P", "%ct", "%ae", "%s", "%b" if bodies else "")) + "\x1e"
    out = git(repo, "log", "--first-parent", f"--format={fmt}", ref)
    commits: list[Commit] = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, parents, ctime, author, subject, body = record.split(SEP, 5)
        commits.append(Commit(sha, tuple(parents.split()), int(ctime), subject, body, author))
    commits.reverse()
    return tuple(commits)


def pr_number(subject: str) -> int | None:
    found = MERGE.match(subject) or SQUASH.search(subject)
    return int(found.group(1)) if found else None


def _bound(value: str | None, end: bool) -> int | None:
    if not value:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError as err:
        raise InputError(Location("--since/--until"), f"not a date (YYYY-MM-DD): {value}") from err
    stamp = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
    return int(stamp) + (86400 if end else 0)


def merged_prs(
    commits: Iterable[Commit],
    *,
    since: str | None = None,
    until: str | None = None,
    only: Sequence[int] = (),
) -> tuple[MergedPR, ...]:
    """Merged PRs of a first-parent history (oldest first), filtered by day and number.
    ``since`` and ``until`` are inclusive UTC days."""
    low, high = _bound(since, False), _bound(until, True)
    wanted = set(only)
    found: list[MergedPR] = []
    for commit in commits:
        number = pr_number(commit.subject)
        if number is None or not commit.parents:
            continue
        if low is not None and commit.time < low:
            continue
        if high is not None and commit.time >= high:
            continue
        if wanted and number not in wanted:
            continue
        title = MERGE.sub("", commit.subject) if MERGE.match(commit.subject) else commit.subject
        found.append(MergedPR(number, commit.sha, commit.parents[0], commit.time, title))
    return tuple(found)


def open_moments(prs: Iterable[MergedPR]) -> dict[int, int]:
    """For each merged PR, a moment at which it was certainly open: GitHub numbers PRs in
    the order they are created, so PR N existed before any higher-numbered PR was merged.
    The moment is the earliest merge of a PR numbered N or higher (N's own merge at the
    latest). Squash histories keep no creation times; this bound is what the history proves,
    and it is where an App labelled on the open PR would have run at the latest."""
    ordered = sorted(prs, key=lambda pr: pr.number, reverse=True)
    moments: dict[int, int] = {}
    earliest: int | None = None
    for pr in ordered:
        earliest = pr.time if earliest is None else min(earliest, pr.time)
        moments[pr.number] = min(earliest, moments.get(pr.number, earliest))
    return moments


class RecipesTimeline:
    """The recipes main commit current at a moment (the last one not newer than it)."""

    def __init__(self, commits: Sequence[Commit]) -> None:
        self.commits = tuple(sorted(commits, key=lambda c: c.time))  # stable: log order kept
        self._times = [c.time for c in self.commits]

    def at(self, moment: int) -> Commit | None:
        """The last commit at or before ``moment``; before the first one, None."""
        index = bisect.bisect_right(self._times, moment)
        return self.commits[index - 1] if index else None

    def citing(self, number: int) -> tuple[Commit, ...]:
        """Recipes commits whose message cites benchmark PR ``number``."""
        return tuple(c for c in self.commits if number in cited_prs(f"{c.subject}\n{c.body}"))


def cited_prs(message: str) -> set[int]:
    return {int(a or b) for a, b in CITATION.findall(message)}


def changed_paths(repo: Path, base: str, head: str) -> tuple[str, ...]:
    out = git(repo, "diff", "--no-renames", "--name-only", base, head)
    return tuple(sorted(line for line in out.splitlines() if line))
