"""The alignment PR texts of replayed benchmark PRs, through the consistency check
(:mod:`bot.present.consistency`): what the App would have posted for each merged PR of a
history, and whether any of it contradicts itself."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from bot.align.result import AlignInputs
from bot.align.run import align
from bot.backtest.history import changed_paths
from bot.backtest.run import RELEVANT, Backtester, Job, Settings
from bot.markdown import visible_words
from bot.present import present
from bot.present.consistency import Finding, shown_placeholders
from bot.sources import GitTreeSource


@dataclass(frozen=True)
class PullText:
    recipe_path: str
    title: str
    body: str  # as posted (metadata line and footer included)
    patch: str
    findings: tuple[Finding, ...]

    @property
    def visible_words(self) -> int:
        """Words a reader sees without opening anything: no HTML comment, no <details>."""
        text = re.sub(r"<!--.*?-->", " ", self.body, flags=re.S)
        return len(re.sub(r"<details>.*?</details>", " ", text, flags=re.S).split())


@dataclass(frozen=True)
class CheckedPR:
    number: int
    prs: tuple[PullText, ...]  # one per alignment PR (none: nothing to open)
    error: str = ""  # the replay failed (bad input, an engine error)
    # the benchmark PR's comment, in words a reader sees without opening anything (None: no
    # comment, the PR reaches no benchmark config, script or runner file)
    comment_words: int | None = None
    # what the comment or the check run shows that it must not
    comment_findings: tuple[str, ...] = ()


def pull_texts(tester: Backtester, job: Job) -> CheckedPR:
    """The alignment PRs ``job``'s benchmark PR calls for, as :func:`present` writes them."""
    pr = job.pr
    settings = tester.settings
    try:
        if not any(
            p.startswith(RELEVANT) for p in changed_paths(settings.bench_repo, pr.base, pr.sha)
        ):
            return CheckedPR(pr.number, ())
        recipes = tester.recipes_source(job.recipes_sha)
        if settings.recipes_is_git and not recipes.exists("taxonomy.yaml"):
            return CheckedPR(pr.number, ())  # the recipes before their YAML format
        run = align(
            AlignInputs(
                bench=GitTreeSource(settings.bench_repo, pr.sha),
                bench_base=GitTreeSource(settings.bench_repo, pr.base),
                recipes=recipes,
                rules=tester.rules,
                bench_repo=settings.bench_name,
                pr_number=pr.number,
                head_sha=pr.sha,
                base_sha=pr.base,
                recipes_repo=settings.recipes_name,
                recipes_sha=job.recipes_sha,
                caches=tester.caches,
            )
        )
        texts = present(run)
    except Exception as err:  # a row of the report, as the backtest's own error rows
        return CheckedPR(pr.number, (), f"{type(err).__name__}: {err}")
    return CheckedPR(
        pr.number,
        comment_words=visible_words(texts.comment),
        comment_findings=tuple(
            found
            for text in (
                texts.comment,
                texts.check.title,
                texts.check.summary,
                *(f"{a.title}: {a.message}" for a in texts.check.annotations),
            )
            for found in shown_placeholders(text)
        ),
        prs=tuple(
            PullText(
                found.recipe_path,
                texts.prs[found.recipe_path].title,
                texts.prs[found.recipe_path].full_body,
                found.patch,
                texts.findings.get(found.recipe_path, ()),
            )
            for found in run.patches
        ),
    )


_WORKER: Backtester | None = None


def _init(settings: Settings) -> None:
    global _WORKER
    _WORKER = Backtester(settings)


def _work(job: Job) -> CheckedPR:
    assert _WORKER is not None
    return pull_texts(_WORKER, job)


def checked_prs(settings: Settings, jobs: Sequence[Job], workers: int = 1) -> Iterator[CheckedPR]:
    """:func:`pull_texts` of every job, in order (runs of neighbours per worker share caches)."""
    if workers <= 1 or len(jobs) < 4:
        tester = Backtester(settings)
        yield from (pull_texts(tester, job) for job in jobs)
        return
    chunk = max(4, len(jobs) // (workers * 6))
    with ProcessPoolExecutor(workers, initializer=_init, initargs=(settings,)) as pool:
        yield from pool.map(_work, jobs, chunksize=chunk)
