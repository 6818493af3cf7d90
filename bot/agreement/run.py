"""One agreement score: replay a window of benchmark PRs, link the recipes history to them,
and score both ways.

1. Every merged PR of the window is replayed (``bot.backtest``) against the recipes main at
   the latest moment it was certainly open (PR numbers are creation order:
   :func:`~bot.backtest.history.open_moments`), recording its launches and guide sections:
   what the App, labelled on the open PR, would have proposed. Its proposals are scored
   against the maintainer commits that came after that recipes commit.
2. Maintainer commits from ``BEFORE`` the first replay to the end of the recipes
   history are read as leaf changes and linked to the replayed PRs (:mod:`.links`).
3. Each link is replayed once more, against the recipes just before the linked commit (its
   parent): would the bot, at that moment, have proposed what the maintainers then wrote?
   Its leaves are scored against that replay (:mod:`.score`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bot.agreement.links import BEFORE, BenchmarkPR, Link, Linker
from bot.agreement.recipes_history import BlobReader, MaintainerCommit, maintainer_commits
from bot.agreement.score import (
    LinkedChange,
    Proposal,
    Replay,
    Totals,
    score_links,
    score_proposals,
    totals,
)
from bot.agreement.taxonomy import Taxonomy
from bot.backtest.history import default_branch, first_parent_log
from bot.backtest.model import PRRow
from bot.backtest.run import Job, Settings, plan_jobs, run_jobs
from bot.errors import InputError, Location
from bot.rules import Rules, default_rules, load_rules
from bot.yamlio.yaml12 import load_yaml


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


def score(
    settings: Settings,
    *,
    since: str | None,
    until: str | None,
    only: Sequence[int] = (),
    workers: int = 1,
    cache: Path | None = None,
    progress: Callable[[int, int, PRRow], Any] | None = None,
) -> Scorecard:
    if not settings.recipes_is_git:
        raise InputError(
            Location(str(settings.recipes)),
            "the agreement score needs the recipes git history (what maintainers did after)",
        )
    settings = replace(settings, record_launches=True)
    rules: Rules = (
        load_rules(settings.rules_dir) if settings.rules_dir is not None else default_rules()
    )
    jobs, _ = plan_jobs(settings, since=since, until=until, only=only, replay="open")
    rows = run_jobs(settings, jobs, workers=workers, cache=cache, progress=progress)

    recipes_branch = settings.recipes_ref or default_branch(settings.recipes)
    log = first_parent_log(settings.recipes, recipes_branch, bodies=True)
    positions = {c.sha: i for i, c in enumerate(log)}
    history_end = max((c.time for c in log), default=0)
    first = min((job.moment for job in jobs), default=history_end)
    commits = maintainer_commits(settings.recipes, log, since=first - BEFORE)
    taxonomy = _taxonomy(settings.recipes, log[-1].sha if log else "HEAD")

    prs = [
        BenchmarkPR(job.pr.number, job.pr.title, job.moment, job.pr.time, row.launches)
        for job, row in zip(jobs, rows, strict=True)
    ]
    linker = Linker(prs, taxonomy)
    links = tuple(link for commit in commits for link in linker.links(commit))

    replays = tuple(
        Replay(row, job.recipes_sha, job.moment, positions.get(job.recipes_sha, -1))
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
    answered = run_jobs(settings, list(before.values()), workers=workers, cache=cache,
                        progress=progress)  # fmt: skip
    at_link = {
        key: Replay(row, job.recipes_sha, job.moment, positions.get(job.recipes_sha, -1))
        for (key, job), row in zip(before.items(), answered, strict=True)
    }

    proposals = score_proposals(replays, commits, positions, history_end, rules, taxonomy)
    linked = score_links(links, at_link, rules, taxonomy)
    return Scorecard(
        since,
        until,
        str(settings.bench_repo),
        str(settings.recipes),
        history_end,
        replays,
        commits,
        links,
        proposals,
        linked,
        totals(proposals, linked),
    )


def recipes_taxonomy(repo: Path) -> Taxonomy:
    """The taxonomy at the tip of the recipes history's default branch."""
    return _taxonomy(repo, default_branch(repo))


def _taxonomy(repo: Path, sha: str) -> Taxonomy:
    reader = BlobReader(repo)
    try:
        data = reader.read(sha, "taxonomy.yaml")
    finally:
        reader.close()
    if data is None:
        raise InputError(Location(f"{repo}@{sha[:12]}", "taxonomy.yaml"), "no taxonomy.yaml")
    return Taxonomy.from_yaml(load_yaml(data.decode("utf-8", "replace"), "taxonomy.yaml"))
