"""A benchmark repository snapshot and the launch lines of its configuration points.

``load_bench_repo(source)`` reads the master configs, ``configs/runners.yaml`` and
``perf-changelog.yaml`` through a :class:`FileSource` (a directory or a git commit). Scripts
and the benchmark library are parsed once per repository (memoised by path, blob SHA kept),
so auditing every point of every config parses each file a single time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from bot.benchmarks.changelog import ChangelogEntry, entries_for, load_changelog
from bot.benchmarks.configs import (
    CHUNK_CACHE_SIZE,
    ConfigNode,
    MasterEntry,
    load_master_configs,
    validate_entry,
)
from bot.benchmarks.extractor import evaluate_script
from bot.benchmarks.jobenv import apply_launcher, template_env
from bot.benchmarks.matrix import Row, expand
from bot.benchmarks.model import ARMS, LaunchLine, Point
from bot.benchmarks.runners import RunnersFile, ScriptChoice, choose_script, load_runners
from bot.benchmarks.scope import multinode_reason
from bot.errors import InputError, Location
from bot.memo import BoundedMemo
from bot.placeholders import placeholder
from bot.rules import Rules, default_rules
from bot.rules.models import Launcher
from bot.shell import EvaluationCache, ScriptParser, ScriptResult
from bot.shell.result import Unresolved
from bot.shell.text import REASONS
from bot.sources import FileSource


@dataclass
class BenchRepo:
    source: FileSource
    rules: Rules
    configs: dict[str, ConfigNode]
    runners: RunnersFile | None
    parser: ScriptParser = field(default_factory=ScriptParser)
    # evaluations shared with other snapshots (a backtest's PRs, the App's jobs); None: none
    evaluations: EvaluationCache | None = None
    _entries: dict[str, MasterEntry] = field(default_factory=dict)
    _rows: dict[str, list[Row]] = field(default_factory=dict)
    _changelog: tuple[ChangelogEntry, ...] | None = None
    # (key, scenario, spec decoding, runner node) → its script: every point of a key asks
    _choices: dict[tuple[str, str, str, str | None], ScriptChoice] = field(default_factory=dict)

    @property
    def keys(self) -> list[str]:
        return list(self.configs)

    def entry(self, key: str) -> MasterEntry:
        cached = self._entries.get(key)
        if cached is not None:
            return cached
        node = self.configs.get(key)
        if node is None:
            raise InputError(Location(self.source.label, key), "no such master-config key")
        entry = validate_entry(node)
        self._entries[key] = entry
        return entry

    def rows(self, key: str) -> list[Row]:
        cached = self._rows.get(key)
        if cached is None:
            cached = self._rows[key] = _expanded(self.entry(key))
        return cached

    def changelog(self) -> tuple[ChangelogEntry, ...]:
        if self._changelog is None:
            self._changelog = load_changelog(self.source)
        return self._changelog

    def changelog_entries(self, key: str) -> tuple[ChangelogEntry, ...]:
        """perf-changelog entries naming ``key`` (``*`` globs, full match)."""
        return entries_for(self.changelog(), key)


_EXPANDED: BoundedMemo[int, tuple[MasterEntry, list[Row]]] = BoundedMemo(CHUNK_CACHE_SIZE)


def _expanded(entry: MasterEntry) -> list[Row]:
    """The rows of ``entry`` (read only), once per validated entry: one is shared by every
    commit whose text of the key is the same (:func:`~bot.benchmarks.configs.validate_entry`),
    and a backtest asks every key's rows at every PR's base and head."""
    found = _EXPANDED.get(id(entry))
    if found is not None and found[0] is entry:
        return found[1]
    rows = expand(entry)
    _EXPANDED.put(id(entry), (entry, rows))  # the entry kept: its id is not reused
    return rows


def load_bench_repo(
    source: FileSource, rules: Rules | None = None, evaluations: EvaluationCache | None = None
) -> BenchRepo:
    return BenchRepo(
        source=source,
        rules=rules or default_rules(),
        configs=load_master_configs(source),
        runners=load_runners(source),
        evaluations=evaluations,
    )


def points(repo: BenchRepo, config_key: str) -> tuple[tuple[Point, str], ...]:
    """(point, arm) pairs: every row's throughput arm, then the eval-only arms selected."""
    rows = repo.rows(config_key)
    out = [(row.point, "throughput") for row in rows]
    out += [(row.point, "eval") for row in rows if row.eval]
    return tuple(out)


