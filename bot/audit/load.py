"""Load both repositories so that one bad file costs only the rows that depend on it.

The benchmark and recipes loaders of the other modules stop at the first bad file, which is
right for a sync (nothing is proposed from a repository that does not load) but not for an
audit of a whole corpus: a malformed master-config entry, a duplicated key or a recipe with
malformed YAML must become rows (or warnings) of the report, and everything else is still
audited.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from bot.benchmarks import BenchRepo
from bot.benchmarks.configs import ConfigNode, find_master_files
from bot.benchmarks.runners import RunnersFile, load_runners
from bot.errors import InputError, Location
from bot.recipes import RecipesRepo, load_recipes
from bot.rules import Rules
from bot.rules.loader import line_of
from bot.sources import FileSource, read_text

# A top-level key of a master config: starts in column 0, not a comment or document marker.
_TOP_KEY = re.compile(r"^(?![#\s-]|\.\.\.)(['\"]?)([^:#'\"]+)\1\s*:")
MAX_BROKEN_RECIPES = 64  # past this many bad recipe files the repository is reported unusable


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


def _parse(text: str, *, allow_duplicates: bool = False) -> object:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = allow_duplicates
    return yaml.load(text)


def _mark_line(err: MarkedYAMLError) -> int | None:
    mark = err.problem_mark or err.context_mark
    return mark.line + 1 if mark is not None else None


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
            document = _parse(chunk, allow_duplicates=True)
        except MarkedYAMLError as err:
            reason = f"malformed YAML: {err.problem or err.context}"
            load.broken.append(BrokenEntry(key, path, _mark_line(err) or line, reason))
            continue
        except YAMLError as err:
            load.broken.append(BrokenEntry(key, path, line, f"malformed YAML: {err}"))
            continue
        if isinstance(document, CommentedMap):
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
    files = find_master_files(source)
    if not files:
        raise InputError(
            Location(source.label),
            "no master configs found (configs/amd-master.yaml or configs/nvidia-master.yaml)",
        )
    nodes: dict[str, ConfigNode] = {}
    runners: RunnersFile | None = None
    load = BenchLoad(BenchRepo(source=source, rules=rules, configs=nodes, runners=None))
    for path in files:
        try:
            text = read_text(source, path)
        except InputError as err:
            load.warnings.append(f"{err}; every key of {path} is skipped")
            continue
        try:
            document = _parse(text)
        except DuplicateKeyError as err:
            _salvage(text, path, nodes, load, f"duplicate key at line {_mark_line(err)}")
            continue
        except MarkedYAMLError as err:
            why = f"malformed YAML at line {_mark_line(err)}: {err.problem or err.context}"
            _salvage(text, path, nodes, load, why)
            continue
        except YAMLError as err:
            load.warnings.append(f"{path}: malformed YAML: {err}; every key is skipped")
            continue
        except RecursionError:
            load.warnings.append(f"{path}: nested too deeply to parse; every key is skipped")
            continue
        if document is None:
            continue
        if not isinstance(document, CommentedMap):
            load.warnings.append(f"{path}:1: a master config must be a mapping of keys; skipped")
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


# --- recipes ---------------------------------------------------------------------------------


@dataclass
class _Without:
    """A view of ``inner`` without some files (recipes that do not load)."""

    inner: FileSource
    hidden: Mapping[str, str]
    label: str = ""

    def __post_init__(self) -> None:
        self.label = self.inner.label

    def read_bytes(self, path: str) -> bytes:
        if path in self.hidden:
            raise InputError(Location(f"{self.label}:{path}"), "file does not exist")
        return self.inner.read_bytes(path)

    def exists(self, path: str) -> bool:
        return path not in self.hidden and self.inner.exists(path)

    def iter_files(self, directory: str = "") -> Iterator[str]:
        return (p for p in self.inner.iter_files(directory) if p not in self.hidden)

    def blob_sha(self, path: str) -> str:
        return self.inner.blob_sha(path)


@dataclass(frozen=True)
class RecipesLoad:
    """The recipes repository without its broken recipe files, or why it is unusable."""

    repo: RecipesRepo | None
    error: str | None = None  # taxonomy, strategies or too many recipes do not load
    broken: Mapping[str, str] = field(default_factory=dict)  # recipe path → why

    def broken_recipe_for(self, model: str) -> tuple[str, str] | None:
        """(path, why) when ``model`` is the hf_id of a recipe file that does not load."""
        path = f"models/{model}.yaml"
        reason = self.broken.get(path)
        return (path, reason) if reason is not None else None


def _failed_recipe(err: InputError, label: str) -> str | None:
    prefix = f"{label}:"
    file = err.location.file
    if not file.startswith(prefix):
        return None
    path = file[len(prefix) :]
    return path if path.startswith("models/") and path.endswith(".yaml") else None


def load_recipes_tolerant(source: FileSource) -> RecipesLoad:
    """``load_recipes``, leaving out each recipe file that does not load (and saying why)."""
    broken: dict[str, str] = {}
    for _ in range(MAX_BROKEN_RECIPES + 1):
        try:
            repo = load_recipes(_Without(source, broken) if broken else source)
        except InputError as err:
            path = _failed_recipe(err, source.label)
            if path is None or path in broken:
                return RecipesLoad(None, str(err), dict(broken))
            broken[path] = str(err)
            continue
        return RecipesLoad(repo, None, dict(broken))
    return RecipesLoad(
        None, f"more than {MAX_BROKEN_RECIPES} recipe files do not load", dict(broken)
    )
