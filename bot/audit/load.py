"""Load both repositories so that one bad file costs only the rows that depend on it.

The benchmark and recipes loaders of the other modules stop at the first bad file, which is
right for a sync (nothing is proposed from a repository that does not load) but not for an
audit of a whole corpus: a malformed master-config entry, a duplicated key or a recipe with
malformed YAML must become rows (or warnings) of the report, and everything else is still
audited.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.benchmarks import BenchRepo
from bot.benchmarks.configs import ConfigNode, master_files
from bot.benchmarks.runners import RunnersFile, load_runners
from bot.errors import InputError
from bot.rules import Rules
from bot.sources import FileSource, read_text
from bot.yamlio.marked import MalformedYaml, MarkedMap, line_of, parse_marked

# A top-level key of a master config: starts in column 0, not a comment or document marker.
_TOP_KEY = re.compile(r"^(?![#\s-]|\.\.\.)(['\"]?)([^:#'\"]+)\1\s*:")


@dataclass(frozen=True)
class BrokenEntry:
    """A master-config key whose YAML does not parse (its neighbours still load)."""

    key: str
    file: str
    line: int
    reason: str


@dataclass
class BenchLoad:
    repo: BenchRepo
    broken: list[BrokenEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # whole master configs left out, why

    def skip_file(self, why: str) -> None:
        """A master config none of whose keys can be read: named in the report's warnings
        and among its unread files (the command exits 2 after writing the report)."""
        self.warnings.append(why)
        self.unread.append(why)


def _parse(text: str, path: str, *, allow_duplicates: bool = False) -> object:
    """Line-marked parse, bounded after alias expansion like every YAML read
    (:mod:`bot.yamlio.bounds`): an alias bomb is an :class:`InputError` naming the file
    (the whole file is left out, not salvaged key by key: nothing in it is trustworthy, and
    walking it would exhaust memory). Malformed text raises :class:`MalformedYaml`."""
    return parse_marked(text, path, first_key_wins=allow_duplicates)


def _chunks(text: str) -> Iterator[tuple[str, int, str]]:
    """(key, first line (1-based), text padded so line numbers stay those of the file)."""
    lines = text.splitlines(keepends=True)
    starts = [
        (i, m.group(2).strip()) for i, line in enumerate(lines) if (m := _TOP_KEY.match(line))
    ]
    for n, (start, key) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        yield key, start + 1, "\n" * start + "".join(lines[start:end])


def _salvage(text: str, path: str, nodes: dict[str, ConfigNode], load: BenchLoad, why: str) -> None:
    """Parse a master config key by key after the whole file failed to parse."""
    load.warnings.append(f"{path}: {why}; its keys were parsed one by one")
    for key, line, chunk in _chunks(text):
        try:
            document = _parse(chunk, path, allow_duplicates=True)
        except MalformedYaml as err:
            reason = f"malformed YAML: {err.problem}"
            load.broken.append(BrokenEntry(key, path, err.line or line, reason))
            continue
        if isinstance(document, MarkedMap):
            for name in document:
                _add(nodes, load, ConfigNode(str(name), path, document, line_of(document, [name])))


def _add(nodes: dict[str, ConfigNode], load: BenchLoad, node: ConfigNode) -> None:
    if node.key in nodes:
        first = nodes[node.key]
        load.warnings.append(
            f"{node.file}:{node.line}: config key '{node.key}' is also defined in "
            f"{first.file}:{first.line}; the first definition is audited"
        )
        return
    nodes[node.key] = node


def load_bench(source: FileSource, rules: Rules) -> BenchLoad:
    """The benchmark repository with every master-config key that parses.

    Raises :class:`InputError` only when there are no master configs at all (then this is not
    a benchmark repository and there is nothing to report on).
    """
    files = master_files(source)
    nodes: dict[str, ConfigNode] = {}
    runners: RunnersFile | None = None
    load = BenchLoad(BenchRepo(source=source, rules=rules, configs=nodes, runners=None))
    for path in files:
        try:
            text = read_text(source, path)
        except InputError as err:
            load.skip_file(f"{err}; every key of {path} is skipped")
            continue
        try:
            document = _parse(text, path)
        except MalformedYaml as err:
            if err.duplicate:
                _salvage(text, path, nodes, load, f"duplicate key at line {err.line}")
            elif err.line is not None:
                why = f"malformed YAML at line {err.line}: {err.problem}"
                _salvage(text, path, nodes, load, why)
            else:  # nested too deeply, or not text libyaml can read at all
                load.skip_file(f"{path}: {err.reason}; every key is skipped")
            continue
        except InputError as err:  # aliases that expand past the bound
            load.skip_file(f"{err}; every key of {path} is skipped")
            continue
        if document is None:
            continue
        if not isinstance(document, MarkedMap):
            load.skip_file(f"{path}:1: a master config must be a mapping of keys; skipped")
            continue
        for key in document:
            _add(nodes, load, ConfigNode(str(key), path, document, line_of(document, [key])))
    try:
        runners = load_runners(source)
    except InputError as err:
        load.warnings.append(
            f"{err}; runner labels are resolved from rules/hardware.yaml alone, so script "
            "choices may differ from the workflow's"
        )
    load.repo.runners = runners
    return load
