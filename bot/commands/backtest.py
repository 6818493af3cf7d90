"""``recipe-sync backtest``: replay every merged benchmark PR through the alignment engine.

    recipe-sync backtest --bench-repo DIR [--bench-ref REF] --recipes DIR [--recipes-ref REF]
        [--since DATE] [--until DATE] [--pr N]... [--format md|json|html] [--out FILE]
        [--jobs N] [--cache FILE]

Each PR on the first-parent history of the benchmark repository's main is aligned against
the recipes main commit current at its merge (the last one you have when the recipes history
ends earlier); ``--recipes`` may also be a plain directory, used for every PR. Exit status:
0 when no PR calls for an alignment PR, 1 when some does (or is blocked), 2 for bad input
or an error row.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.backtest.formats import render
from bot.backtest.run import run_backtest
from bot.commands.grammar import add_command, output_format, write
from bot.commands.replay import add_replay_options, replay_progress, replay_settings


def register(subparsers: Any) -> None:
    summary = "replay merged benchmark PRs through the alignment engine"
    parser = add_command(subparsers, "backtest", __doc__, summary)
    add_replay_options(
        parser,
        "write the report to this file (default: stdout)",
        "JSON-lines result cache (resumable)",
    )
    parser.set_defaults(func=backtest_command)


def backtest_command(args: argparse.Namespace) -> int:
    fmt = output_format(args)
    settings = replay_settings(args)
    bar = replay_progress("backtest")

    report = run_backtest(
        settings,
        since=args.since,
        until=args.until,
        only=tuple(args.pr),
        jobs=args.jobs,
        cache=args.cache,
        progress=bar.row,
    )
    bar.finish()
    write(args, render(report, fmt))
    print(report.summary(), file=sys.stderr)
    if report.errors:
        return 2
    drift = ("alignment PR", "blocked", "no edit found")
    return 1 if any(r.outcome in drift for r in report.rows) else 0
