"""``recipe-sync score``: agreement with what recipe maintainers actually did.

    recipe-sync score --bench-repo DIR [--bench-ref REF] --recipes DIR [--recipes-ref REF]
        [--since DATE] [--until DATE] [--pr N]... [--split DATE | --window SINCE..UNTIL ...]
        [--loose] [--history-until DATE] [--format md|json|html] [--out FILE] [--jobs N]
        [--cache FILE] [--practice FILE]

Replays the benchmark PRs merged in the window where the App would have seen them open
(against the recipes main of that moment), links the recipes history's maintainer commits
to them by content, and scores each proposed YAML edit (adopted at the same node, with the
same value at a node covering the benchmarked GPU, another value, the other choice, not
adopted, too recent to tell) and each linked maintainer change (its leaves proposed in the
diff, offered in the PR, or missed, and why), the guide sections and lines proposed
against those maintainers wrote, and the volume of the alignment PRs. Scoring is strict
(docs/agreement.md): ``--loose`` gives the first scorer's figures for comparison.
``--split DATE`` scores the window before DATE and the window from DATE on side by side,
with the whole; ``--window`` names each window. ``--recipes`` must be a git history. Exit
status 0, or 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.agreement.practice import practice, to_yaml
from bot.agreement.proposals import LOOSE, STRICT
from bot.agreement.report import render, summary
from bot.agreement.run import Scorecard, Window, recipes_taxonomy, score
from bot.commands.grammar import add_command, output_format, write
from bot.commands.replay import add_replay_options, replay_progress, replay_settings
from bot.errors import InputError, Location
from bot.rules import load_rules


def register(subparsers: Any) -> None:
    summary = "score proposals against what recipe maintainers did (agreement)"
    parser = add_command(subparsers, "score", __doc__, summary)
    add_replay_options(
        parser,
        "write the scorecard to this file (default: stdout)",
        "JSON-lines replay cache (resumable)",
    )
    parser.add_argument(
        "--split",
        metavar="DATE",
        help="score --since … the day before DATE and DATE … --until side by side, and the whole",
    )
    parser.add_argument(
        "--window",
        action="append",
        default=[],
        metavar="SINCE..UNTIL",
        help="a window to score (either end may be empty); several are reported side by side "
        "with their whole span",
    )
    parser.add_argument(
        "--loose",
        action="store_true",
        help="the first scorer's figures: any later commit, any node, every leaf of an edit",
    )
    parser.add_argument(
        "--history-until",
        metavar="DATE",
        help="read the recipes history only to this day (what was known then)",
    )
    parser.add_argument(
        "--practice",
        type=Path,
        help="also write what maintainers did per knob class, in the first window, to this "
        "YAML file (rules/practice.yaml, quoted by the PR text)",
    )
    parser.set_defaults(func=score_command)


def _day(text: str | None, flag: str) -> str | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError as err:
        raise InputError(Location(flag), f"not a date (YYYY-MM-DD): {text}") from err


def windows(args: argparse.Namespace) -> list[Window]:
    """The windows to score: ``--window``s, or ``--split`` of the ``--since``/``--until``
    window, or that window alone."""
    since, until = _day(args.since, "--since"), _day(args.until, "--until")
    if args.window and args.split:
        raise InputError(Location("--split"), "give --split or --window, not both")
    if args.window:
        found: list[Window] = []
        for text in args.window:
            first, sep, last = text.partition("..")
            if not sep:
                raise InputError(
                    Location("--window"), f"expected SINCE..UNTIL (YYYY-MM-DD..YYYY-MM-DD): {text}"
                )
            found.append((_day(first, "--window"), _day(last, "--window")))
        return found
    if args.split:
        split = date.fromisoformat(_day(args.split, "--split") or "")
        before = (split - timedelta(days=1)).isoformat()
        if (since and since > before) or (until and until < split.isoformat()):
            raise InputError(
                Location("--split"), f"{split} does not fall inside {since or 'start'} … "
                f"{until or 'end'}"
            )  # fmt: skip
        return [(since, before), (split.isoformat(), until)]
    return [(since, until)]


def score_command(args: argparse.Namespace) -> int:
    fmt = output_format(args)
    settings = replay_settings(args)
    wanted = windows(args)
    history_until = _day(args.history_until, "--history-until")
    bar = replay_progress("score")

    cards = score(
        settings,
        windows=wanted,
        only=tuple(args.pr),
        workers=args.jobs,
        cache=args.cache,
        progress=bar.row,
        strictness=LOOSE if args.loose else STRICT,
        history_until=history_until,
    )
    bar.finish()
    write(args, render(cards, fmt))
    if args.practice is not None:
        first = cards[0]  # the first window: rules are chosen on it (docs/agreement.md)
        found = practice(
            # every candidate the replays put forward, proposed in the diff or offered
            (*first.proposals, *first.offered),
            first.linked,
            _source(first),
            _command(args),
            replays=first.replays,
            taxonomy=recipes_taxonomy(args.recipes),
        )
        args.practice.parent.mkdir(parents=True, exist_ok=True)
        args.practice.write_text(to_yaml(found), encoding="utf-8")
    for card in cards:
        print(summary(card), file=sys.stderr)
    return 0


def _source(card: Scorecard) -> str:
    end = datetime.fromtimestamp(card.history_end, UTC).date().isoformat()
    return (
        f"benchmark PRs merged {card.window}; recipes main to {end}; {card.strictness.name} scoring"
    )


def _command(args: argparse.Namespace) -> str:
    """The command that remakes the practice file, with the window but no local paths."""
    parts = ["recipe-sync score --bench-repo InferenceX --recipes recipes"]
    for flag in ("since", "until", "split", "history_until"):
        value = getattr(args, flag)
        parts += [f"--{flag.replace('_', '-')} {value}"] if value else []
    parts += [f"--window {w}" for w in args.window]
    parts += ["--loose"] if args.loose else []
    if args.rules is not None:  # its path is local: say what it differs in
        parts += [f"--rules RULES (propose_above: {_propose_above(args.rules)})"]
    practice_path = args.practice if not args.practice.is_absolute() else args.practice.name
    parts += [f"--practice {practice_path}"]
    return " ".join(parts)


def _propose_above(rules: Path) -> str:
    """The policy's threshold in ``rules`` (0: every candidate in the diff, all scored)."""
    return f"{load_rules(rules).policy.propose_above:g}"