def script_choice(
    repo: BenchRepo, config_key: str, point: Point, *, runner_node: str | None = None
) -> ScriptChoice:
    """The script the launcher runs for ``point`` of ``config_key`` (or why none)."""
    # of the point, only the directory (by scenario) and the spec-decoding suffix name it
    memo = (config_key, point.scenario, point.spec_decoding, runner_node)
    found = repo._choices.get(memo)
    if found is None:
        found = repo._choices[memo] = _script_choice(repo, config_key, point, runner_node)
    return found


def _script_choice(
    repo: BenchRepo, config_key: str, point: Point, runner_node: str | None
) -> ScriptChoice:
    entry = repo.entry(config_key)
    return choose_script(
        repo.source,
        repo.rules.hardware,
        repo.runners,
        label=entry.runner,
        prefix=entry.model_prefix,
        precision=entry.precision,
        framework=entry.framework,
        point=point,
        runner_node=runner_node,
    )


def _row(repo: BenchRepo, config_key: str, point: Point) -> Row:
    for row in repo.rows(config_key):
        if row.point == point:
            return row
    raise InputError(
        Location(repo.configs[config_key].file, config_key, repo.configs[config_key].line),
        f"point {point.label()} is not in the search space of this key",
    )


def extract(
    repo: BenchRepo,
    config_key: str,
    point: Point,
    arm: str,
    *,
    runner_node: str | None = None,
) -> LaunchLine:
    """The launch line of one (config key, point, arm), statically extracted."""
    if arm not in ARMS:
        raise InputError(Location("--arm"), f"arm must be one of {', '.join(ARMS)}, not {arm!r}")
    entry = repo.entry(config_key)
    node = repo.configs[config_key]
    if entry.multinode:
        raise InputError(
            Location(node.file, config_key, node.line),
            multinode_reason(entry.framework, node.document.get(config_key)),
        )
    row = _row(repo, config_key, point)
    choice = script_choice(repo, config_key, point, runner_node=runner_node)
    job = template_env(entry, row, arm, runners=repo.runners, runner_node=runner_node)
    env = job
    if choice.launcher is not None and choice.fleet is not None:
        env = apply_launcher(job, choice.launcher, fleet=choice.fleet, runner_node=runner_node)
    extra: list[Unresolved] = []
    if choice.ambiguity:
        extra.append(Unresolved("script", choice.ambiguity, node.file, node.line))
    base = LaunchLine(
        config_key=config_key,
        point=point,
        arm=arm,
        framework=entry.framework,
        runner=entry.runner,
        model=entry.model,
        precision=entry.precision,
        image=entry.image,
        model_prefix=entry.model_prefix,
        script=None,
        script_blob_sha=None,
        argv=(),
        argv_sources=(),
        env={},
        job_env=env,
        unresolved=tuple(extra),
        invalid=None,
        status="no-script",
        reason=choice.problem,
        fleet=choice.fleet,
        runner_node=runner_node,
    )
    if choice.path is None:
        return base

    def run(launcher: Launcher | None, env: dict[str, str]) -> ScriptResult:
        assert choice.path is not None
        return evaluate_script(
            repo.source,
            choice.path,
            env,
            parser=repo.parser,
            workdir=launcher.workdir if launcher is not None else None,
            env_label=f"<job env of {config_key}>",
            cache=repo.evaluations,
        )

    result = run(choice.launcher, env)
    notes = []
    for fleet, launcher in choice.alternatives:
        other = run(launcher, apply_launcher(job, launcher, fleet=fleet, runner_node=None))
        change = line_change(result, other)
        if change:
            notes.append(
                f"runner label {entry.runner} also runs on {fleet}, whose launcher changes this "
                f"line ({change}); this is the {choice.fleet} line, pass --runner-node to "
                "choose the fleet"
            )
    parsed = repo.parser.parse_file(repo.source, choice.path)
    unresolved = tuple(extra) + result.unresolved
    staged = _staged_model(result, choice.launcher, env, job.get("MODEL", entry.model))
    if staged is not None:
        _, model, item = staged
        unresolved = tuple(u for u in unresolved if u != item)
        notes.append(
            f"the model argument is the launcher's staged copy of {model} (rules/hardware.yaml: "
            f"launchers.{choice.fleet}.model_paths; the directory is chosen on the node): "
            f"the served model is {model}, from the config"
        )
    return replace(
        base,
        script=choice.path,
        script_blob_sha=parsed.blob_sha,
        argv=result.argv,
        argv_sources=result.argv_sources,
        env=result.env,
        unresolved=unresolved,
        invalid=result.invalid,
        status=result.status,
        reason=result.reason,
        env_unset=result.env_unset,
        assumptions=result.assumptions,
        files=result.files,
        launch=result.launch,
        notes=tuple(notes),
        staged_model=(staged[0], staged[1]) if staged is not None else None,
        alternatives=result.alternatives,
        reach=result.reach,
    )


