"""Values of a drift audit: one row per (config key, point, arm), the keys out of scope, and
the summary counts every output format shows first."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from bot.benchmarks import Point
from bot.rules.knobs import KnobClass, knob_spec

Status = Literal["aligned", "drifted", "unmapped", "unresolved"]
STATUSES: tuple[Status, ...] = ("aligned", "drifted", "unmapped", "unresolved")


@dataclass(frozen=True)
class Introduced:
    """The benchmark commit (and PR) that introduced a counted difference's value."""

    commit: str
    subject: str
    pr: int | None  # None when the subject names no PR (a direct push)
    at: str  # file:line whose change introduced it
    time: int = 0  # committer time (unix seconds): the oldest introduction bounds a fix


@dataclass(frozen=True)
class FlagRow:
    """One differing flag, env var or image of a row, as a reviewer reads it."""

    kind: str  # flag | env | image
    flag: str  # canonical spelling ("--max-num-seqs"), env name, or "image"
    bench: str  # the benchmark's value as text ("" when it omits it)
    recipe: str  # the recipe's value as text ("" when it omits it)
    verdict: str  # differs | recipe-only | unknown
    reason: str
    drift: bool  # counted as drift (differs / recipe-only); unknown verdicts are listed only
    # knob class (rules/knobs.yaml) or "image"; tuning / workload / harness differences are
    # benchmark settings: listed, never counted
    knob: str = ""

    @property
    def benchmark_setting(self) -> bool:
        spec = knob_spec(self.knob)
        return spec is not None and not spec.drift

    category: str = ""  # engine | maybe | env | image | front-end | … (bot.vllm.diff)
    recipe_at: str = ""  # "models/x.yaml:42" (or the YAML path when the line is unknown)
    bench_at: str = ""  # "benchmarks/…/x.sh:17": where the benchmark spells it
    introduced: Introduced | None = None  # counted differences, from the benchmark's history
    # a chat-client feature only the recipe sets (rules/knobs.yaml recipe_features): not drift
    recipe_feature: bool = False

    def same_difference(self) -> tuple[str, str, str, str, bool]:
        """What makes two launch lines' differences "the same" (collapsed into one entry).

        The benchmark's value is left out: a value that follows the point (``--max-num-seqs``
        = concurrency) is one difference with per-point values, not one entry per point.
        """
        return (self.kind, self.flag, self.recipe, self.verdict, self.drift)


@dataclass(frozen=True)
class GuideRow:
    """A copy-paste ``vllm serve`` of the recipe's guide that documents this row's profile
    (same model, hardware named in its headings, same parallelism), diffed with the launch."""

    recipe: str  # the recipe file
    heading: str  # the heading path above it
    line: int  # 1-based line in the recipe file
    managed: bool  # inside a recipe-sync managed block
    cites_benchmark: bool  # its section names the benchmark
    drift: tuple[FlagRow, ...]
    not_compared: tuple[str, ...] = ()  # flags whose guide value is a shell variable


@dataclass(frozen=True)
class AuditRow:
    """The verdict on one launch line of the benchmark repository."""

    config_key: str
    config_file: str
    config_line: int | None
    model: str  # the benchmark's MODEL
    runner: str  # runner label
    hardware: str  # taxonomy id, else the runner label
    image: str
    point: Point | None  # None when the key's search space could not be read
    arm: str  # throughput | eval | "" (config-level row)
    status: Status
    reason: str = ""  # unmapped: why; unresolved: what (with file:line)
    profile: str = ""  # Profile.label of the recipe rendering compared against
    flags: tuple[FlagRow, ...] = ()
    notes: tuple[str, ...] = ()
    context: bool = False  # synthetic-acceptance throughput arm: context, never the recipe
    script: str | None = None
    recipe_file: str = ""  # models/<org>/<name>.yaml of the profile compared against
    launch_at: str = ""  # script:line of the ``vllm serve`` launch
    guide: tuple[GuideRow, ...] = ()  # guide commands documenting this profile

    @property
    def guide_status(self) -> str:
        """``drifted`` when a guide command documenting this profile differs from the launch
        line, ``matches`` when every one matches, ``""`` when the guide has none."""
        if not self.guide:
            return ""
        return "drifted" if any(g.drift for g in self.guide) else "matches"

    @property
    def drift_count(self) -> int:
        return sum(1 for flag in self.flags if flag.drift)

    @property
    def status_text(self) -> str:
        """``aligned``, ``drifted (3)``, ``unmapped (reason)`` or ``unresolved (what)``."""
        if self.status == "drifted":
            return f"drifted ({self.drift_count})"
        if self.status in ("unmapped", "unresolved"):
            return f"{self.status} ({self.reason})"
        return self.status

    @property
    def point_label(self) -> str:
        return self.point.label() if self.point is not None else ""

    def point_fields(self) -> dict[str, str]:
        """The point as the report's columns: tp, ep, dp-attn, conc, scenario, isl-osl, spec."""
        p = self.point
        if p is None:
            return {k: "" for k in ("tp", "ep", "dp-attn", "conc", "scenario", "isl-osl", "spec")}
        return {
            "tp": str(p.tp),
            "ep": str(p.ep),
            "dp-attn": "yes" if p.dp_attn else "no",
            "conc": str(p.conc),
            "scenario": "agentic" if p.scenario == "agentic-coding" else "fixed",
            "isl-osl": f"{p.isl}/{p.osl}" if p.isl is not None else "",
            "spec": "" if p.spec_decoding == "none" else p.spec_decoding,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "config_key": self.config_key,
            "config_file": self.config_file,
            "config_line": self.config_line,
            "model": self.model,
            "runner": self.runner,
            "hardware": self.hardware,
            "image": self.image,
            "point": asdict(self.point) if self.point is not None else None,
            "point_label": self.point_label,
            "arm": self.arm,
            "status": self.status,
            "status_text": self.status_text,
            "reason": self.reason,
            "profile": self.profile,
            "drift_count": self.drift_count,
            "flags": [asdict(flag) for flag in self.flags],
            "notes": list(self.notes),
            "context": self.context,
            "script": self.script,
            "recipe_file": self.recipe_file,
            "launch_at": self.launch_at,
            "guide_status": self.guide_status,
            "guide": [asdict(g) for g in self.guide],
        }


