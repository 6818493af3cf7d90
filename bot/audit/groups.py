"""The audit as a maintainer reads it: recipe file → profile → config key, with the launch
lines whose differences are identical collapsed into one entry that lists their points.

A config key usually runs a dozen concurrency points through the same launch line; the
differences repeat for each of them. Both the HTML dashboard and the Markdown summary show
one entry per distinct difference set instead, so 116 drifted rows read as 15 entries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.audit.model import STATUSES, AuditReport, AuditRow, FlagRow, Status

NO_RECIPE = "(no recipe)"


@dataclass(frozen=True)
class Entry:
    """Launch lines of one config key that share status, reason, differences and notes."""

    rows: tuple[AuditRow, ...]

    @property
    def first(self) -> AuditRow:
        return self.rows[0]

    @property
    def status(self) -> Status:
        return self.first.status

    @property
    def flags(self) -> tuple[FlagRow, ...]:
        return self.first.flags

    def points_text(self) -> str:
        return points_text(self.rows)

    def bench_values(self, index: int) -> list[str]:
        """The distinct benchmark values of flag ``index`` across the entry's launch lines."""
        values: list[str] = []
        for row in self.rows:
            value = row.flags[index].bench
            if value not in values:
                values.append(value)
        return values


@dataclass(frozen=True)
class KeyGroup:
    config_key: str
    config_file: str
    config_line: int | None
    hardware: str
    model: str
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class ProfileGroup:
    profile: str  # "" when no profile was mapped (unmapped / unresolved before mapping)
    keys: tuple[KeyGroup, ...]


@dataclass(frozen=True)
class RecipeGroup:
    recipe: str  # models/<org>/<name>.yaml, or "(no recipe) <model>"
    has_recipe: bool
    profiles: tuple[ProfileGroup, ...]

    @property
    def rows(self) -> tuple[AuditRow, ...]:
        return tuple(
            row for p in self.profiles for k in p.keys for e in k.entries for row in e.rows
        )

    def counts(self) -> dict[str, int]:
        found = Counter(row.status for row in self.rows)
        return {s: found.get(s, 0) for s in STATUSES}

    def entries(self) -> tuple[Entry, ...]:
        return tuple(e for p in self.profiles for k in p.keys for e in k.entries)

    def top_flags(self, limit: int | None = 3) -> list[tuple[str, int]]:
        """Drifting flags of this recipe by how many config keys they drift in."""
        return top_flags(self.rows, limit)


def top_flags(rows: Iterable[AuditRow], limit: int | None = None) -> list[tuple[str, int]]:
    keys: dict[str, set[str]] = {}
    for row in rows:
        for flag in row.flags:
            if flag.drift:
                keys.setdefault(flag.flag, set()).add(row.config_key)
    ranked = sorted(keys.items(), key=lambda item: (-len(item[1]), item[0]))
    return [(flag, len(k)) for flag, k in ranked[:limit]]


def _same(row: AuditRow) -> tuple[object, ...]:
    return (
        row.status,
        row.reason,
        row.profile,
        tuple(f.same_difference() for f in row.flags),
        row.notes,
        row.context,
    )


def _recipe_of(row: AuditRow) -> str:
    return row.recipe_file or f"{NO_RECIPE} {row.model}"


def group_report(report: AuditReport) -> tuple[RecipeGroup, ...]:
    """Groups in the order a maintainer works: most drift first, then unresolved, unmapped."""
    by_recipe: dict[str, dict[str, dict[str, dict[tuple[object, ...], list[AuditRow]]]]] = {}
    for row in report.rows:
        profiles = by_recipe.setdefault(_recipe_of(row), {})
        keys = profiles.setdefault(row.profile, {})
        entries = keys.setdefault(row.config_key, {})
        entries.setdefault(_same(row), []).append(row)
    groups: list[RecipeGroup] = []
    for recipe, profiles in by_recipe.items():
        built: list[ProfileGroup] = []
        for profile, keys in profiles.items():
            key_groups = []
            for key, entries in keys.items():
                ordered = sorted(
                    (Entry(tuple(rows)) for rows in entries.values()),
                    key=lambda e: STATUSES.index(e.status) if e.status != "drifted" else -1,
                )
                first = ordered[0].first
                key_groups.append(
                    KeyGroup(
                        key,
                        first.config_file,
                        first.config_line,
                        first.hardware,
                        first.model,
                        tuple(ordered),
                    )
                )
            built.append(ProfileGroup(profile, tuple(key_groups)))
        built.sort(key=lambda p: p.profile == "")
        groups.append(RecipeGroup(recipe, not recipe.startswith(NO_RECIPE), tuple(built)))
    groups.sort(key=_rank)
    return tuple(groups)


def _rank(group: RecipeGroup) -> tuple[int, int, int, str]:
    counts = group.counts()
    return (-counts["drifted"], -counts["unresolved"], -counts["unmapped"], group.recipe)


def _range(values: Sequence[int]) -> str:
    """``4, 8, 16`` (a long list: its first six and last two, and how many)."""
    ordered = sorted(set(values))
    if len(ordered) <= 10:
        return ", ".join(str(v) for v in ordered)
    head = ", ".join(str(v) for v in ordered[:6])
    return f"{head}, …, {ordered[-2]}, {ordered[-1]} ({len(ordered)} values)"


def points_text(rows: Sequence[AuditRow]) -> str:
    """``TP8 EP1 · 8192/1024 · conc 4, 8, 16 · throughput`` per distinct shape, ``; ``-joined."""
    shapes: dict[tuple[str, str], list[int]] = {}
    for row in rows:
        p = row.point
        if p is None:
            shapes.setdefault(("config-level", row.arm), [])
            continue
        shape = [f"TP{p.tp}"]
        if p.ep > 1:
            shape.append(f"EP{p.ep}")
        if p.dp_attn:
            shape.append("DP-attn")
        parts = [" ".join(shape)]
        if p.scenario == "agentic-coding":
            parts.append("agentic")
        elif p.isl is not None:
            parts.append(f"{p.isl}/{p.osl}")
        if p.spec_decoding != "none":
            parts.append(p.spec_decoding)
        shapes.setdefault((" · ".join(parts), row.arm), []).append(p.conc)
    texts = []
    for (head, arm), concs in shapes.items():
        text = head + (f" · conc {_range(concs)}" if concs else "") + (f" · {arm}" if arm else "")
        texts.append(text)
    return "; ".join(texts)
