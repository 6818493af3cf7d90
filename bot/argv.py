"""Reading flags out of an argv by how they are spelled, with argparse's one rule for where a
value is: ``--f=v``, or the next token ``--f v`` unless that token looks like an option.

This is for text that must stay as written (a logged launch line, a guide command, a recipe
list, a script's argv); what a server is configured with is ``bot.vllm.normalise``'s answer,
which also folds aliases, prefixes and versions. Syntax only, so it sits in the lowest layer:
the shell interpreter below ``bot.vllm`` reads flags with it too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def looks_like_option(text: str) -> bool:
    """argparse's view: starts with '-', is not '-', not a negative number, has no space."""
    if not text.startswith("-") or text == "-":
        return False
    if _NEGATIVE_NUMBER.match(text):
        return False
    return not (" " in text and not text.startswith("--") and "=" not in text)


def option_name(token: str) -> str:
    """``--f=v`` → ``--f``; any other token as it is."""
    return token.partition("=")[0]


def option_of(argv: Sequence[str], index: int) -> str | None:
    """The option ``argv[index]`` spells or is the value of: its own name when it starts with
    ``-``, else the word before when that starts with ``-`` and holds no ``=``; None for a
    positional word. Any word starting with ``-`` names itself (``--x -1`` reads ``-1`` as an
    option, unlike :func:`value_at`): this says where a word stands, for a reader to find it
    in the script, not what argparse makes of it."""
    token = argv[index]
    if token.startswith("-"):
        return option_name(token)
    previous = argv[index - 1] if index > 0 else ""
    if previous.startswith("-") and "=" not in previous:
        return previous
    return None


def value_at(argv: Sequence[str], index: int) -> str | None:
    """The value of the option at ``argv[index]``: inline after ``=``, else the next token
    unless it looks like an option; None when it has none."""
    _, eq, inline = argv[index].partition("=")
    if eq:
        return inline
    if index + 1 < len(argv) and not looks_like_option(argv[index + 1]):
        return argv[index + 1]
    return None


def flag_value(argv: Sequence[str], *names: str) -> str | None:
    """The value of the last occurrence of any of ``names`` (spelled exactly): the last one
    wins, as in argparse."""
    found: str | None = None
    for index, token in enumerate(argv):
        if option_name(token) in names:
            found = value_at(argv, index)
    return found


def without_flags(
    argv: Sequence[str], flags: Collection[str], name: Callable[[str], str] = option_name
) -> tuple[str, ...]:
    """``argv`` without every occurrence of ``flags`` and its value; ``name`` is how a token
    is named for the comparison (its spelling, or e.g. a canonical name)."""
    out: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if looks_like_option(token) and name(token) in flags:
            has_value = "=" not in token and value_at(argv, index) is not None
            index += 2 if has_value else 1
            continue
        out.append(token)
        index += 1
    return tuple(out)