@dataclass(frozen=True)
class OutOfScope:
    """A config key the audit does not compare, and why (never dropped silently)."""

    config_key: str
    config_file: str
    config_line: int | None
    framework: str
    kind: str  # framework | multinode
    reason: str
    model: str = ""
    runner: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AuditReport:
    bench_label: str
    recipes_label: str
    rows: tuple[AuditRow, ...]
    out_of_scope: tuple[OutOfScope, ...] = ()
    warnings: tuple[str, ...] = ()  # repository-level problems the rows could not carry
    # master configs that could not be read at all (every key left out), each with why;
    # also among the warnings
    unread: tuple[str, ...] = ()
    internal_errors: int = 0  # rows whose status is an unexpected exception (logged)
    # where links point: OWNER/NAME ("" when unknown) and the audited commits ("" for a directory)
    bench_name: str = ""
    bench_commit: str = ""
    recipes_name: str = ""
    recipes_commit: str = ""
    # what the fix commands (``recipe-sync align``) name: the repositories as the user gave
    # them ("" → the repository name), the recipes ref, and where recipe links point
    bench_path: str = ""
    recipes_path: str = ""
    recipes_ref: str = ""
    recipes_url: str = ""  # base URL of recipe files (--recipes-url), beats name@commit

    @property
    def keys_audited(self) -> int:
        return len({row.config_key for row in self.rows})

    def drifted_guide_commands(self) -> list[tuple[AuditRow, GuideRow]]:
        """Each drifted guide command once, with the first launch-line row it was compared
        with (hand-written sections citing the benchmark first)."""
        found: dict[tuple[str, int], tuple[AuditRow, GuideRow]] = {}
        for row in self.rows:
            for guide in row.guide:
                if not guide.drift:
                    continue
                where = (guide.recipe, guide.line)
                # the eval arm (real acceptance) is the clearest witness when there is one
                if where not in found or (row.arm == "eval" and found[where][0].arm != "eval"):
                    found[where] = (row, guide)
        return sorted(
            found.values(),
            key=lambda pair: (not pair[1].cites_benchmark, pair[1].recipe, pair[1].line),
        )

    def guide_commands(self) -> dict[str, int]:
        """Distinct guide commands compared with a launch line: how many, how many drifted,
        how many of the drifted are hand-written sections citing the benchmark."""
        seen: dict[tuple[str, int], GuideRow] = {}
        drifted: dict[tuple[str, int], GuideRow] = {}
        for row in self.rows:
            for guide in row.guide:
                where = (guide.recipe, guide.line)
                seen.setdefault(where, guide)
                if guide.drift:
                    drifted.setdefault(where, guide)
        return {
            "compared": len(seen),
            "drifted": len(drifted),
            "drifted_citing_benchmark": sum(
                1 for g in drifted.values() if g.cites_benchmark and not g.managed
            ),
        }

    def by_status(self) -> dict[str, int]:
        counts = Counter(row.status for row in self.rows)
        return {status: counts.get(status, 0) for status in STATUSES}

    def drift_by_recipe(self) -> list[dict[str, Any]]:
        """Recipes with drift, those with serving-class drift first (most drifted rows first):
        ``{"recipe", "rows", "classes": {class: [flags]}}``. Benchmark settings (tuning,
        workload, harness) are not drift and are not listed here."""
        grouped: dict[str, dict[str, Any]] = {}
        for row in self.rows:
            if row.status != "drifted":
                continue
            name = row.profile.split(" ", 1)[0] or row.model
            entry = grouped.setdefault(name, {"recipe": name, "rows": 0, "classes": {}})
            entry["rows"] += 1
            for flag in row.flags:
                if flag.drift:
                    flags = entry["classes"].setdefault(flag.knob or KnobClass.UNCLASSIFIED, [])
                    if flag.flag not in flags:
                        flags.append(flag.flag)
        return sorted(
            grouped.values(),
            key=lambda e: (KnobClass.SERVING not in e["classes"], -e["rows"], e["recipe"]),
        )

    def serving_drift(self) -> list[dict[str, Any]]:
        """The recipes of :meth:`drift_by_recipe` with drift of the serving class."""
        return [e for e in self.drift_by_recipe() if KnobClass.SERVING in e["classes"]]

    def benchmark_settings(self) -> dict[str, list[str]]:
        """Benchmark settings seen on compared rows, per class (not drift)."""
        out: dict[str, list[str]] = {}
        for row in self.rows:
            for flag in row.flags:
                if flag.benchmark_setting and flag.flag not in out.setdefault(flag.knob, []):
                    out[flag.knob].append(flag.flag)
        return {k: sorted(v) for k, v in sorted(out.items())}

    def recipe_features(self) -> list[str]:
        """Chat-client features only the recipe sets, seen on compared rows (not drift)."""
        return sorted({f.flag for row in self.rows for f in row.flags if f.recipe_feature})

    def to_classify(self) -> list[str]:
        """Flags and variables rules/knobs.yaml does not classify ("rules to classify")."""
        unclassified = KnobClass.UNCLASSIFIED
        return sorted({f.flag for row in self.rows for f in row.flags if f.knob == unclassified})

    def by_hardware(self) -> dict[str, dict[str, int]]:
        return _grouped(self.rows, lambda row: row.hardware)

    def by_model(self) -> dict[str, dict[str, int]]:
        return _grouped(self.rows, lambda row: row.model)

    def out_of_scope_by_framework(self) -> dict[str, int]:
        """Config keys out of scope per framework (multi-node keys under ``multi-node``)."""
        counts = Counter(
            "multi-node " + item.framework if item.kind == "multinode" else item.framework
            for item in self.out_of_scope
        )
        return dict(sorted(counts.items()))

    def out_of_scope_keys(self) -> dict[str, list[str]]:
        keys: dict[str, list[str]] = {}
        for item in self.out_of_scope:
            group = "multi-node " + item.framework if item.kind == "multinode" else item.framework
            keys.setdefault(group, []).append(item.config_key)
        return keys

    def out_of_scope_reasons(self) -> dict[str, str]:
        """One reason per group; a group whose keys give different reasons gets a general one.

        Multi-node reasons name each key's recipe file, so the first key's text would
        misdescribe the others (the per-key reasons stay on ``out_of_scope``).
        """
        grouped: dict[str, set[str]] = {}
        for item in self.out_of_scope:
            group = "multi-node " + item.framework if item.kind == "multinode" else item.framework
            grouped.setdefault(group, set()).add(item.reason)
        reasons: dict[str, str] = {}
        for group, texts in grouped.items():
            if len(texts) == 1:
                (reasons[group],) = texts
            elif group.startswith("multi-node "):
                reasons[group] = (
                    f"{group}: serve commands come from each key's recipe file or the "
                    "multi-node launcher, not from a single-node script"
                )
            else:
                reasons[group] = "; ".join(sorted(texts))
        return reasons

    def to_json(self) -> dict[str, Any]:
        return {
            "bench": self.bench_label,
            "recipes": self.recipes_label,
            "bench_name": self.bench_name,
            "bench_commit": self.bench_commit,
            "recipes_name": self.recipes_name,
            "recipes_commit": self.recipes_commit,
            "unread": list(self.unread),
            "summary": {
                "drift_by_recipe": self.drift_by_recipe(),
                "rules_to_classify": self.to_classify(),
                "benchmark_settings": self.benchmark_settings(),
                "recipe_features": self.recipe_features(),
                "rows": len(self.rows),
                "config_keys": self.keys_audited,
                "by_status": self.by_status(),
                "by_hardware": self.by_hardware(),
                "by_model": self.by_model(),
                "out_of_scope": {
                    group: {"config_keys": count, "reason": self.out_of_scope_reasons()[group]}
                    for group, count in self.out_of_scope_by_framework().items()
                },
                "internal_errors": self.internal_errors,
                "guide_commands": self.guide_commands(),
            },
            "warnings": list(self.warnings),
            "out_of_scope": [item.to_json() for item in self.out_of_scope],
            "rows": [row.to_json() for row in self.rows],
        }


def _grouped(rows: Iterable[AuditRow], key: Any) -> dict[str, dict[str, int]]:
    groups: dict[str, Counter[str]] = {}
    for row in rows:
        groups.setdefault(key(row), Counter())[row.status] += 1
    return {
        name: {status: counts.get(status, 0) for status in STATUSES}
        for name, counts in sorted(groups.items())
    }


@dataclass(frozen=True)
class KeyAudit:
    """What auditing one config key produced (a worker's unit of work)."""

    key: str
    rows: tuple[AuditRow, ...]
    internal_errors: int = 0
    stats: Mapping[str, int] = field(default_factory=dict)
