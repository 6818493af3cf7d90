"""One agreement score: replay a window of benchmark PRs where the App would have seen them,
link the recipes history to them, and score both ways.

1. Every merged PR of the window is replayed (``bot.backtest``) against the recipes main at
   the latest moment it was certainly open (PR numbers are creation order:
   :func:`~bot.backtest.history.open_moments`), recording its launches and guide sections.
2. Maintainer commits from ``WINDOW`` before the first replay to the end of the recipes
   history are read as leaf changes and linked to the replayed PRs (:mod:`.links`).
3. A PR linked to a maintainer commit that landed before its replay point is replayed again
   just before that commit (its parent): the App would have proposed before the maintainers
   answered, and their answer is what the proposal is scored against.
4. Proposals and linked changes are scored (:mod:`.score`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bot.agreement.links import WINDOW, BenchmarkPR, Link, Linker
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
from bot.recipes.yaml12 import load_yaml
from bot.rules import Rules, default_rules, load_rules


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
    rereplayed: tuple[int, ...]  # PRs replayed again before an earlier maintainer answer


def score(
    settings: Settings,
    *,
    since: str | None,
    until: str | None,
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
    jobs, _ = plan_jobs(settings, since=since, until=until, replay="open")
    rows = run_jobs(settings, jobs, workers=workers, cache=cache, progress=progress)

    log = first_parent_log(settings.recipes, default_branch(settings.recipes), bodies=True)
    positions = {c.sha: i for i, c in enumerate(log)}
    history_end = max((c.time for c in log), default=0)
    first = min((job.moment for job in jobs), default=history_end)
    commits = maintainer_commits(settings.recipes, log, since=first - WINDOW)
    taxonomy = _taxonomy(settings.recipes, log[-1].sha if log else "HEAD")

    prs = [
        BenchmarkPR(job.pr.number, job.pr.title, job.moment, job.pr.time, row.launches)
        for job, row in zip(jobs, rows, strict=True)
    ]
    linker = Linker(prs, taxonomy)
    links = tuple(link for commit in commits for link in linker.links(commit))

    # replay again where the maintainers answered before the replay point
    by_sha = {c.sha: c for c in log}
    earlier: dict[int, MaintainerCommit] = {}
    job_of = {job.pr.number: job for job in jobs}
    for link in links:
        job = job_of.get(link.pr)
        if job is None or positions.get(link.sha, -1) > positions.get(job.recipes_sha, -1):
            continue
        known = earlier.get(link.pr)
        if known is None or positions[link.sha] < positions[known.sha]:
            earlier[link.pr] = link.commit
    again: list[Job] = []
    for number, commit in sorted(earlier.items()):
        parent = by_sha[commit.sha].parents[0] if by_sha[commit.sha].parents else ""
        if parent:
            again.append(replace(job_of[number], recipes_sha=parent, moment=commit.time - 1))
    rows_again = run_jobs(settings, again, workers=workers, cache=cache, progress=progress)
    final = {job.pr.number: (job, row) for job, row in zip(jobs, rows, strict=True)}
    for job, row in zip(again, rows_again, strict=True):
        final[job.pr.number] = (job, row)
    replays = tuple(
        Replay(row, job.recipes_sha, job.moment, positions.get(job.recipes_sha, -1))
        for job, row in final.values()
    )

    proposals = score_proposals(replays, commits, positions, history_end, rules, taxonomy)
    linked = score_links(links, {r.row.number: r for r in replays}, rules, taxonomy)
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
        tuple(sorted(earlier)),
    )


def _taxonomy(repo: Path, sha: str) -> Taxonomy:
    reader = BlobReader(repo)
    try:
        data = reader.read(sha, "taxonomy.yaml")
    finally:
        reader.close()
    if data is None:
        raise InputError(Location(f"{repo}@{sha[:12]}", "taxonomy.yaml"), "no taxonomy.yaml")
    return Taxonomy.from_yaml(load_yaml(data.decode("utf-8", "replace"), "taxonomy.yaml"))
