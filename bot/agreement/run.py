"""One agreement score: replay windows of benchmark PRs, link the recipes history to them,
and score both ways.

1. Every merged PR of the windows is replayed (``bot.backtest``) against the recipes main at
   the latest moment it was certainly open (PR numbers are creation order:
   :func:`~bot.backtest.history.open_moments`), recording its launches and guide sections:
   what the App, labelled on the open PR, would have proposed. Its proposals are scored
   against the maintainer commits that came after that recipes commit.
2. Maintainer commits from ``BEFORE`` the first replay to the end of the recipes
   history are read as leaf changes and linked to the replayed PRs (:mod:`.links`), once
   for all windows, so a commit answering a PR of the first window is not taken for an
   answer to one of the second.
3. Each link is replayed once more, against the recipes just before the linked commit (its
   parent): would the bot, at that moment, have proposed what the maintainers then wrote?
   Its leaves are scored against that replay (:mod:`.score`).
4. One scorecard per window (its PRs, their proposals, their links) and, with several
   windows, one for the whole span.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bot.agreement.guide import GuideScore, score_guide
from bot.agreement.links import BEFORE, BenchmarkPR, Link, Linker
from bot.agreement.proposals import (
    STRICT,
    History,
    Proposal,
    RecipeLeaves,
    Replay,
    Strictness,
    edits_of,
    score_proposals,
)
from bot.agreement.recipes_history import (
    BlobReader,
    MaintainerCommit,
    maintainer_commits,
    recipe_at,
)
from bot.agreement.score import LinkedChange, Totals, score_links, totals
from bot.agreement.taxonomy import Taxonomy
from bot.backtest.history import Commit, default_branch, first_parent_log
from bot.backtest.model import PRRow, Volume, mark_duplicates
from bot.backtest.run import Job, Replayer, Settings, plan_jobs, run_jobs
from bot.errors import InputError, Location
from bot.recipes.leaves import recipe_leaves
from bot.rules import Rules, default_rules, load_rules
from bot.yamlio.yaml12 import load_yaml

Window = tuple[str | None, str | None]  # first and last merge day (inclusive; None: open)


@dataclass(frozen=True)
class Scorecard:
    since: str | None
    until: str | None
    bench: str
    recipes: str
    history_end: int  # time of the last recipes commit
    replays: tuple[Replay, ...]
    commits: tuple[MaintainerCommit, ...]
    links: tuple[Link, ...]
    proposals: tuple[Proposal, ...]
    linked: tuple[LinkedChange, ...]
    totals: Totals
    strictness: Strictness = STRICT
    offered: tuple[Proposal, ...] = ()  # candidates offered as checkboxes, scored alike
    guide: GuideScore | None = None
    volume: Volume | None = None

    @property
    def window(self) -> str:
        return f"{self.since or 'start'} … {self.until or 'end'}"


def score(
    settings: Settings,
    *,
    windows: Sequence[Window] = ((None, None),),
    only: Sequence[int] = (),
    workers: int = 1,
    cache: Path | None = None,
    progress: Callable[[int, int, PRRow], Any] | None = None,
    strictness: Strictness = STRICT,
    history_until: str | None = None,
) -> tuple[Scorecard, ...]:
    """One scorecard per window, then (several windows) one for their whole span.
    ``history_until``: read the recipes history only to that day (what was known then)."""
    if not settings.recipes_is_git:
        raise InputError(
            Location(str(settings.recipes)),
            "the agreement score needs the recipes git history (what maintainers did after)",
        )
    if not windows:
        raise InputError(Location("--window"), "no window to score")
    settings = replace(settings, record_launches=True)
    rules: Rules = (
        load_rules(settings.rules_dir) if settings.rules_dir is not None else default_rules()
    )
    span = _span(windows)
    jobs, _ = plan_jobs(settings, since=span[0], until=span[1], only=only, replay="open")
    # one set of workers for both rounds of replays: the second replays the same PRs (against
    # the recipes before each linked commit), whose benchmark side the workers hold evaluated
    with Replayer(settings, workers) as replayer:
        return _score(settings, rules, windows, span, jobs, replayer, cache, progress,
                      strictness, history_until)  # fmt: skip


def _score(
    settings: Settings,
    rules: Rules,
    windows: Sequence[Window],
    span: Window,
    jobs: Sequence[Job],
    replayer: Replayer,
    cache: Path | None,
    progress: Callable[[int, int, PRRow], Any] | None,
    strictness: Strictness,
    history_until: str | None,
) -> tuple[Scorecard, ...]:
    rows = run_jobs(settings, jobs, replayer, cache=cache, progress=progress)

    log = _history(settings.recipes, settings.recipes_ref, history_until)
    positions = {c.sha: i for i, c in enumerate(log)}
    history_end = max((c.time for c in log), default=0)
    first = min((job.moment for job in jobs), default=history_end)
    commits = maintainer_commits(settings.recipes, log, since=first - BEFORE)
    taxonomy = read_taxonomy(settings.recipes, log[-1].sha if log else "HEAD")

    linker = Linker(benchmark_prs(jobs, rows), taxonomy)
    links = tuple(link for commit in commits for link in linker.links(commit))

    replays = tuple(
        Replay(row, job.recipes_sha, job.moment, positions.get(job.recipes_sha, -1), job.pr.time)
        for job, row in zip(jobs, rows, strict=True)
    )
    # one replay per linked commit, just before it (its parent on the recipes main)
    job_of = {job.pr.number: job for job in jobs}
    before: dict[tuple[int, str], Job] = {}
    for link in links:
        parents = log[positions[link.sha]].parents if link.sha in positions else ()
        if link.pr in job_of and parents:
            before[(link.pr, link.sha)] = replace(
                job_of[link.pr], recipes_sha=parents[0], moment=link.commit.time - 1
            )
    # replayed in merge order, as the first round: a worker's run of neighbouring PRs shares
    # most benchmark files, which its caches hold
    order = sorted(before, key=lambda key: (before[key].pr.time, key))
    answered = run_jobs(settings, [before[key] for key in order], replayer, cache=cache,
                        progress=progress)  # fmt: skip
    row_of = dict(zip(order, answered, strict=True))
    at_link = {
        key: Replay(row_of[key], job.recipes_sha, job.moment, positions.get(job.recipes_sha, -1))
        for key, job in before.items()
    }
    history = History(commits, positions, history_end, links, _existing(settings.recipes, replays))
    linked = score_links(links, at_link, rules, taxonomy, strictness)

    def card(window: Window) -> Scorecard:
        mine = tuple(r for r in replays if _within(r.row.day, window))
        numbers = {r.row.number for r in mine}
        # what maintainers receive: one PR per recipe change (a repeat of an open one is none)
        rows = mark_duplicates(r.row for r in mine)
        proposals = score_proposals(mine, history, rules, taxonomy, strictness)
        changes = tuple(c for c in linked if c.link.pr in numbers)
        window_links = tuple(link for link in links if link.pr in numbers)
        return Scorecard(
            window[0],
            window[1],
            str(settings.bench_repo),
            str(settings.recipes),
            history_end,
            mine,
            commits,
            window_links,
            proposals,
            changes,
            totals(proposals, changes),
            strictness,
            score_proposals(mine, history, rules, taxonomy, strictness, offered=True),
            score_guide(rows, window_links, taxonomy),
            Volume.of(rows),
        )

    wanted = list(windows) + ([span] if len(windows) > 1 else [])
    return tuple(card(window) for window in wanted)


def benchmark_prs(jobs: Sequence[Job], rows: Sequence[PRRow]) -> list[BenchmarkPR]:
    """What the linker knows of each replayed PR: when it was open and merged, its launches."""
    return [
        BenchmarkPR(job.pr.number, job.pr.title, job.moment, job.pr.time, row.launches)
        for job, row in zip(jobs, rows, strict=True)
    ]


def _span(windows: Sequence[Window]) -> Window:
    sinces = [w[0] for w in windows]
    untils = [w[1] for w in windows]
    since = None if None in sinces else min(s for s in sinces if s is not None)
    until = None if None in untils else max(u for u in untils if u is not None)
    return since, until


def _within(day: str, window: Window) -> bool:
    since, until = window
    return (since is None or day >= since) and (until is None or day <= until)


def _history(repo: Path, ref: str | None, until: str | None) -> tuple[Commit, ...]:
    """The first-parent history of ``ref`` (default: the recipes' default branch), to the
    end of ``until`` (a day) if given."""
    log = first_parent_log(repo, ref or default_branch(repo), bodies=True)
    if until is None:
        return log
    return tuple(c for c in log if c.day <= until)


def _existing(repo: Path, replays: Sequence[Replay]) -> dict[tuple[str, str], RecipeLeaves]:
    """The leaves of every recipe a replay edits (or offers to), at its recipes commit: what
    the recipe already rendered, so an edit is scored only on the leaves it changes."""
    wanted = {
        (replay.recipes_sha, edit.recipe)
        for replay in replays
        for offered in (False, True)
        for edit in edits_of(replay.row, offered)
    }
    reader = BlobReader(repo)
    try:
        return {
            (sha, path): recipe_leaves(path, recipe_at(reader, sha, path))
            for sha, path in sorted(wanted)
        }
    finally:
        reader.close()


def recipes_taxonomy(repo: Path) -> Taxonomy:
    """The taxonomy at the tip of the recipes history's default branch."""
    return read_taxonomy(repo, default_branch(repo))


def read_taxonomy(repo: Path, sha: str) -> Taxonomy:
    """The recipes repository's ``taxonomy.yaml`` at ``sha``."""
    reader = BlobReader(repo)
    try:
        data = reader.read(sha, "taxonomy.yaml")
    finally:
        reader.close()
    if data is None:
        raise InputError(Location(f"{repo}@{sha[:12]}", "taxonomy.yaml"), "no taxonomy.yaml")
    return Taxonomy.from_yaml(load_yaml(data.decode("utf-8", "replace"), "taxonomy.yaml"))
