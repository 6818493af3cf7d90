"""What to do about a drifted entry: the benchmark PRs that introduced its differences and
the one ``recipe-sync align`` command that proposes the recipe edit.

The command aligns the config key over the range from just before the oldest introduction
to the audited commit: the key is affected in that range, and the comparison runs at the
audited commit, so it proposes the edit for today's values (not those of the old PR).
Pure: the report carries the commits and the paths the command names.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.audit.groups import Entry, KeyGroup, RecipeGroup
from bot.audit.model import AuditReport, FlagRow, Introduced


@dataclass(frozen=True)
class Fix:
    """How a drifted entry is fixed."""

    introduced: tuple[Introduced, ...]  # distinct introductions, oldest first
    command: str  # "" when no counted difference has a known introduction
    recipe_only: tuple[str, ...]  # counted differences only the recipe sets (no benchmark PR)

    @property
    def prs(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(i.pr for i in self.introduced if i.pr is not None))


def introductions(flags: Iterable[FlagRow]) -> tuple[Introduced, ...]:
    found: dict[str, Introduced] = {}
    for flag in flags:
        if flag.drift and flag.introduced is not None:
            found.setdefault(flag.introduced.commit, flag.introduced)
    return tuple(sorted(found.values(), key=lambda i: (i.time, i.commit)))


def _repo_arg(path: str, name: str, fallback: str) -> str:
    return path or (name.rsplit("/", 1)[-1] if name else fallback)


def fix_for(report: AuditReport, config_key: str, flags: Iterable[FlagRow]) -> Fix:
    """The introductions of ``flags``' counted differences and the align command."""
    flags = tuple(flags)
    found = introductions(flags)
    recipe_only = tuple(f.flag for f in flags if f.drift and f.introduced is None and not f.bench)
    if not found or not report.bench_commit:
        return Fix(found, "", recipe_only)
    words = [
        "recipe-sync",
        "align",
        "--bench-repo",
        _repo_arg(report.bench_path, report.bench_name, "BENCH_REPO"),
        "--bench-ref",
        report.bench_commit[:12],
        "--bench-base",
        found[0].commit[:12] + "^",
        "--recipes",
        _repo_arg(report.recipes_path, report.recipes_name, "RECIPES_REPO"),
    ]
    if report.recipes_ref:
        words += ["--recipes-ref", report.recipes_ref]
    if report.bench_name:
        words += ["--bench-name", report.bench_name]
    if report.recipes_name:
        words += ["--recipes-name", report.recipes_name]
    words += ["--config-key", config_key]
    prs = {i.pr for i in found}
    if len(prs) == 1 and None not in prs:
        words += ["--bench-pr", str(found[0].pr)]
    return Fix(found, shlex.join(words), recipe_only)


def pr_url(report: AuditReport, intro: Introduced) -> str:
    """The PR's page when the benchmark repository's name is known, else the commit's."""
    if not report.bench_name:
        return ""
    if intro.pr is not None:
        return f"https://github.com/{report.bench_name}/pull/{intro.pr}"
    return f"https://github.com/{report.bench_name}/commit/{intro.commit}"


def pr_label(intro: Introduced) -> str:
    return f"#{intro.pr}" if intro.pr is not None else intro.commit[:12]


@dataclass(frozen=True)
class StartHere:
    """The drifted entry whose fix closes the most drift, and that fix."""

    key: KeyGroup
    entry: Entry
    fix: Fix

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(f.flag for f in self.entry.flags if f.drift)


def start_here(report: AuditReport, groups: Sequence[RecipeGroup]) -> StartHere | None:
    """Where a maintainer starts: the drifted entry with the most impact, counted differing
    flags × launch lines (one with a fix command first; then the first in the page's order);
    None when nothing drifts."""
    best: tuple[tuple[bool, int, int], StartHere] | None = None
    for group in groups:
        for profile in group.profiles:
            for key in profile.keys:
                for entry in key.entries:
                    if entry.status != "drifted":
                        continue
                    fix = fix_for(report, key.config_key, entry.flags)
                    rank = (bool(fix.command), entry.first.drift_count * len(entry.rows),
                            len(entry.rows))  # fmt: skip
                    if best is None or rank > best[0]:
                        best = (rank, StartHere(key, entry, fix))
    return best[1] if best is not None else None
