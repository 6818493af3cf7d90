"""``perf-changelog.yaml``: the benchmark's own record of what a PR changed
(docs/spec/benchmark-extraction.md §4).

The only parser of the file. It is a YAML list of mappings with ``config-keys`` (list; ``*``
is a wildcard converted to ``.*`` and matched against the whole key, every other character
literal: not fnmatch), ``description`` (list of lines), ``pr-link`` and optional flags.
Entries are quoted as the benchmark's own measurement, never re-derived.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from bot.benchmarks.configs import parse_chunks, parse_yaml
from bot.errors import InputError, Location
from bot.memo import BoundedMemo
from bot.sources import FileSource, read_text
from bot.yamlio.marked import MarkedMap, MarkedSeq

CHANGELOG = "perf-changelog.yaml"
_PR_NUMBER = re.compile(r"/pull/(\d+|XXX)/?$")


@dataclass(frozen=True)
class ChangelogEntry:
    index: int  # position in the file (0-based)
    line: int | None  # 1-based line of the entry in the file
    config_keys: tuple[str, ...]
    description: tuple[str, ...]
    pr_link: str
    evals_only: bool = False
    all_evals: bool = False
    append_only: bool = False
    scenario_types: tuple[str, ...] = ()

    @property
    def pr_number(self) -> int | None:
        """The PR number of ``pr-link``; None for a placeholder (``…/pull/XXX``) or other URL."""
        match = _PR_NUMBER.search(self.pr_link)
        return int(match.group(1)) if match and match.group(1).isdigit() else None


@lru_cache(maxsize=1024)
def key_pattern(pattern: str) -> re.Pattern[str]:
    """``*`` is a wildcard (``.*``, full match); every other character is literal."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")))


def matches(pattern: str, key: str) -> bool:
    return key_pattern(pattern).fullmatch(key) is not None


def _strings(value: object, where: Location, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise InputError(where, f"'{name}' must be a non-empty list of strings")
    return tuple(str(v) for v in value)


def parse_changelog(text: str, label: str = CHANGELOG) -> tuple[ChangelogEntry, ...]:
    """All entries of a ``perf-changelog.yaml`` text; :class:`InputError` names file:line."""
    chunks = parse_chunks(text, label, sequence=True)
    if chunks is not None:  # one parse per entry, cached: a PR adds an entry or two
        items = [(chunk[0], chunk.item_line(0) + offset) for offset, chunk in chunks]
    else:
        document = parse_yaml(text, label)
        if document is None:
            return ()
        if not isinstance(document, MarkedSeq):
            raise InputError(
                Location(label, line=1), "the changelog must be a YAML list of entries"
            )
        items = [(item, document.item_line(i)) for i, item in enumerate(document)]
    entries: list[ChangelogEntry] = []
    for index, (item, line) in enumerate(items):
        where = Location(label, key=str(index), line=line)
        if not isinstance(item, MarkedMap):
            raise InputError(where, "each changelog entry must be a mapping")
        pr_link = item.get("pr-link", "")  # main has carried entries without one
        if pr_link is None:
            pr_link = ""
        if not isinstance(pr_link, str):
            raise InputError(where, "'pr-link' must be a string")
        scenario = item.get("scenario-type") or []
        entries.append(
            ChangelogEntry(
                index=index,
                line=line,
                config_keys=_strings(item.get("config-keys"), where, "config-keys"),
                description=_strings(item.get("description"), where, "description"),
                pr_link=pr_link,
                evals_only=item.get("evals-only") is True,
                all_evals=item.get("all-evals") is True,
                append_only=item.get("append-only") is True,
                scenario_types=tuple(str(s) for s in scenario)
                if isinstance(scenario, list)
                else (str(scenario),),
            )
        )
    return tuple(entries)


LOADED_BLOBS = 16  # a PR's base and head, its neighbours', the App's open PRs
_LOADED: BoundedMemo[str, tuple[ChangelogEntry, ...]] = BoundedMemo(LOADED_BLOBS)  # blob → entries


def load_changelog(source: FileSource) -> tuple[ChangelogEntry, ...]:
    """The entries of the changelog in ``source``, read once per process per blob (while
    among the last :data:`LOADED_BLOBS`): a backtest reads every blob twice (a PR's head is
    the next one's base), the App at every re-sync. A changelog that does not parse raises
    each time."""
    if not source.exists(CHANGELOG):
        return ()
    blob = source.blob_sha(CHANGELOG)
    return _LOADED.get_or_make(blob, lambda: parse_changelog(read_text(source, CHANGELOG)))


def entries_for(
    entries: Iterable[ChangelogEntry], key: str, pr_number: int | None = None
) -> tuple[ChangelogEntry, ...]:
    """Entries naming ``key``; with ``pr_number``, only those the PR itself added (its
    ``pr-link``, or the ``…/pull/XXX`` placeholder a PR uses for its own new entry)."""
    chosen: list[ChangelogEntry] = []
    for entry in entries:
        if not any(matches(pattern, key) for pattern in entry.config_keys):
            continue
        if pr_number is not None:
            own = entry.pr_number == pr_number or entry.pr_link.rstrip("/").endswith("XXX")
            if not own:
                continue
        chosen.append(entry)
    return tuple(chosen)


_VLLM_PR = re.compile(
    r"(?:https://github\.com/vllm-project/vllm/pull/|\bvllm-project/vllm#|(?<![\w/-])vllm#)(\d+)"
)


def vllm_prs(entries: Iterable[ChangelogEntry]) -> tuple[int, ...]:
    """Upstream vLLM PRs the entries' descriptions cite (``vllm-project/vllm#N``, ``vllm#N``
    or the pull URL), in order: the change a new image brings, as the benchmark names it."""
    found = (m.group(1) for e in entries for line in e.description for m in _VLLM_PR.finditer(line))
    return tuple(dict.fromkeys(int(n) for n in found))


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
