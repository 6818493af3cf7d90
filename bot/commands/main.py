"""The ``recipe-sync`` command.

Each subcommand is one module of :mod:`bot.commands` with a ``register(subparsers)``; this
file only lists them. A subcommand handler takes the parsed namespace and returns an exit
status. Expected errors (:class:`bot.errors.RecipeSyncError`, and a failed git command:
:class:`bot.gitcli.GitError`) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from bot import __version__
from bot.errors import RecipeSyncError
from bot.gitcli import GitError

# Every subcommand in --help order, with its one-line help (a test checks each module
# registers the same line). A run imports only the module of the subcommand it names: the
# others' imports (git, GitHub, HTTP, the service, the shell evaluator) cost more than most
# runs' own work, and `recipe-sync --help` needs none of them.
SUBCOMMANDS: dict[str, str] = {
    "align": "plan the recipe edit a benchmark PR calls for and write the alignment PR text",
    "audit": "audit every vLLM config point of a benchmark repository against the recipes",
    "backtest": "replay merged benchmark PRs through the alignment engine",
    "score": "score proposals against what recipe maintainers did (agreement)",
    "render": "render recipes like the upstream JSON API, or one profile with provenance",
    "extract": "statically extract vllm serve launch lines from a benchmark repository",
    "diff": "semantic diff of a benchmark vllm serve launch and a recipe rendering",
    "evidence": "cite the workflow runs, launch lines and evals that verified a benchmark PR",
    "serve": "run the GitHub App webhook endpoint (POST /webhooks/github)",
    "worker": "run queued sync jobs (separately from `serve`, e.g. on several machines)",
    "migrate": "apply the state database's migrations (DATABASE_URL), then exit",
    "rules": "validate the rules/ files (mapping, flags, env, policy)",
    "fixtures": "build the bundled benchmark + recipes fixture repos (seed scenario) as git repos",
    "demo": "run the main job on the bundled fixtures: align benchmark PR #3058, then audit",
    "help": "print the reference of every command (Markdown, for docs/cli.md)",
}


def command_module(name: str) -> ModuleType:
    """The module of subcommand ``name`` (plain imports, one branch each)."""
    if name == "align":
        from bot.commands import align

        return align
    if name == "audit":
        from bot.commands import audit

        return audit
    if name == "backtest":
        from bot.commands import backtest

        return backtest
    if name == "score":
        from bot.commands import score

        return score
    if name == "render":
        from bot.commands import render

        return render
    if name == "extract":
        from bot.commands import extract

        return extract
    if name == "diff":
        from bot.commands import diff

        return diff
    if name == "evidence":
        from bot.commands import evidence

        return evidence
    if name == "serve":
        from bot.commands import serve

        return serve
    if name == "worker":
        from bot.commands import worker

        return worker
    if name == "migrate":
        from bot.commands import migrate

        return migrate
    if name == "rules":
        from bot.commands import rules

        return rules
    if name == "fixtures":
        from bot.commands import fixtures

        return fixtures
    if name == "demo":
        from bot.commands import demo

        return demo
    if name == "help":
        from bot.commands import reference

        return reference
    raise KeyError(name)


def _named(argv: Sequence[str] | None) -> set[str]:
    """The subcommands whose modules ``argv`` needs: the one it names, every one for
    ``help`` or a whole parser (``argv`` None), none for the top-level --help."""
    if argv is None:
        return set(SUBCOMMANDS)
    name = next((a for a in argv if not a.startswith("-")), None)
    if name == "help":
        return set(SUBCOMMANDS)
    return {name} if name in SUBCOMMANDS else set()


class Parser(argparse.ArgumentParser):
    """argparse with the grammar's did-you-mean (:func:`bot.commands.grammar.did_you_mean`)
    for a mistyped command, choice or option; an unknown option is reported with the usage
    of the subcommand it was given to, not the top-level one."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            from bot.commands.grammar import did_you_mean

            names = [str(choice) for choice in choices]
            hint = did_you_mean(str(value), names) or f" (choose from {', '.join(names)})"
            raise argparse.ArgumentError(action, f"invalid choice: '{value}'{hint}")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self._subparsers is None:  # a subcommand: report its own unknowns
            from bot.commands.grammar import did_you_mean

            options = [o for a in self._actions for o in a.option_strings]
            words = [w for w in extras if w.startswith("-")]
            hint = did_you_mean(words[0].split("=", 1)[0], options) if words else ""
            self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed, extras


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; given ``argv``, only the subcommand it names is fully registered
    (the others are listed with their help, which is all a run of another one shows)."""
    parser = Parser(
        prog="recipe-sync",
        description=(
            "Keep vLLM recipe renderings aligned with the launch lines benchmark runs used: "
            "extract launch lines statically, render recipes, diff them under vLLM CLI "
            "semantics, plan the minimal YAML edit and write the alignment PR."
        ),
    )
    parser.add_argument("--version", action="version", version=f"recipe-sync {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    needed = _named(argv)
    for name, summary in SUBCOMMANDS.items():
        if name in needed:
            command_module(name).register(subparsers)
        else:
            subparsers.add_parser(name, help=summary)
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
    except (RecipeSyncError, GitError) as err:
        print(f"recipe-sync: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `recipe-sync … | head` is fine
        return 0
    return status


if __name__ == "__main__":
    raise SystemExit(main())
