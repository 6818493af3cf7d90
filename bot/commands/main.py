"""The ``recipe-sync`` command.

Each subcommand is one module of :mod:`bot.commands` with a ``register(subparsers)``; this
file only lists them. A subcommand handler takes the parsed namespace and returns an exit
status. Expected errors (:class:`bot.errors.RecipeSyncError`) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from types import ModuleType

from bot import __version__
from bot.errors import RecipeSyncError


def commands(argv: Sequence[str] = ()) -> tuple[ModuleType, ...]:
    """The subcommand modules to register, in --help order.

    ``render`` alone when argv names it: the whole-corpus render is timed against upstream's
    builder, and the other subcommands' imports (git, GitHub, HTTP, the shell evaluator) cost
    more than the rendering itself.
    """
    if next((a for a in argv if not a.startswith("-")), None) == "render":
        from bot.commands import render

        return (render,)
    from bot.commands import (
        align,
        audit,
        backtest,
        demo,
        diff,
        evidence,
        extract,
        fixtures,
        reference,
        render,
        rules,
        score,
        serve,
        worker,
    )

    return (
        align,
        audit,
        backtest,
        score,
        render,
        extract,
        diff,
        evidence,
        serve,
        worker,
        rules,
        fixtures,
        demo,
        reference,
    )


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recipe-sync",
        description=(
            "Keep vLLM recipe renderings aligned with the launch lines benchmark runs used: "
            "extract launch lines statically, render recipes, diff them under vLLM CLI "
            "semantics, plan the minimal YAML edit and write the alignment PR."
        ),
    )
    parser.add_argument("--version", action="version", version=f"recipe-sync {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in commands(argv):
        command.register(subparsers)
    for sub in subparsers.choices.values():  # docstrings are also --help: no reST markup
        sub.description = plain_text(sub.description)
    return parser


_ROLE = re.compile(r":(?:func|mod|class|meth|attr|data):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(text: str | None) -> str | None:
    """Docstring reST as a terminal shows it: ``x`` and :func:`x` become `x`."""
    if text is None:
        return None
    return _LITERAL.sub(r"`\1`", _ROLE.sub(r"`\1`", text))


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        status: int = args.func(args)
    except RecipeSyncError as err:
        print(f"recipe-sync: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `recipe-sync … | head` is fine
        return 0
    return status


if __name__ == "__main__":
    raise SystemExit(main())
