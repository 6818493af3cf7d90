"""The guide output scored as proposals (issue #31): the reproduction sections and guide lines
the replayed PRs would write, against the guide text maintainers added in the commits linked to
those PRs, for the same recipe and GPU.

A bot section is *matched* when a maintainer commit linked to its PR added guide text to the
same recipe for its GPU (the GPUs the text names, or the link's GPUs when it names none).
Maintainers' guide lines are every line their linked commits added to that recipe's guide,
each commit once however many PRs it links to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.agreement.links import Link
from bot.agreement.taxonomy import Taxonomy
from bot.backtest.model import GuideSection, PRRow


@dataclass(frozen=True)
class MaintainerGuide:
    """Guide text one linked maintainer commit added to one recipe."""

    commit: str
    day: str
    recipe: str
    lines: int
    hardware: tuple[str, ...]  # GPUs it is for


@dataclass(frozen=True)
class GuideLane:
    """One PR and recipe: the sections its alignment PR writes, and what maintainers wrote."""

    pr: int
    recipe: str
    sections: tuple[GuideSection, ...]  # the bot's, written by its PR
    maintainers: tuple[MaintainerGuide, ...]  # linked commits' guide additions
    matched: tuple[str, ...]  # block ids of the bot's sections maintainers also wrote for


@dataclass(frozen=True)
class GuideScore:
    lanes: tuple[GuideLane, ...]
    sections_proposed: int
    sections_matched: int
    lines_proposed: int
    maintainer_additions: int  # distinct (commit, recipe) guide additions
    maintainer_lines: int

    @property
    def lines_ratio(self) -> float | None:
        """Guide lines proposed per maintainers' guide line (None: maintainers wrote none)."""
        return self.lines_proposed / self.maintainer_lines if self.maintainer_lines else None


def _additions(link: Link, taxonomy: Taxonomy) -> list[MaintainerGuide]:
    found = []
    for addition in link.commit.guide:
        if addition.recipe != link.recipe:
            continue
        named = taxonomy.gpus_named(addition.text)
        hardware = tuple(sorted(named)) if named else link.hardware
        found.append(
            MaintainerGuide(link.sha, link.commit.day, link.recipe, len(addition.lines), hardware)
        )
    return found


def score_guide(rows: Sequence[PRRow], links: Sequence[Link], taxonomy: Taxonomy) -> GuideScore:
    """The guide output of ``rows`` (the replays) against the guide additions of ``links``
    (links to those replays' PRs)."""
    numbers = {row.number for row in rows}
    wrote: dict[tuple[int, str], list[MaintainerGuide]] = {}
    distinct: dict[tuple[str, str], MaintainerGuide] = {}
    for link in links:
        if link.pr not in numbers:
            continue
        for found in _additions(link, taxonomy):
            wrote.setdefault((link.pr, link.recipe), []).append(found)
            distinct[(found.commit, found.recipe)] = found
    lanes: list[GuideLane] = []
    for row in rows:
        sections = row.new_sections  # a repeat of an open PR's recipe change writes none
        recipes = sorted({s.recipe for s in sections} | {r for n, r in wrote if n == row.number})
        for recipe in recipes:
            mine = tuple(s for s in sections if s.recipe == recipe)
            theirs = tuple(wrote.get((row.number, recipe), ()))
            covered = {gpu for m in theirs for gpu in m.hardware}
            matched = tuple(s.block for s in mine if s.hardware in covered)
            lanes.append(GuideLane(row.number, recipe, mine, theirs, matched))
    return GuideScore(
        tuple(lanes),
        sum(len(lane.sections) for lane in lanes),
        sum(len(lane.matched) for lane in lanes),
        sum(s.lines for lane in lanes for s in lane.sections),
        len(distinct),
        sum(m.lines for m in distinct.values()),
    )
