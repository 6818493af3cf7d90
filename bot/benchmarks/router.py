"""The router command a benchmark script starts in front of its DP ranks (``vllm-router``).

The extractor stops at the ``vllm serve`` launch, and the router starts after it, so its
command is read from the script text: the ``vllm-router`` command with its continuation lines,
redirections and ``&`` dropped, and ``$VAR`` / ``${VAR}`` replaced by the job's environment,
the launch's own exports, or a plain ``NAME=literal`` assignment of the script. Anything else
stays as written (``$((PORT + 1))``), so the reader sees what the script computes.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from bot.sources import FileSource

ROUTER_PROGRAMS = ("vllm-router",)
_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)=([^\s$`();&|]*)\s*(?:#.*)?$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_REDIRECT = re.compile(r"^(?:\d*>>?|&>|<|\d*>&\d*)")


def router_command(
    source: FileSource, script: str, env: Mapping[str, str]
) -> tuple[str, ...] | None:
    """The router argv of ``script`` (words after expansion as far as known), or None."""
    try:
        text = source.read_bytes(script).decode("utf-8", errors="replace")
    except (OSError, KeyError, ValueError):
        return None
    lines = text.splitlines()
    assigned: dict[str, str] = {}
    for index, line in enumerate(lines):
        match = _ASSIGN.match(line)
        if match is not None:
            assigned[match.group(1)] = match.group(2).strip("\"'")
            continue
        stripped = line.strip()
        if not stripped.startswith(ROUTER_PROGRAMS):
            continue
        joined = [stripped]
        cursor = index
        while joined[-1].endswith("\\") and cursor + 1 < len(lines):
            joined[-1] = joined[-1][:-1]
            cursor += 1
            joined.append(lines[cursor].strip())
        command = " ".join(joined)
        known = {**assigned, **env}
        return tuple(_expand(word, known) for word in _words(command))
    return None


def _words(command: str) -> list[str]:
    try:
        lexer = shlex.shlex(command, posix=False, punctuation_chars=False)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError:
        words = command.split()
    out: list[str] = []
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            continue
        if word in ("&", "&&", "||", ";", "|"):
            break
        if _REDIRECT.match(word):
            skip_next = word in (">", ">>", "<", "2>", "1>", "&>") or word.endswith(">")
            if skip_next and len(word) > 2 and not word.endswith(">"):
                skip_next = False
            continue
        out.append(word)
    return out


def _expand(word: str, known: Mapping[str, str]) -> str:
    quoted = len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'"
    inner = word[1:-1] if quoted else word
    if quoted and word[0] == "'":
        return inner

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        found = known.get(name)
        return found if found is not None and ":opaque:" not in found else match.group(0)

    expanded = _VAR.sub(value, inner)
    if "$" in expanded or any(c.isspace() for c in expanded):
        return f'"{expanded}"'
    return shlex.quote(expanded) if expanded else '""'
