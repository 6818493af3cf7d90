"""``recipe-sync score``: agreement with what recipe maintainers actually did.

    recipe-sync score --bench-repo DIR [--bench-ref REF] --recipes DIR [--recipes-ref REF]
        [--since DATE] [--until DATE] [--pr N]... [--format md|json|html] [--out FILE]
        [--jobs N] [--cache FILE]

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
from bot.agreement.run import Scorecard, recipes_taxonomy, score
from bot.backtest.model import PRRow
from bot.commands.grammar import output_format, write
from bot.commands.replay import add_replay_options, replay_progress, replay_settings


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score proposals against what recipe maintainers did (agreement)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_replay_options(
        parser,
        "write the scorecard to this file (default: stdout)",
        "JSON-lines replay cache (resumable)",
    )
    parser.add_argument(
        "--practice",
        type=Path,
        help="also write what maintainers did per knob class to this YAML file "
        "(rules/practice.yaml, quoted by the PR text)",
    )
    parser.set_defaults(func=score_command)


def score_command(args: argparse.Namespace) -> int:
    fmt = output_format(args)
    settings = replay_settings(args)
    bar = replay_progress("score")

    def progress(done: int, total: int, row: PRRow) -> None:
        bar.reach(done, total, f"#{row.number} {row.outcome}")

    card = score(
        settings,
        since=args.since,
        until=args.until,
        only=tuple(args.pr),
        workers=args.jobs,
        cache=args.cache,
        progress=progress,
    )
    bar.finish()
    write(args, render(card, fmt))
    if args.practice is not None:
        found = practice(
            card.proposals,
            card.linked,
            _source(card),
            _command(args),
            replays=card.replays,
            taxonomy=recipes_taxonomy(args.recipes),
        )
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
