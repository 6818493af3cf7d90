"""``recipe-sync score``: agreement with what recipe maintainers actually did.

    recipe-sync score --bench-repo DIR --recipes DIR [--since DATE] [--until DATE] [--pr N]...
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.agreement.practice import practice, to_yaml
from bot.agreement.report import render, summary
from bot.agreement.run import Scorecard, score
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
    parser.add_argument(
        "--pr", type=int, action="append", default=[], help="only PR N (repeatable)"
    )
    add_output(parser, "write the scorecard to this file (default: stdout)")
    add_jobs(parser, 1, "worker processes (default 1)")
    parser.add_argument("--cache", type=Path, help="JSON-lines replay cache (resumable)")
    parser.add_argument("--rules", type=Path, help="rules directory (default: bundled rules/)")
    parser.add_argument(
        "--practice",
        type=Path,
        help="also write what maintainers did per knob class to this YAML file "
        "(rules/practice.yaml, quoted by the PR text)",
    )
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
        only=tuple(args.pr),
        workers=args.jobs,
        cache=args.cache,
        progress=progress,
    )
    if tty:
        sys.stderr.write("\n")
    write(args, render(card, fmt))
    if args.practice is not None:
        found = practice(card.proposals, card.linked, _source(card), _command(args))
        args.practice.parent.mkdir(parents=True, exist_ok=True)
        args.practice.write_text(to_yaml(found), encoding="utf-8")
    print(summary(card), file=sys.stderr)
    return 0


def _source(card: Scorecard) -> str:
    end = datetime.fromtimestamp(card.history_end, UTC).date().isoformat()
    window = f"{card.since or 'start'} … {card.until or 'end'}"
    return f"recipes main to {end}; benchmark PRs merged {window}"


def _command(args: argparse.Namespace) -> str:
    """The command that remakes the practice file, with the window but no local paths."""
    parts = ["recipe-sync score --bench-repo InferenceX --recipes recipes"]
    parts += [f"--since {args.since}"] if args.since else []
    parts += [f"--until {args.until}"] if args.until else []
    parts += [f"--practice {args.practice.name}"]
    return " ".join(parts)
