"""``recipe-sync score``: agreement with what recipe maintainers actually did.

    recipe-sync score --bench-repo DIR --recipes DIR [--since DATE] [--until DATE]
        [--format md|json|html] [--out FILE] [--jobs N] [--cache FILE]

Replays the benchmark PRs merged in the window where the App would have seen them open
(against the recipes main of that moment), links the recipes history's maintainer commits
to them by content, and scores each proposed YAML edit (adopted at the same node, with the
same value elsewhere, another value, not adopted, too recent to tell) and each linked
maintainer change (its leaves proposed or missed, and why). ``--recipes`` must be a git
history. Exit status 0, or 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bot.agreement.report import render, summary
from bot.agreement.run import score
from bot.backtest.model import PRRow
from bot.backtest.run import settings_for
from bot.commands.grammar import add_jobs, add_output, jobs, must_exist, output_format, write
from bot.errors import InputError, Location


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score proposals against what recipe maintainers did (agreement)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--bench-repo", type=Path, required=True, help="benchmark git repo")
    parser.add_argument("--recipes", type=Path, required=True, help="recipes git repo")
    parser.add_argument("--since", help="first merge day (YYYY-MM-DD, UTC, inclusive)")
    parser.add_argument("--until", help="last merge day (YYYY-MM-DD, UTC, inclusive)")
    add_output(parser, "write the scorecard to this file (default: stdout)")
    add_jobs(parser, 1, "worker processes (default 1)")
    parser.add_argument("--cache", type=Path, help="JSON-lines replay cache (resumable)")
    parser.add_argument("--rules", type=Path, help="rules directory (default: bundled rules/)")
    parser.set_defaults(func=score_command)


def score_command(args: argparse.Namespace) -> int:
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

    card = score(
        settings,
        since=args.since,
        until=args.until,
        workers=args.jobs,
        cache=args.cache,
        progress=progress,
    )
    if tty:
        sys.stderr.write("\n")
    write(args, render(card, fmt))
    print(summary(card), file=sys.stderr)
    return 0
