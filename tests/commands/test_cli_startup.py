"""A run imports only what its subcommand needs: `--help` lists every subcommand without
importing one, and `render` never loads the service, the database layer, GitHub or the
agreement scorer (their imports cost more than most runs' own work)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from bot.commands.main import SUBCOMMANDS, build_parser, command_module

HEAVY = ("bot.service", "sqlalchemy", "github", "git", "bot.agreement", "fastapi", "huey")


def _imported_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def _loaded(modules: set[str], package: str) -> bool:
    return any(m == package or m.startswith(package + ".") for m in modules)


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_each_module_registers_the_listed_help(name: str) -> None:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    command_module(name).register(subparsers)
    (registered,) = [a for a in subparsers._choices_actions if a.dest == name]
    assert registered.help == SUBCOMMANDS[name]


def test_the_whole_parser_lists_every_subcommand_in_order() -> None:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(action.choices) == list(SUBCOMMANDS)


def test_top_level_help_imports_no_subcommand() -> None:
    modules = _imported_after(
        "from bot.commands.main import build_parser\nbuild_parser(['--help']).format_help()"
    )
    assert not any(m.startswith("bot.commands.") and m != "bot.commands.main" for m in modules)
    assert not any(_loaded(modules, heavy) for heavy in (*HEAVY, "bot.align", "pydantic"))


def test_render_loads_neither_the_service_nor_github() -> None:
    modules = _imported_after(
        "from bot.commands.main import build_parser\nbuild_parser(['render', '--help'])"
    )
    assert "bot.commands.render" in modules
    assert not any(_loaded(modules, heavy) for heavy in HEAVY)
