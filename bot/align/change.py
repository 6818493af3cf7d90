"""Which master-config keys a benchmark PR affects (docs/alignment.md §1).

Pure over two :class:`~bot.benchmarks.BenchRepo` snapshots (the PR base and head, each read
through a ``FileSource``; nothing is checked out or run). A key is affected when its config
entry differs or is new, when a script one of its points resolves to has another blob,
when ``benchmarks/benchmark_lib.sh`` changed and its script sources the library, or when the
PR adds a perf-changelog entry naming it. Each reason is kept, so the PR text can say why.
A key the PR reaches only through files (scripts, the library, the changelog) and whose every
launch line is the same at base and head is *unchanged*: the PR does not change how vLLM is
launched for it, so nothing is aligned for it (:func:`settle_unchanged`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace

from bot.benchmarks import BenchRepo, ChangelogEntry, extract, points
from bot.benchmarks.changelog import matches
from bot.benchmarks.repo import script_choice
from bot.benchmarks.scope import serves_vllm
from bot.errors import InputError, Location, RecipeSyncError
from bot.shell import JobTooLarge
from bot.sources import FileSource
from bot.yamlio.positions import to_plain

BENCHMARK_LIB = "benchmarks/benchmark_lib.sh"


@dataclass(frozen=True)
class AffectedKey:
    key: str
    file: str  # the master config holding it at the head
    line: int | None
    reasons: tuple[str, ...]  # why it is affected, one clause each
    framework: str | None  # None when the entry does not validate
    out_of_scope: str | None = None  # why it is not aligned (framework not rendered)
    # why it is not aligned although a file it reads changed: its launch lines did not
    unchanged: str | None = None


@dataclass(frozen=True)
class BenchmarkChange:
    base: str  # labels of the two snapshots
    head: str
    keys: tuple[AffectedKey, ...]  # sorted by key
    changed_files: tuple[str, ...]  # files under benchmarks/ and configs/ that differ
    removed_keys: tuple[str, ...]  # keys of the base that the head no longer has
    notes: tuple[str, ...] = ()  # what could not be read, and what it means for the keys

    @property
    def in_scope(self) -> tuple[AffectedKey, ...]:
        return tuple(k for k in self.keys if k.out_of_scope is None and k.unchanged is None)

    @property
    def out_of_scope(self) -> tuple[AffectedKey, ...]:
        return tuple(k for k in self.keys if k.out_of_scope is not None)

    @property
    def unchanged(self) -> tuple[AffectedKey, ...]:
        return tuple(k for k in self.keys if k.out_of_scope is None and k.unchanged is not None)


def _blobs(source: FileSource, directories: Iterable[str]) -> dict[str, str]:
    return {
        path: source.blob_sha(path)
        for directory in directories
        for path in source.iter_files(directory)
    }


def changed_files(base: FileSource, head: FileSource) -> tuple[str, ...]:
    """Paths under ``benchmarks/``, ``configs/`` and ``runners/`` whose blob differs."""
    folders = ("benchmarks", "configs", ".github/configs", "runners")
    before, after = _blobs(base, folders), _blobs(head, folders)
    return tuple(sorted(p for p in {*before, *after} if before.get(p) != after.get(p)))


def _same_entry(base: BenchRepo, head: BenchRepo, key: str) -> bool:
    # one parsed chunk (cached by its text) serves every commit with the same text of it
    same = base.configs[key].document is head.configs[key].document
    return same or _entry_text(base, key) == _entry_text(head, key)


def _entry_text(repo: BenchRepo, key: str) -> object:
    node = repo.configs[key]
    return to_plain(node.document[node.key])


def scripts_of(repo: BenchRepo, key: str) -> tuple[str, ...]:
    """Scripts the key's points resolve to (no evaluation, only the launcher's naming)."""
    entry = repo.entry(key)
    if entry.multinode:
        return ()
    found: dict[str, None] = {}
    for row in repo.rows(key):
        choice = script_choice(repo, key, row.point)
        if choice.path is not None:
            found[choice.path] = None
    return tuple(found)


def _new_changelog_entries(base: BenchRepo, head: BenchRepo) -> tuple[ChangelogEntry, ...]:
    def identity(entry: ChangelogEntry) -> tuple[object, ...]:
        return (entry.config_keys, entry.description, entry.pr_link)

    try:
        before = [identity(e) for e in base.changelog()]
    except InputError:
        before = []  # a broken base changelog: every head entry counts as new
    new: list[ChangelogEntry] = []
    for entry in head.changelog():  # a broken head changelog: see benchmark_change
        if identity(entry) in before:
            before.remove(identity(entry))
        else:
            new.append(entry)
    return tuple(new)


def benchmark_change(
    base: BenchRepo, head: BenchRepo, only_keys: Collection[str] | None = None
) -> BenchmarkChange:
    """The affected keys of the PR ``base`` → ``head``; ``only_keys`` restricts the set and
    includes a requested key even when the PR leaves it unchanged (said in its reasons)."""
    for key in only_keys or ():
        if key not in head.configs:
            raise InputError(Location(head.source.label, key), "no such master-config key")
    files = changed_files(base.source, head.source)
    scripts_changed = {p for p in files if p.startswith("benchmarks/")}
    lib_changed = BENCHMARK_LIB in scripts_changed
    notes: list[str] = []
    try:
        changelog = _new_changelog_entries(base, head)
    except InputError as err:  # main has carried a malformed changelog: the configs still count
        changelog = ()
        notes.append(
            f"the PR's perf-changelog is not read ({err}): keys come from configs and scripts"
        )
    reasons: dict[str, list[str]] = {}
    for key in head.configs:
        if only_keys is not None and key not in only_keys:
            continue
        found: list[str] = []
        node = head.configs[key]
        if key not in base.configs:
            found.append(f"new config entry in {node.file}")
        elif not _same_entry(base, head, key):
            found.append(f"config entry changed in {node.file}")
        if scripts_changed:
            for script in _scripts(head, key):
                if script in scripts_changed:
                    found.append(f"script {script} changed")
                elif lib_changed and "benchmark_lib.sh" in _text(head.source, script):
                    found.append(f"{BENCHMARK_LIB} changed and {script} sources it")
        for entry in changelog:
            if any(matches(pattern, key) for pattern in entry.config_keys):
                where = f" (line {entry.line})" if entry.line else ""
                found.append(f"new perf-changelog entry names it{where}")
        if not found and only_keys is not None:
            found.append("requested with --config-key (the PR does not change it)")
        if found:
            reasons[key] = list(dict.fromkeys(found))
    keys = tuple(_affected(head, key, tuple(reasons[key])) for key in sorted(reasons))
    return BenchmarkChange(
        base=base.source.label,
        head=head.source.label,
        keys=keys,
        changed_files=files,
        removed_keys=tuple(sorted(k for k in base.configs if k not in head.configs)),
        notes=tuple(notes),
    )


def _scripts(repo: BenchRepo, key: str) -> tuple[str, ...]:
    try:
        return scripts_of(repo, key)
    except RecipeSyncError:
        return ()  # an invalid entry: reported when the key is extracted


def _text(source: FileSource, path: str) -> str:
    try:
        return source.read_bytes(path).decode("utf-8", "replace")
    except InputError:
        return ""


def _affected(head: BenchRepo, key: str, reasons: tuple[str, ...]) -> AffectedKey:
    node = head.configs[key]
    try:
        framework: str | None = head.entry(key).framework
    except RecipeSyncError:
        framework = None
    out_of_scope = None
    if framework is not None and framework != "vllm" and not serves_vllm(framework):
        out_of_scope = head.rules.models.unrendered_frameworks.get(
            framework, f"framework {framework} is not rendered by vLLM recipes"
        )
    return AffectedKey(key, node.file, node.line, reasons, framework, out_of_scope)


# reasons that change a key's own entry (its points, image, model): never "unchanged"
_OWN_ENTRY = ("new config entry", "config entry changed", "requested with --config-key")


def settle_unchanged(base: BenchRepo, head: BenchRepo, change: BenchmarkChange) -> BenchmarkChange:
    """Mark the keys the PR reaches only through shared files (a script, the library it
    sources, a changelog line) whose every (point, arm) launch line, image and env are the
    same at base and head: a harness change (AIPerf timing, an eval step) does not change
    how vLLM is launched, so a recipe has nothing to take from it. A key whose launch lines
    cannot be compared (an error, a multi-node entry) stays affected."""
    keys = []
    for key in change.keys:
        own = any(reason.startswith(_OWN_ENTRY) for reason in key.reasons)
        if key.out_of_scope is None and not own and key.key in base.configs:
            before, after = _launches(base, key.key), _launches(head, key.key)
            if before is not None and before == after:
                files = "; ".join(key.reasons)
                key = replace(key, unchanged=f"{files}, but none of its launch lines did")
        keys.append(key)
    return replace(change, keys=tuple(keys))


def _launches(repo: BenchRepo, key: str) -> tuple[object, ...] | None:
    """What vLLM is started with at each (point, arm) of ``key``; None when not comparable."""
    try:
        if repo.entry(key).multinode:
            return None
        found: list[object] = []
        for point, arm in points(repo, key):
            line = extract(repo, key, point, arm)
            found.append(
                (point, arm, line.status, line.invalid, line.image, line.model, line.argv,
                 tuple(line.env.items()), line.unresolved, line.alternatives, line.staged_model)
            )  # fmt: skip
    except JobTooLarge:
        raise
    except RecipeSyncError:
        return None
    return tuple(found)
