"""Values known only when a script runs, as the evaluator names them and as a reader sees them.

The shell evaluator spells such a value ``<NAME:opaque:reason>`` (``<PORT:opaque:runner-node>``)
so that it survives word splitting and carries why it is unknown. That spelling is internal:
every text a person reads names the value as the script wrote it (``$PORT``). The format lives
here, below every package, so that the evaluator and the texts share one definition.
"""

from __future__ import annotations

import re

# `<NAME:opaque:reason>`: NAME may be a variable, a command or a short expression; no spaces,
# so word splitting never cuts a placeholder apart.
PLACEHOLDER_RE = re.compile(r"<([^\s<>:]+):opaque:([a-z0-9][a-z0-9.-]*)>")

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def placeholder(name: str, reason: str) -> str:
    compact = re.sub(r"[\s<>:]+", "", name) or "value"
    return f"<{compact}:opaque:{reason}>"


def as_variables(text: str) -> str:
    """``text`` as a reader can take it: each run-time placeholder spelled as the variable the
    script wrote (``http://localhost:$PORT/metrics``), or as ``<NAME>`` when it stands for a
    command or an expression. The reason slug is the evaluator's, not the reader's."""

    def spelled(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"${name}" if _IDENTIFIER.fullmatch(name) else f"<{name}>"

    return PLACEHOLDER_RE.sub(spelled, text)
