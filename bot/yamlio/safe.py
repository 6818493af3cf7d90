"""Plain safe YAML (ruamel's YAML 1.2 safe loader), bounded after alias expansion: for
untrusted files whose values are read as data and whose positions do not matter."""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML

from bot.yamlio.bounds import check_expansion


def load_safe(text: str, name: str) -> Any:
    """The document as plain data; ruamel's own error for malformed YAML, a located
    :class:`~bot.errors.InputError` for one whose aliases expand too far."""
    data = YAML(typ="safe").load(text)
    check_expansion(data, name)
    return data
