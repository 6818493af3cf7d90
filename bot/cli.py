"""The ``recipe-sync`` command.

Each concern registers its own subcommand from a ``cli`` module next to its code, so this
file only lists them. A subcommand handler takes the parsed namespace and returns an exit
status. Expected errors (:class:`bot.errors.RecipeSyncError`) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from bot import __version__
from bot.errors import RecipeSyncError

# Modules exposing ``register(subparsers)``; order is the order shown in --help.
COMMAND_MODULES: tuple[str, ...] = (
    "bot.align.cli",
    "bot.audit.cli",
    "bot.backtest.cli",
    "bot.recipes.cli",
    "bot.benchmarks.cli",
    "bot.vllm.cli",
    "bot.evidence.cli",
    "bot.web.cli",
    "bot.jobs.cli",
    "bot.rules.cli",
    "bot.fixtures_cli",
    "bot.demo",
)


def build_parser() -> argparse.ArgumentParser:
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
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
