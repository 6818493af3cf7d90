"""What ``backtest`` and ``score`` share: they replay merged benchmark PRs, so they take the
same options with the same defaults as ``audit`` (repository, ref, name, ``--jobs``, output)
and check them the same way before any work starts."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

from bot.backtest.history import default_branch, first_parent_log, is_git_repo, merged_prs
from bot.backtest.model import PRRow
from bot.backtest.run import Settings, settings_for
from bot.commands.grammar import (
    LOCAL,
    add_jobs,
    add_output,
    add_repo,
    jobs,
    must_exist,
    read_ref,
    repo_name,
)
from bot.commands.progress import Progress
from bot.errors import InputError, Location

BENCH_REF_HELP = (
    "branch or commit of --bench-repo whose first-parent history is replayed "
    "(default: its default branch)"
)
RECIPES_REF_HELP = (
    "branch or commit of --recipes whose history gives each PR its recipes "
    "(default: its default branch)"
)


def add_replay_options(parser: argparse.ArgumentParser, out_help: str, cache_help: str) -> None:
    add_repo(parser, "bench", ref_help=BENCH_REF_HELP)
    add_repo(parser, "recipes", ref_help=RECIPES_REF_HELP)
    parser.add_argument("--since", help="first merge day (YYYY-MM-DD, UTC, inclusive)")
    parser.add_argument("--until", help="last merge day (YYYY-MM-DD, UTC, inclusive)")
    parser.add_argument(
        "--pr", type=int, action="append", default=[], help="only PR N (repeatable)"
    )
    add_output(parser, out_help)
    add_jobs(parser, 0, "worker processes (default 0: every core)")
    parser.add_argument("--cache", type=Path, help=cache_help)
    parser.add_argument("--rules", type=Path, help="rules directory (default: bundled rules/)")


def replay_settings(args: argparse.Namespace) -> Settings:
    """The replay's settings from the options, each checked with a one-line error; sets
    ``args.jobs`` to the worker count (0: every core)."""
    args.jobs = jobs(args) or os.cpu_count() or 1
    for flag, path in (("--bench-repo", args.bench_repo), ("--recipes", args.recipes)):
        must_exist(path, flag)
    if not is_git_repo(args.bench_repo):
        raise InputError(
            Location("--bench-repo"), f"{args.bench_repo} is not a git repository (a history)"
        )
    window(args.since, args.until)
    settings = settings_for(args.bench_repo, args.recipes, args.rules)
    bench_ref = args.bench_ref or default_branch(args.bench_repo)
    read_ref(args.bench_repo, bench_ref, "--bench-ref")
    recipes_ref = args.recipes_ref
    if recipes_ref and not settings.recipes_is_git:
        raise InputError(Location("--recipes-ref"), f"{args.recipes} is not a git repository")
    if recipes_ref:
        read_ref(args.recipes, recipes_ref, "--recipes-ref")
    settings = replace(
        settings,
        bench_ref=bench_ref,
        recipes_ref=recipes_ref,
        bench_name=_name(args.bench_repo, args.bench_name, settings.bench_name),
        recipes_name=_name(args.recipes, args.recipes_name, settings.recipes_name),
    )
    check_prs(args.bench_repo, bench_ref, args.pr, args.since, args.until)
    return settings


def window(since: str | None, until: str | None) -> None:
    """``--since`` and ``--until`` are days, the first not after the last."""
    days = {flag: _day(flag, value) for flag, value in (("--since", since), ("--until", until))}
    first, last = days["--since"], days["--until"]
    if first is not None and last is not None and first > last:
        raise InputError(Location("--since"), f"{since} is after --until {until}: no day between")


def _day(flag: str, value: str | None) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InputError(Location(flag), f"'{value}' is not a day (YYYY-MM-DD)") from None


def check_prs(
    repo: Path, ref: str, wanted: list[int], since: str | None, until: str | None
) -> None:
    """Each ``--pr`` is a merged PR of the replayed history (and window)."""
    if not wanted:
        return
    log = first_parent_log(repo, ref)
    merged = {pr.number for pr in merged_prs(log)}
    in_window = {pr.number for pr in merged_prs(log, since=since, until=until)}
    for number in wanted:
        if number not in merged:
            raise InputError(
                Location("--pr"),
                f"#{number} is not a merged PR on the first-parent history of {ref} in {repo}",
            )
        if number not in in_window:
            raise InputError(
                Location("--pr"), f"#{number} was not merged between --since and --until"
            )


def _name(path: Path, given: str | None, default: str) -> str:
    """``--*-name``, else the GitHub ``origin``, else the upstream name the texts quote."""
    found = repo_name(path, given)
    return default if found == LOCAL else found


class ReplayProgress(Progress):
    """The bar of a replay: one step a PR, labelled with its number and outcome."""

    def row(self, done: int, total: int, row: PRRow) -> None:
        self.reach(done, total, f"#{row.number} {row.outcome}")


def replay_progress(what: str) -> ReplayProgress:
    return ReplayProgress(sys.stderr, what, "PRs")
