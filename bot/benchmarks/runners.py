"""Runner labels, fleets and launchers: which launcher runs a config, which script it picks.

A runner *label* (``mi355x``, ``cluster:mi355x-amds``) names candidate nodes in
``configs/runners.yaml``; a node ``<fleet>_<index>`` runs ``runners/launch_<fleet>.sh``, whose
script-name rule is described per fleet in ``rules/hardware.yaml: launchers``
(docs/spec/benchmark-extraction.md §1.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from bot.benchmarks.configs import CONFIG_DIRS, parse_yaml
from bot.benchmarks.model import Point
from bot.errors import InputError
from bot.rules.models import HardwareRules, Launcher
from bot.sources import FileSource, is_symlink, read_text, resolve_link


@dataclass(frozen=True)
class RunnersFile:
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hardware: dict[str, dict[str, float]] = field(default_factory=dict)


def load_runners(source: FileSource) -> RunnersFile | None:
    for directory in CONFIG_DIRS:
        path = f"{directory}/runners.yaml"
        if source.exists(path):
            data = parse_yaml(read_text(source, path), path) or {}
            labels = {
                str(k): tuple(str(n) for n in (v or []))
                for k, v in (data.get("labels") or {}).items()
            }
            hardware: dict[str, dict[str, float]] = {}
            for k, v in (data.get("hardware") or {}).items():
                facts = {
                    str(fk): float(fv)
                    for fk, fv in (v or {}).items()
                    if isinstance(fv, int | float)
                }
                hardware[str(k)] = facts
            return RunnersFile(labels, hardware)
    return None


def fleet_of(node: str) -> str:
    return node.split("_", 1)[0]


def fleets_for(label: str, rules: HardwareRules, runners: RunnersFile | None) -> list[str]:
    """Fleets whose nodes can pick up a job for ``label``, in a stable order."""
    if runners is not None and label in runners.labels:
        fleets: list[str] = []
        for node in runners.labels[label]:
            fleet = fleet_of(node)
            if fleet not in fleets:
                fleets.append(fleet)
        if fleets:
            return fleets
    rest = label.removeprefix("cluster:")
    if rest in rules.launchers:
        return [rest]
    return sorted(name for name in rules.launchers if name.startswith(rest))


@dataclass(frozen=True)
class ScriptChoice:
    fleet: str | None
    launcher: Launcher | None
    path: str | None
    tried: tuple[str, ...]
    problem: str | None = None  # why there is no script
    ambiguity: str | None = None  # the script depends on which fleet picks the job
    # other fleets of the label that run the same script through a differently configured
    # launcher (b200-dgxc passes a staged model path where b200-cw passes the hub id)
    alternatives: tuple[tuple[str, Launcher], ...] = ()


def candidate_names(
    launcher: Launcher, prefix: str, precision: str, framework: str, spec: str
) -> list[str]:
    mtp = "_mtp" if spec in launcher.mtp_suffix_values else ""
    base = f"{prefix}_{precision}_{launcher.gpu_token}"
    names = []
    if launcher.framework_tagged_first:
        names.append(f"{base}_{framework}{mtp}.sh")
    names.append(f"{base}{launcher.framework_suffixes.get(framework, '')}{mtp}.sh")
    return names


def script_directory(point: Point) -> str:
    subdir = "agentic/" if point.scenario == "agentic-coding" else "fixed_seq_len/"
    return f"benchmarks/single_node/{subdir}"


def _first_script(source: FileSource, tried: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(path, None) of the first candidate that is a file, or a symbolic link resolved to the
    repository file it names (read statically like any script); (None, why) otherwise. A
    link leaving the repository is refused by name, not reported as a missing script."""
    for candidate in tried:
        if is_symlink(source, candidate):
            try:
                return resolve_link(source, candidate), None
            except InputError as err:
                return None, f"no script: {err}"
        if source.exists(candidate):
            return candidate, None
    if len(tried) == 1:
        return None, f"no script: {tried[0]} does not exist"
    return None, f"no script: none of {', '.join(tried)} exists"


def choose_script(
    source: FileSource,
    rules: HardwareRules,
    runners: RunnersFile | None,
    *,
    label: str,
    prefix: str,
    precision: str,
    framework: str,
    point: Point,
    runner_node: str | None = None,
) -> ScriptChoice:
    fleets = [fleet_of(runner_node)] if runner_node else fleets_for(label, rules, runners)
    known = [f for f in fleets if f in rules.launchers]
    if not known:
        where = f"runner node {runner_node}" if runner_node else f"runner label {label}"
        return ScriptChoice(
            None, None, None, (), f"no launcher known for {where} (rules/hardware.yaml: launchers)"
        )
    directory = script_directory(point)
    choices: list[ScriptChoice] = []
    for fleet in known:
        launcher = rules.launchers[fleet]
        names = candidate_names(launcher, prefix, precision, framework, point.spec_decoding)
        tried = tuple(directory + name for name in names)
        path, problem = _first_script(source, tried)
        choices.append(ScriptChoice(fleet, launcher, path, tried, problem))
    first = choices[0]
    distinct = {c.path for c in choices}
    if len(distinct) > 1:
        options = ", ".join(f"{c.fleet} → {c.path or 'no script'}" for c in choices)
        return ScriptChoice(
            first.fleet,
            first.launcher,
            first.path,
            first.tried,
            first.problem,
            f"label {label} spans fleets whose launchers pick different scripts ({options}); "
            "pass the runner node to choose",
        )
    alternatives: list[tuple[str, Launcher]] = []
    for choice in choices[1:]:
        assert choice.fleet is not None and choice.launcher is not None
        if all(choice.launcher != seen for seen in (first.launcher, *(a[1] for a in alternatives))):
            alternatives.append((choice.fleet, choice.launcher))
    return replace(first, alternatives=tuple(alternatives))