def _staged_model(
    result: ScriptResult, launcher: Launcher | None, env: Mapping[str, str], model: str
) -> tuple[str, str, Unresolved] | None:
    """(placeholder, model, its item) when the only unknown the launcher's staged model
    directory leaves is the model argument of ``vllm serve`` itself."""
    if launcher is None or result.status != "launched" or len(result.argv) < 3:
        return None
    token = env.get("MODEL_PATH", "")
    if token != placeholder("MODEL_PATH", "launcher-staged-model"):
        return None
    item = next(
        (
            u
            for u in result.unresolved
            if u.what == "$MODEL_PATH" and u.why == REASONS["launcher-staged-model"]
        ),
        None,
    )
    if item is None or result.argv[2] != token or result.argv[1] != "serve":
        return None
    # anywhere else (a tokenizer path, an env var) it is a value the comparison would read
    others = [
        a
        for i, a in enumerate(result.argv)
        if token in a and i != 2 and result.argv[i - 1] != "--served-model-name"
    ]
    if others or any(token in v for v in result.env.values()):
        return None
    return token, model, item


def line_change(line: ScriptResult, other: ScriptResult) -> str:
    """How ``other`` (the same script under another launcher) differs from ``line``:
    ``"argv `a` → `b`; env X"``, or "" when both launch the same thing."""
    if other.status != line.status:
        return f"it ends {other.status}: {other.reason or other.invalid or ''}".rstrip(": ")
    parts: list[str] = []
    if other.argv != line.argv:
        if len(other.argv) == len(line.argv):
            pairs = [(a, b) for a, b in zip(line.argv, other.argv, strict=True) if a != b]
            parts.append("argv " + ", ".join(f"`{a}` → `{b}`" for a, b in pairs))
        else:
            dropped = dict.fromkeys(w for w in line.argv if w not in other.argv)
            added = dict.fromkeys(w for w in other.argv if w not in line.argv)
            words = [f"+`{w}`" for w in added] + [f"-`{w}`" for w in dropped]
            parts.append("argv " + (", ".join(words) or "word order"))
    env = sorted(n for n in {*line.env, *other.env} if line.env.get(n) != other.env.get(n))
    if env:
        parts.append("env " + ", ".join(env))
    unknown = sorted({u.what for u in other.unresolved} - {u.what for u in line.unresolved})
    if unknown:
        parts.append("unresolved there: " + ", ".join(unknown))
    return "; ".join(parts)


def extract_script(
    source: FileSource,
    script: str,
    env: Mapping[str, str],
    *,
    parser: ScriptParser | None = None,
    workdir: str | None = None,
) -> ScriptResult:
    """argv/env/unresolved of one script for a given input environment (``--script`` mode)."""
    for name in env:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise InputError(Location("env", name), "not a valid environment variable name")
    return evaluate_script(source, script, env, parser=parser, workdir=workdir, env_label="<env>")
