"""``recipe-sync backtest``: replay every merged benchmark PR through the alignment engine.

    recipe-sync backtest --bench-repo DIR --recipes DIR [--since DATE] [--until DATE]
        [--pr N]... [--format md|json|html] [--out FILE] [--jobs N] [--cache FILE]

Each PR on the first-parent history of the benchmark repository's main is aligned against
the recipes main commit current at its merge (the last one you have when the recipes history
ends earlier); ``--recipes`` may also be a plain directory, used for every PR. Exit status:
0 when no PR calls for an alignment PR, 1 when some does (or is blocked), 2 for bad input
or an error row.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bot.backtest.formats import render
from bot.backtest.model import PRRow
from bot.backtest.run import run_backtest, settings_for
from bot.commands.grammar import add_jobs, add_output, jobs, must_exist, output_format, write
from bot.errors import InputError, Location


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "backtest",
        help="replay merged benchmark PRs through the alignment engine",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--bench-repo", type=Path, required=True, help="benchmark git repo")
    parser.add_argument("--recipes", type=Path, required=True, help="recipes git repo or dir")
    parser.add_argument("--since", help="first merge day (YYYY-MM-DD, UTC, inclusive)")
    parser.add_argument("--until", help="last merge day (YYYY-MM-DD, UTC, inclusive)")
    parser.add_argument("--pr", type=int, action="append", default=[], help="only PR N")
    add_output(parser, "write the report to this file (default: stdout)")
    add_jobs(parser, 1, "worker processes (default 1)")
    parser.add_argument("--cache", type=Path, help="JSON-lines result cache (resumable)")
    parser.add_argument("--rules", type=Path, help="rules directory (default: bundled rules/)")
    parser.set_defaults(func=backtest_command)


def backtest_command(args: argparse.Namespace) -> int:
    if jobs(args) < 1:
        raise InputError(Location("--jobs"), "must be a positive number")
    fmt = output_format(args)
    for flag, path in (("--bench-repo", args.bench_repo), ("--recipes", args.recipes)):
        must_exist(path, flag)
    settings = settings_for(args.bench_repo, args.recipes, args.rules)
    tty = sys.stderr.isatty()

    def progress(done: int, total: int, row: PRRow) -> None:
        if tty:
            sys.stderr.write(f"\r[{done}/{total}] #{row.number} {row.outcome:<16}")
            sys.stderr.flush()

    report = run_backtest(
        settings,
        since=args.since,
        until=args.until,
        only=tuple(args.pr),
        jobs=args.jobs,
        cache=args.cache,
        progress=progress,
    )
    if tty:
        sys.stderr.write("\n")
    write(args, render(report, fmt))
    print(report.summary(), file=sys.stderr)
    if report.errors:
        return 2
    drift = ("alignment PR", "blocked", "no edit found")
    return 1 if any(r.outcome in drift for r in report.rows) else 0
