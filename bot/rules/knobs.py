"""Knob classes (``rules/knobs.yaml``): what kind of lever each flag and env variable is.

Recipe maintainers treat benchmark settings by kind: kernel/backend selection and serving
behaviour go into recipes; accuracy-sensitive levers only with a passing eval at those
settings; throughput tuning and workload settings are documented for reproduction or put
behind an opt-in feature; harness settings never leave the benchmark. ``rules/policy.yaml:
knob_policy`` says what alignment does with each class; this module only classifies.

Flags are matched in their canonical spelling, folded here the way ``bot/vllm`` folds them
(this layer may not import it): ``_`` → ``-`` before the first dot, ``--no-x`` → ``--x``,
``--disable-x`` ↔ ``--enable-x``; a dotted unit (``--compilation-config.mode``) is classed by
its own entry when there is one, else by its flag's.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from bot.argv import option_name
from bot.rules.loader import FieldError


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KnobClass(StrEnum):
    KERNEL = "kernel"
    SERVING = "serving"
    ACCURACY = "accuracy"
    TUNING = "tuning"
    WORKLOAD = "workload"
    HARNESS = "harness"
    UNCLASSIFIED = "unclassified"


KnobKind = Literal["flag", "env"]

# recipe: edit the recipe. recipe-with-eval: edit only with a passing eval at those settings,
# else offer it to tick (docs/alignment.md §5b). reproduction: document for reproduction (not
# carried). pin: carry at the narrowest scope (the verified strategy x hardware). feature: put
# behind the scenario's opt-in workload feature (else reproduction). never: not carried.
KnobAction = Literal["recipe", "recipe-with-eval", "reproduction", "pin", "feature", "never"]

# Where a reproduction block lists a class's deltas, in the order a reader applies them.
ReproGroup = Literal["required", "workload", "benchmark-only"]
REPRO_GROUPS: tuple[ReproGroup, ...] = ("required", "workload", "benchmark-only")


@dataclass(frozen=True)
class KnobClassSpec:
    """What a knob class means everywhere; a place that treats classes differently reads a
    field here rather than matching class names."""

    cls: KnobClass
    action: KnobAction | None  # rules/policy.yaml knob_policy's default; None: never edited
    drift: bool  # a difference is recipe drift; else a benchmark setting (listed, not counted)
    served: bool  # a lever of the served configuration: drift even in a guide's example
    group: ReproGroup | None  # its place in a reproduction block; None: never written there
    heading: str  # the comment over its exports in a reproduction block ("" when never)

    @property
    def reproduced(self) -> bool:
        """A reproduction block writes settings of this class (never the harness's)."""
        return self.group is not None


# In the order lists of classes are shown (the PR's "not carried" list, the blocks' groups).
KNOB_CLASSES: tuple[KnobClassSpec, ...] = (
    KnobClassSpec(
        KnobClass.KERNEL, "recipe", drift=True, served=True, group="required",
        heading="Kernel selection of the benchmarked command.",
    ),
    KnobClassSpec(
        KnobClass.SERVING, "recipe", drift=True, served=True, group="required",
        heading="Serving settings of the benchmarked command.",
    ),
    KnobClassSpec(
        KnobClass.ACCURACY, "recipe-with-eval", drift=True, served=True, group="benchmark-only",
        heading="Benchmark-only — accuracy-sensitive; NOT part of the default command.",
    ),
    KnobClassSpec(
        KnobClass.TUNING, "reproduction", drift=False, served=False, group="benchmark-only",
        heading="Benchmark-only — throughput tuning; NOT part of the default command.",
    ),
    KnobClassSpec(
        KnobClass.WORKLOAD, "feature", drift=False, served=False, group="workload",
        heading="Workload settings of this scenario (agentic, prefix reuse …).",
    ),
    KnobClassSpec(KnobClass.HARNESS, "never", drift=False, served=False, group=None, heading=""),
    # nobody has said an unlisted knob is harmless: it counts as drift, is never edited
    KnobClassSpec(
        KnobClass.UNCLASSIFIED, None, drift=True, served=False, group="benchmark-only",
        heading="Not classified in rules/knobs.yaml — check before use.",
    ),
)  # fmt: skip
KNOB_SPECS: dict[KnobClass, KnobClassSpec] = {spec.cls: spec for spec in KNOB_CLASSES}
_BY_NAME = {spec.cls.value: spec for spec in KNOB_CLASSES}
CLASSIFIED = tuple(spec.cls for spec in KNOB_CLASSES if spec.action is not None)


def knob_spec(name: str) -> KnobClassSpec | None:
    """The spec of a class by its name (a stored ``knob`` field), None for anything else
    (``image``, "")."""
    return _BY_NAME.get(name)


def _flag_key(name: str) -> str:
    """The spelling a flag is listed and looked up by here: ``--no-enable_prefix-caching`` →
    ``--enable-prefix-caching`` (dotted part kept). Syntax only, so that this layer needs no
    flag table; everywhere else ``bot.vllm.canonical_flag`` names a flag."""
    flag, dot, rest = name.strip().partition(".")
    flag = option_name(flag).replace("_", "-")
    if flag.startswith("--no-"):
        flag = "--" + flag[len("--no-") :]
    rest = rest.replace("-", "_")
    return f"{flag}{dot}{rest}"


def _inverse(flag: str) -> str | None:
    for positive, inverse in (("--enable-", "--disable-"), ("--disable-", "--enable-")):
        if flag.startswith(positive):
            return inverse + flag[len(positive) :]
    return None


class FlagKnob(Strict):
    flag: str = Field(pattern=r"^--[a-z0-9][a-z0-9-]*(\.[a-z0-9_]+)?$")
    reason: str = ""


class EnvKnob(Strict):
    pattern: str = Field(pattern=r"^[A-Z_][A-Z0-9_]*\*?$", description="a name, or a prefix*")
    reason: str = ""


class Together(Strict):
    """Settings one launch runs together: one without the others is a command no benchmark
    ran (and may not start), so a plan proposes or offers them as one."""

    name: str = Field(min_length=1)
    reason: str = Field(min_length=1, description="why they only work together, with a source")
    flags: list[str] = Field(default_factory=list)  # canonical spellings (a dotted key or not)
    env: list[str] = Field(default_factory=list)  # names, or PREFIX* patterns

    def holds(self, kind: KnobKind, name: str) -> bool:
        if kind == "env":
            return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.env)
        return _flag_key(name) in self.flags


