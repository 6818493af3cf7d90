"""Reading flags out of an argv by how they are spelled, with argparse's one rule for where a
value is: ``--f=v``, or the next token ``--f v`` unless that token looks like an option.

This is for text that must stay as written (a logged launch line, a guide command, a recipe
list); what a server is configured with is ``normalise``'s answer, which also folds aliases,
prefixes and versions.
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
