"""Untrusted YAML with positions: files and texts read into line-marked plain data
(:mod:`bot.yamlio.marked`, libyaml), bounded after alias expansion, with one located error
for anything malformed; ``line_of`` answers where a key path is, ``to_plain`` gives plain
data. Rules, per-repository settings, master configs and the perf changelog are read here;
ruamel.yaml is used only where a recipe is edited in place (:mod:`bot.recipes.edit`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.errors import InputError, Location
from bot.yamlio.marked import MarkedMap, MarkedSeq, line_of, parse_marked, to_plain

__all__ = [
    "MarkedMap",
    "MarkedSeq",
    "line_of",
    "parse_untrusted",
    "parse_yaml_with_positions",
    "read_yaml_with_positions",
    "to_plain",
]


def read_yaml_with_positions(path: Path, display: str | None = None) -> Any:
    """Parse a YAML file into line-marked data."""
    name = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(Location(name), f"cannot read file: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise InputError(Location(name), "file is not UTF-8") from err
    return parse_untrusted(text, name)


def parse_untrusted(text: str, name: str) -> Any:
    """Line-marked parse of untrusted YAML text, bounded after alias expansion.

    The one loader for rules, per-repo configs and benchmark master configs: a located
    one-line :class:`InputError` for malformed YAML and for documents whose aliases expand
    past :mod:`bot.yamlio.bounds`' limits (so :func:`to_plain` never sees an alias bomb)."""
    return parse_marked(text, name)


def parse_yaml_with_positions(text: str, name: str) -> Any:
    """:func:`read_yaml_with_positions` of a text already read (e.g. from a git tree)."""
    return parse_untrusted(text, name)
