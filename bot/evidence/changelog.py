"""``perf-changelog.yaml`` entries and which of them name a config key (§4).

The file is a YAML list of mappings with ``config-keys`` (list, ``*`` is a wildcard converted
to ``.*`` and matched against the whole key, every other character literal: not fnmatch),
``description`` (list of lines), ``pr-link`` and optional flags. Entries are quoted as the
benchmark's own measurement, never re-derived.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from bot.errors import InputError, Location

_PR_NUMBER = re.compile(r"/pull/(\d+|XXX)/?$")


@dataclass(frozen=True)
class ChangelogEntry:
    config_keys: tuple[str, ...]
    description: tuple[str, ...]
    pr_link: str
    evals_only: bool
    line: int | None  # 1-based line of the entry in the file

    @property
    def pr_number(self) -> int | None:
        """The PR number of ``pr-link``; None for a placeholder (``…/pull/XXX``) or other URL."""
        match = _PR_NUMBER.search(self.pr_link)
        return int(match.group(1)) if match and match.group(1).isdigit() else None


def key_matches(pattern: str, key: str) -> bool:
    """InferenceX changelog matching: ``*`` → ``.*``, full match, the rest literal."""
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, key) is not None


def _strings(value: Any, where: Location, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        raise InputError(where, f"'{field}' must be a non-empty list of strings")
    return tuple(str(item) for item in value)


def parse_perf_changelog(
    text: str, label: str = "perf-changelog.yaml"
) -> tuple[ChangelogEntry, ...]:
    """All entries of a ``perf-changelog.yaml`` text; :class:`InputError` names file:line."""
    try:
        data = YAML(typ="rt").load(text)
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        raise InputError(Location(label, line=line), f"malformed YAML: {err.problem}") from err
    except YAMLError as err:
        raise InputError(Location(label), f"malformed YAML: {err}") from err
    if data is None:
        return ()
    if not isinstance(data, CommentedSeq):
        raise InputError(Location(label, line=1), "the changelog must be a YAML list of entries")
    entries: list[ChangelogEntry] = []
    for index, item in enumerate(data):
        line = data.lc.item(index)[0] + 1
        where = Location(label, key=str(index), line=line)
        if not isinstance(item, CommentedMap):
            raise InputError(where, "each changelog entry must be a mapping")
        link = item.get("pr-link")
        if not isinstance(link, str):
            raise InputError(where, "'pr-link' must be a string")
        entries.append(
            ChangelogEntry(
                config_keys=_strings(item.get("config-keys"), where, "config-keys"),
                description=_strings(item.get("description"), where, "description"),
                pr_link=str(link),
                evals_only=item.get("evals-only") is True,
                line=line,
            )
        )
    return tuple(entries)


def entries_for_key(
    entries: Iterable[ChangelogEntry], key: str, pr_number: int | None = None
) -> tuple[ChangelogEntry, ...]:
    """Entries naming ``key``; with ``pr_number``, only those the PR itself added (its
    ``pr-link``, or the ``…/pull/XXX`` placeholder a PR uses for its own new entry)."""
    chosen: list[ChangelogEntry] = []
    for entry in entries:
        if not any(key_matches(pattern, key) for pattern in entry.config_keys):
            continue
        if pr_number is not None:
            own = entry.pr_number == pr_number or entry.pr_link.rstrip("/").endswith("XXX")
            if not own:
                continue
        chosen.append(entry)
    return tuple(chosen)