class KnobRules(Strict):
    classes: dict[KnobClass, str] = Field(description="class → what it means (one sentence)")
    flags: dict[KnobClass, list[FlagKnob]]
    env: dict[KnobClass, list[EnvKnob]]
    # serving features a recipe offers its chat clients; a benchmark that leaves them out
    # sends no such request, so only a *different* value is drift, not a recipe-only one
    recipe_features: list[FlagKnob] = Field(default_factory=list)
    together: list[Together] = Field(default_factory=list)
    # (the env table it was filled from, name → lookup_env's answer): every launch line's env
    # is classed, each name against every pattern; a copy with another table starts afresh
    _env_memo: tuple[object, dict[str, tuple[KnobClass, EnvKnob] | None]] = PrivateAttr(
        default=(None, {})
    )

    @model_validator(mode="after")
    def _well_formed(self) -> KnobRules:
        missing = [c.value for c in CLASSIFIED if c not in self.classes]
        if missing or KnobClass.UNCLASSIFIED in self.classes:
            raise FieldError(("classes",), f"must describe exactly {', '.join(CLASSIFIED)}")
        for section in ("flags", "env"):
            table: dict[KnobClass, list[FlagKnob | EnvKnob]] = getattr(self, section)
            if KnobClass.UNCLASSIFIED in table:
                raise FieldError((section, "unclassified"), "unclassified is what is not listed")
            seen: dict[str, str] = {}
            for cls, entries in table.items():
                for index, entry in enumerate(entries):
                    name = entry.flag if isinstance(entry, FlagKnob) else str(entry.pattern)
                    if isinstance(entry, FlagKnob) and _flag_key(name) != name:
                        raise FieldError(
                            (section, cls.value, index, "flag"),
                            f"write {_flag_key(name)} (the canonical spelling)",
                        )
                    if name in seen:
                        raise FieldError(
                            (section, cls.value, index),
                            f"{name} is already classed {seen[name]}",
                        )
                    seen[name] = cls.value
        for index, entry in enumerate(self.recipe_features):
            if _flag_key(entry.flag) != entry.flag:
                raise FieldError(
                    ("recipe_features", index, "flag"),
                    f"write {_flag_key(entry.flag)} (the canonical spelling)",
                )
        grouped: dict[str, str] = {}
        for index, group in enumerate(self.together):
            for key, names in (("flags", group.flags), ("env", group.env)):
                for at, name in enumerate(names):
                    if key == "flags" and _flag_key(name) != name:
                        raise FieldError(
                            ("together", index, key, at),
                            f"write {_flag_key(name)} (the canonical spelling)",
                        )
                    if name in grouped:
                        raise FieldError(
                            ("together", index, key, at),
                            f"{name} is already in the group {grouped[name]!r}",
                        )
                    grouped[name] = group.name
        return self

    def together_with(self, kind: KnobKind, name: str) -> Together | None:
        """The group of settings ``name`` runs together with, else None."""
        return next((g for g in self.together if g.holds(kind, name)), None)

    def recipe_feature(self, name: str) -> FlagKnob | None:
        """The ``recipe_features`` entry of a flag (any spelling), else None."""
        flag = _flag_key(name).partition(".")[0]
        return next((e for e in self.recipe_features if e.flag == flag), None)

    def lookup_flag(self, name: str) -> tuple[KnobClass, FlagKnob] | None:
        flag = _flag_key(name)
        base, _, key = flag.partition(".")
        inverse = _inverse(base)
        candidates = [*([flag] if key else []), base, *([inverse] if inverse else [])]
        for candidate in candidates:
            for cls, entries in self.flags.items():
                for entry in entries:
                    if entry.flag == candidate:
                        return cls, entry
        return None

    def lookup_env(self, name: str) -> tuple[KnobClass, EnvKnob] | None:
        """An exact name beats a pattern; of patterns, the longest (most specific) wins."""
        table, memo = self._env_memo
        if table is not self.env:
            memo = {}
            self._env_memo = (self.env, memo)
        if name not in memo:
            memo[name] = self._lookup_env(name)
        return memo[name]

    def _lookup_env(self, name: str) -> tuple[KnobClass, EnvKnob] | None:
        best: tuple[int, KnobClass, EnvKnob] | None = None
        for cls, entries in self.env.items():
            for entry in entries:
                if entry.pattern == name:
                    return cls, entry
                if fnmatch.fnmatchcase(name, entry.pattern):
                    rank = len(entry.pattern)
                    if best is None or rank > best[0]:
                        best = (rank, cls, entry)
        return (best[1], best[2]) if best is not None else None

    def lookup(self, kind: KnobKind, name: str) -> tuple[KnobClass, FlagKnob | EnvKnob] | None:
        return self.lookup_flag(name) if kind == "flag" else self.lookup_env(name)

    def reason(self, kind: KnobKind, name: str) -> str:
        """The entry's reason, else the class's description ("" when unclassified)."""
        found = self.lookup(kind, name)
        if found is None:
            return ""
        return found[1].reason or self.classes[found[0]]


