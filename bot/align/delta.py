"""What a benchmark PR changed in how vLLM is launched: its *delta* (issue #25).

An alignment PR for benchmark PR N carries the differences N introduced, not drift that was
there before it. For each affected config key the launch lines at N's base and head are
grouped by *lane topology* — arm, parallelism (TP, EP, DP-attention, PP), spec decoding and
scenario: what the sweep's concurrency points share — and each group's settings are compared
as value sets (``--max-num-seqs`` proportional to CONC is one set per group). A setting is in
N's delta when the head runs a value of it the base did not (or stops setting it): fewer values
— points dropped — change nothing. A lane new to the key is compared with what the base ran
for the same model; one with nothing to compare with is new, and brings all its settings.

Settings are compared as :func:`bot.vllm.pairs.launch_pairs` pairs (a JSON-valued flag per
field), env variables by name and the image as one subject ``image``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.benchmarks import BenchRepo, LaunchLine, Point, extract, points
from bot.errors import RecipeSyncError
from bot.rules import KnobClass, Rules
from bot.shell import JobTooLarge
from bot.vllm.pairs import canonical_value, launch_pairs

Subject = tuple[
    str, str
]  # (kind, name): ("flag", "--moe-backend"), ("env", "X"), ("image", "image")


@dataclass(frozen=True, order=True)
class Topology:
    arm: str
    tp: int
    ep: int
    dp_attn: bool
    pp: int
    spec_decoding: str
    scenario: str

    @classmethod
    def of(cls, point: Point, arm: str) -> Topology:
        return cls(arm, point.tp, point.ep, point.dp_attn, point.pp, point.spec_decoding,
                   point.scenario)  # fmt: skip


def line_subjects(line: LaunchLine) -> dict[Subject, str]:
    """Every setting of one launch line, by subject."""
    found: dict[Subject, str] = {("image", "image"): line.image}
    if line.argv:
        for flag, value in launch_pairs(line.argv):
            found[("flag", flag)] = value
    for name, value in line.env.items():
        found[("env", name)] = canonical_value(value)
    return found


def _groups(
    lines: Iterable[tuple[Point, str, LaunchLine]],
) -> dict[Topology, dict[Subject, frozenset[str]]]:
    groups: dict[Topology, dict[Subject, set[str]]] = {}
    for point, arm, line in lines:
        if line.status != "launched":
            continue
        group = groups.setdefault(Topology.of(point, arm), {})
        for subject, value in line_subjects(line).items():
            group.setdefault(subject, set()).add(value)
    return {t: {s: frozenset(v) for s, v in g.items()} for t, g in groups.items()}


@dataclass(frozen=True)
class KeyDelta:
    """One config key's delta: per lane topology, the subjects the PR changed."""

    key: str
    new_key: bool  # the key is not in the base's master configs
    changed: Mapping[Topology, frozenset[Subject]]  # topologies of the head
    new_topologies: frozenset[Topology]  # nothing at the base to compare them with
    reference: str = ""  # what a new lane was compared with, in words ("" for itself)
    note: str = ""  # why the base could not be read (then every setting counts as changed)

    def touches(self, point: Point, arm: str, kind: str, name: str) -> bool:
        """Did the PR change this setting for this point's lane? A field of a JSON flag and
        the whole flag are one subject either way (``--x.a`` is in ``--x``'s change)."""
        found = self.subjects(point, arm)
        if found is None:
            return True
        if kind != "flag":
            return (kind, name) in found
        return any(
            k == "flag" and (f == name or f.startswith(name + ".") or name.startswith(f + "."))
            for k, f in found
        )

    def subjects(self, point: Point, arm: str) -> frozenset[Subject] | None:
        """The changed subjects of a point's lane; None when all of it is new."""
        topology = Topology.of(point, arm)
        if topology in self.new_topologies or topology not in self.changed:
            return None
        return self.changed[topology]


def moves_launch(delta: KeyDelta | None, point: Point, arm: str, rules: Rules) -> bool:
    """Did the PR move a launch setting of the point's lane? A change to the benchmark
    harness alone (metrics files, ports, log paths: class ``harness``) moves none."""
    if delta is None:
        return True  # no base to compare with: all of it is the PR's
    changed = delta.subjects(point, arm)
    if changed is None:
        return True
    return any(
        kind == "image"
        or rules.knob_class("env" if kind == "env" else "flag", name) is not KnobClass.HARNESS
        for kind, name in changed
    )


