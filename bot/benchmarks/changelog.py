"""``perf-changelog.yaml``: which changelog entries name a config key (§4)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from bot.benchmarks.configs import parse_yaml
from bot.errors import InputError, Location
from bot.rules.loader import line_of
from bot.sources import FileSource, read_text

CHANGELOG = "perf-changelog.yaml"


@dataclass(frozen=True)
class ChangelogEntry:
    index: int  # position in the file (0-based)
    line: int | None
    config_keys: tuple[str, ...]
    description: tuple[str, ...]
    pr_link: str
    evals_only: bool = False
    all_evals: bool = False
    append_only: bool = False
    scenario_types: tuple[str, ...] = ()


@lru_cache(maxsize=1024)
def key_pattern(pattern: str) -> re.Pattern[str]:
    """``*`` is a wildcard (``.*``, full match); every other character is literal."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")))


def matches(pattern: str, key: str) -> bool:
    return key_pattern(pattern).fullmatch(key) is not None


def _strings(value: object, path: str, line: int | None, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise InputError(
            Location(path, name, line), f"'{name}' must be a non-empty list of strings"
        )
    return tuple(str(v) for v in value)


def load_changelog(source: FileSource) -> tuple[ChangelogEntry, ...]:
    if not source.exists(CHANGELOG):
        return ()
    document = parse_yaml(read_text(source, CHANGELOG), CHANGELOG)
    if document is None:
        return ()
    if not isinstance(document, CommentedSeq):
        raise InputError(Location(CHANGELOG, line=1), "perf-changelog.yaml must be a YAML list")
    entries: list[ChangelogEntry] = []
    for index, item in enumerate(document):
        line = line_of(document, [index])
        if not isinstance(item, CommentedMap):
            raise InputError(Location(CHANGELOG, str(index), line), "entry must be a mapping")
        keys = _strings(item.get("config-keys"), CHANGELOG, line, f"{index}.config-keys")
        description = _strings(item.get("description"), CHANGELOG, line, f"{index}.description")
        pr_link = item.get("pr-link")
        if not isinstance(pr_link, str):
            raise InputError(Location(CHANGELOG, f"{index}.pr-link", line), "pr-link is required")
        scenario = item.get("scenario-type") or []
        entries.append(
            ChangelogEntry(
                index=index,
                line=line,
                config_keys=keys,
                description=description,
                pr_link=pr_link,
                evals_only=bool(item.get("evals-only", False)),
                all_evals=bool(item.get("all-evals", False)),
                append_only=bool(item.get("append-only", False)),
                scenario_types=tuple(str(s) for s in scenario),
            )
        )
    return tuple(entries)


def entries_for(changelog: tuple[ChangelogEntry, ...], key: str) -> tuple[ChangelogEntry, ...]:
    return tuple(e for e in changelog if any(matches(p, key) for p in e.config_keys))


def dangling_patterns(
    changelog: tuple[ChangelogEntry, ...], keys: set[str] | list[str]
) -> list[tuple[ChangelogEntry, str]]:
    """Patterns that match no master-config key (the sweep gate rejects them)."""
    known = list(keys)
    return [
        (entry, pattern)
        for entry in changelog
        for pattern in entry.config_keys
        if not any(matches(pattern, key) for key in known)
    ]