# --- policy per class (rules/policy.yaml: knob_policy) ------------------------------------


def _default(cls: KnobClass) -> KnobAction:
    action = KNOB_SPECS[cls].action
    assert action is not None, cls
    return action


class KnobPolicy(Strict):
    kernel: KnobAction = _default(KnobClass.KERNEL)
    serving: KnobAction = _default(KnobClass.SERVING)
    accuracy: KnobAction = _default(KnobClass.ACCURACY)
    tuning: KnobAction = _default(KnobClass.TUNING)
    workload: KnobAction = _default(KnobClass.WORKLOAD)
    harness: KnobAction = _default(KnobClass.HARNESS)

    def action(self, cls: KnobClass) -> KnobAction | None:
        """None for unclassified: reported ("rules to classify"), never edited."""
        if cls is KnobClass.UNCLASSIFIED:
            return None
        action: KnobAction = getattr(self, cls.value)
        return action


class WorkloadFeature(Strict):
    """A benchmark scenario whose workload settings belong behind an opt-in recipe feature."""

    scenario: str = Field(min_length=1, description="Point.scenario, e.g. agentic")
    feature: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="features.<name> key")
    description: str = Field(min_length=1, description="the new feature's description")

    @model_validator(mode="after")
    def _no_spaces(self) -> WorkloadFeature:
        if re.search(r"\s", self.scenario):
            raise FieldError(("scenario",), "a scenario name has no spaces")
        return self