def _lines(repo: BenchRepo, key: str) -> list[tuple[Point, str, LaunchLine]]:
    """A key's launch lines; points that do not extract are left out (their lanes then
    compare as new, as when the base lacks them)."""
    try:
        pairs = points(repo, key)
    except JobTooLarge:
        raise
    except RecipeSyncError:
        return []
    found = []
    for point, arm in pairs:
        try:
            found.append((point, arm, extract(repo, key, point, arm)))
        except JobTooLarge:
            raise
        except RecipeSyncError:
            continue
    return found


def _siblings(base: BenchRepo, head: BenchRepo, key: str) -> list[str]:
    """Base keys that launch the same model in the same precision on the same runner with
    the same framework: a new key is compared with what those already ran."""
    try:
        entry = head.entry(key)
    except RecipeSyncError:
        return []
    found = []
    for other in sorted(base.configs):
        try:
            candidate = base.entry(other)
        except RecipeSyncError:
            continue
        same = (candidate.model, candidate.precision, candidate.runner, candidate.framework)
        if same == (entry.model, entry.precision, entry.runner, entry.framework) and (
            not candidate.multinode
        ):
            found.append(other)
    return found


def _merged(groups: Iterable[dict[Subject, frozenset[str]]]) -> dict[Subject, frozenset[str]]:
    out: dict[Subject, set[str]] = {}
    for group in groups:
        for subject, values in group.items():
            out.setdefault(subject, set()).update(values)
    return {s: frozenset(v) for s, v in out.items()}


def _new_values(
    group: Mapping[Subject, frozenset[str]], reference: Mapping[Subject, frozenset[str]]
) -> frozenset[Subject]:
    """Subjects whose head values the reference never ran (a value it lacks, or a setting
    it had that the lane drops)."""
    added = {s for s, values in group.items() if not values <= reference.get(s, frozenset())}
    return frozenset(added)


def key_delta(
    base: BenchRepo | None,
    head: BenchRepo,
    key: str,
    head_lines: Iterable[tuple[Point, str, LaunchLine]],
) -> KeyDelta:
    """The delta of ``key`` given its head lines (the base's are extracted here).

    A lane the base runs under the same topology is compared value set for value set. A
    lane new to the key (another TP, a new scenario) is compared with the key's other lanes
    of the same arm; a key new to the configs with the base's keys that launch the same
    model, precision, runner and framework (an agentic key beside a fixed-seq-len one). Only
    what none of those ran is the PR's; a lane with nothing to compare with is new."""
    lanes = _groups(head_lines)
    if base is None:
        return KeyDelta(key, True, {t: frozenset(g) for t, g in lanes.items()}, frozenset(lanes))
    new_key = key not in base.configs
    siblings = _siblings(base, head, key) if new_key else [key]
    before: dict[str, dict[Topology, dict[Subject, frozenset[str]]]] = {
        other: _groups(_lines(base, other)) for other in siblings
    }
    own = before.get(key, {})
    changed: dict[Topology, frozenset[Subject]] = {}
    new: set[Topology] = set()
    for topology, group in lanes.items():
        old = own.get(topology)
        if old is not None:
            # a value the lane did not run before, or a setting it no longer sets; fewer
            # values (points dropped: a deprecated sequence length, a narrower sweep) change
            # no setting of the lane
            dropped = {s for s in old if s not in group}
            changed[topology] = _new_values(group, old) | dropped
            continue
        same_arm = [
            g for groups in before.values() for t, g in groups.items() if t.arm == topology.arm
        ]
        if not same_arm:
            new.add(topology)
            changed[topology] = frozenset(group)
            continue
        changed[topology] = _new_values(group, _merged(same_arm))
    reference = ""
    if new_key and siblings:
        reference = "the base's " + ", ".join(siblings[:3]) + (" …" if len(siblings) > 3 else "")
    return KeyDelta(key, new_key, changed, frozenset(new), reference)
