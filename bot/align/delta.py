"""What a benchmark PR changed in how vLLM is launched: its *delta* (issue #25).

An alignment PR for benchmark PR N carries the differences N introduced, not drift that was
there before it. For each affected config key the launch lines at N's base and head are
grouped by *lane topology* — arm, parallelism (TP, EP, DP-attention, PP), spec decoding and
scenario: what the sweep's concurrency points share — and each group's settings are compared
as value sets (``--max-num-seqs`` proportional to CONC is one set per group). A setting is in
N's delta when its value set differs between base and head, or when the group (or the whole
key) is new at the head: a new lane brings all its settings.

Settings are compared as :func:`bot.vllm.pairs.launch_pairs` pairs (a JSON-valued flag per
field), env variables by name and the image as one subject ``image``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.benchmarks import BenchRepo, LaunchLine, Point, extract, points
from bot.errors import RecipeSyncError
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
    changed: Mapping[Topology, frozenset[Subject]]  # topologies of the head only
    new_topologies: frozenset[Topology]
    note: str = ""  # why the base could not be read (then every setting counts as changed)

    def touches(self, point: Point, arm: str, kind: str, name: str) -> bool:
        """Did the PR change this setting for this point's lane? A field of a JSON flag and
        the whole flag are one subject either way (``--x.a`` is in ``--x``'s change)."""
        topology = Topology.of(point, arm)
        if self.new_key or topology in self.new_topologies or topology not in self.changed:
            return True
        found = self.changed[topology]
        if kind != "flag":
            return (kind, name) in found
        return any(
            k == "flag" and (f == name or f.startswith(name + ".") or name.startswith(f + "."))
            for k, f in found
        )

    def subjects(self, point: Point, arm: str) -> frozenset[Subject] | None:
        """The changed subjects of a point's lane; None when all of it is new."""
        topology = Topology.of(point, arm)
        if self.new_key or topology in self.new_topologies or topology not in self.changed:
            return None
        return self.changed[topology]


def key_delta(
    base: BenchRepo | None, key: str, head_lines: Iterable[tuple[Point, str, LaunchLine]]
) -> KeyDelta:
    """The delta of ``key`` given its head lines; the base's lines are extracted here."""
    head = _groups(head_lines)
    if base is None or key not in base.configs:
        return KeyDelta(key, True, {t: frozenset(g) for t, g in head.items()}, frozenset(head))
    try:
        pairs = points(base, key)
    except RecipeSyncError as err:
        return KeyDelta(
            key, False, {t: frozenset(g) for t, g in head.items()}, frozenset(head),
            note=f"the base's launch points could not be read: {err}",
        )  # fmt: skip
    base_lines = []
    for point, arm in pairs:
        try:
            base_lines.append((point, arm, extract(base, key, point, arm)))
        except JobTooLarge:
            raise
        except RecipeSyncError:
            continue  # that point's lane compares as new, as when the base lacks it
    before = _groups(base_lines)
    changed: dict[Topology, frozenset[Subject]] = {}
    for topology, group in head.items():
        old = before.get(topology)
        if old is None:
            changed[topology] = frozenset(group)
            continue
        changed[topology] = frozenset(
            s for s in {*group, *old} if group.get(s, frozenset()) != old.get(s, frozenset())
        )
    return KeyDelta(key, False, changed, frozenset(t for t in head if t not in before))
