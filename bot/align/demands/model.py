"""What the planner asks of recipe nodes: one frozen type per operation (docs/alignment.md
§5), and what it collects besides (notes, settings not carried)."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bot.align.model import EditKind, FlagNote, Setting, WaitReason
from bot.recipes.edit import NodePath
from bot.shell.result import SourceSpan
from bot.vllm import FlagDiff, Verdict


def dotted_value(value: Any) -> str:
    """One key of a JSON-valued flag as a dotted unit's value token."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True, kw_only=True)
class _Demand:
    node: str  # conflict key: the node (or container::name) this demand writes
    kind: EditKind
    subject: str
    path: NodePath  # the scalar, or the list / map container written
    reason: str
    placement: str
    target: str
    sources: tuple[SourceSpan, ...] = ()
    targets: tuple[str, ...] = ()  # after merging: every profile demanding the same
    shadows: NodePath | None = None  # a narrower override: the shared node it overrides
    # narrowed from the layer the rules name: why not there, for the reviewer ("" otherwise)
    wider: str = ""
    keep: ClassVar[bool] = False


@dataclass(frozen=True, kw_only=True)
class SetDemand(_Demand):
    """Change a scalar (``create``: the path does not exist yet, e.g. a new image pin)."""

    value: str
    before: str | None
    create: bool = False


@dataclass(frozen=True, kw_only=True)
class AppendDemand(_Demand):
    """Add flag tokens to a list (created when missing)."""

    items: tuple[str, ...]

    @property
    def value(self) -> str:
        return " ".join(self.items)

    before: None = None


@dataclass(frozen=True, kw_only=True)
class EnvDemand(_Demand):
    """Add a variable to an env map, in the benchmark's export order."""

    value: str
    env_order: tuple[str, ...] = ()
    before: None = None


@dataclass(frozen=True, kw_only=True)
class RemoveDemand(_Demand):
    """Remove ``count`` items of a list from ``index`` (policy: recipe_only_flags remove)."""

    index: int
    count: int
    before: str | None
    value: None = None


@dataclass(frozen=True, kw_only=True)
class KeepDemand(_Demand):
    """A point that already matches pins the node: no edit, but a conflict if changed."""

    value: str | None
    before: str | None = None
    keep: ClassVar[bool] = True


@dataclass(frozen=True, kw_only=True)
class FeatureDemand(_Demand):
    """Workload flag tokens behind an opt-in feature's hardware override
    (``features.<f>.hardware_overrides.<hw>.args``); ``base`` is what that list renders now
    (the override replaces the feature's args on that hardware), ``new`` when the feature
    itself is proposed (then ``description`` is its text)."""

    feature: str
    hardware: str
    items: tuple[str, ...]
    base: tuple[str, ...] = ()
    new: bool = False
    description: str = ""
    before: None = None

    @property
    def value(self) -> str:
        return " ".join(self.items)


Demand = SetDemand | AppendDemand | EnvDemand | RemoveDemand | KeepDemand | FeatureDemand
Fallback = Setting | FlagNote


@dataclass
class Collected:
    demands: list[Demand] = field(default_factory=list)
    defaults: list[FlagNote] = field(default_factory=list)
    recipe_only: list[FlagNote] = field(default_factory=list)
    benchmark_only: list[FlagNote] = field(default_factory=list)
    front_end: list[FlagNote] = field(default_factory=list)
    unknown: list[FlagNote] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    settings: list[Setting] = field(default_factory=list)  # benchmark settings not carried
    preexisting: list[FlagNote] = field(default_factory=list)  # drift the PR did not introduce
    to_classify: list[str] = field(default_factory=list)  # unclassified: never edited
    features: dict[str, str] = field(default_factory=dict)  # profile label → workload feature
    # settings offered to tick, never proposed: subject → (why, what the setting is)
    offer_only: dict[str, tuple[WaitReason, str]] = field(default_factory=dict)
    # what each offered-only setting is recorded as when it cannot be planned cleanly
    # (Collected.give_up_offers): a setting not carried, older drift, an unknown comparison
    offer_fallback: dict[str, list[Fallback]] = field(default_factory=dict)

    def fall_back(self, record: Fallback) -> None:
        """Record an offer that is not made as what it would have been without it."""
        if isinstance(record, Setting):
            self.settings.append(record)
        elif record.verdict == Verdict.UNKNOWN.value:
            self.unknown.append(record)
        else:
            self.preexisting.append(record)

    def give_up_offers(self, subjects: Collection[str]) -> None:
        """These offered-only settings are not planned after all: each is recorded as what it
        would have been without the offer, in the order they were offered (not the set's,
        which varies with the process's string hashing)."""
        offered = dict.fromkeys([*self.offer_only, *self.offer_fallback])
        for subject in [s for s in offered if s in subjects]:
            for record in self.offer_fallback.pop(subject, []):
                self.fall_back(record)
            self.offer_only.pop(subject, None)

    def mark(self) -> dict[str, int]:
        """Where each list ends now (:meth:`rollback` returns there)."""
        return {name: len(value) for name, value in vars(self).items() if isinstance(value, list)}

    def rollback(self, mark: dict[str, int]) -> None:
        for name, length in mark.items():
            del getattr(self, name)[length:]

    def grew(self, mark: dict[str, int], name: str) -> bool:
        return len(getattr(self, name)) > mark[name]


def flag_note(diff: FlagDiff, label: str, node: str | None = None) -> FlagNote:
    return FlagNote(
        kind=diff.kind,
        subject=diff.flag,
        bench=" ".join(diff.bench_tokens) or None,
        recipe=" ".join(diff.recipe_tokens) or None,
        verdict=diff.verdict.value,
        reason=diff.reason,
        target=label,
        node=node,
    )
