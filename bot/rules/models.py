"""Schemas of the files in ``rules/``. Every model forbids unknown keys so typos fail loudly."""

from __future__ import annotations

import fnmatch
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from bot.rules.knobs import KnobPolicy, WorkloadFeature
from bot.rules.loader import FieldError


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- hardware.yaml -------------------------------------------------------------------------


class RunnerRule(Strict):
    """A benchmark runner label (``cluster:`` stripped) or fleet name glob → taxonomy id."""

    pattern: str = Field(min_length=1)
    hardware: str = Field(min_length=1)
    reason: str = ""


class Gpu(Strict):
    """Per-GPU facts for a taxonomy hardware id (used when no taxonomy is at hand)."""

    memory_gib: float = Field(gt=0, description="memory the device reports, GiB (2^30)")
    device_name: str = Field(min_length=1, description="name the device reports")
    platform: Literal["cuda", "rocm", "tpu", "cpu", "xpu", "npu"]


class StagedModels(Strict):
    """A launcher that picks ``MODEL_PATH`` from the checkpoint name (``${MODEL##*/}``).

    A name in ``names`` is read from ``staged_dir``; any other checkpoint is downloaded by the
    script into ``writable_dir`` (``launch_b300-nv.sh``: /scratch/models vs /data/models).
    """

    staged_dir: str = Field(min_length=1, description="read-only directory of staged checkpoints")
    writable_dir: str = Field(min_length=1, description="where other checkpoints are downloaded")
    names: list[str] = Field(description="checkpoint directory names (HF repo basenames) staged")


class Launcher(Strict):
    """How ``runners/launch_<fleet>.sh`` picks a single-node script and edits the env.

    Env edits are applied in this order: ``port``, ``model_paths`` or ``staged_models`` (sets
    ``MODEL_PATH``), ``env`` (values may reference the job env as ``${VAR}``, e.g.
    ``MODEL: ${MODEL_PATH}``), then ``whitelist`` (a ``docker run -e`` list: only these
    variables reach the script).
    """

    gpu_token: str = Field(min_length=1, description="GPU token in script names")
    framework_tagged_first: bool = Field(
        description="try <p>_<prec>_<gpu>_<framework>[_mtp].sh before the untagged name"
    )
    framework_suffixes: dict[str, str] = Field(
        default_factory=dict,
        description="framework → suffix of the untagged name (trt → _trt, atom → _atom)",
    )
    mtp_suffix_values: list[str] = Field(
        default_factory=lambda: ["mtp"], description="SPEC_DECODING values that add _mtp"
    )
    port: str | None = Field(
        default=None,
        description="PORT the launcher exports: a number, or 'runner-digit:<base>' "
        "(base + last digit of RUNNER_NAME), or 'opaque' (not statically knowable)",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="env the launcher sets, in order; ${VAR} refers to the job env; a value "
        "'<NAME:opaque:reason>' marks a run-time value",
    )
    model_paths: dict[str, str] = Field(
        default_factory=dict,
        description="'<model-prefix>/<precision>' → the MODEL_PATH the launcher stages "
        "('opaque' when it probes candidate directories at run time)",
    )
    staged_models: StagedModels | None = Field(
        default=None,
        description="MODEL_PATH from the checkpoint basename: staged or downloaded directory",
    )
    whitelist: list[str] | None = Field(
        default=None, description="docker -e whitelist: only these variables reach the script"
    )
    workdir: str | None = Field(
        default=None, description="the job's working directory in the container, when fixed"
    )

    @field_validator("port")
    @classmethod
    def _port_form(cls, value: str | None) -> str | None:
        if value is None or value == "opaque" or re.fullmatch(r"\d+|runner-digit:\d+", value):
            return value
        raise ValueError("port must be a number, 'runner-digit:<base>' or 'opaque'")

    @field_validator("model_paths")
    @classmethod
    def _model_path_keys(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            if not re.fullmatch(r"[^/\s]+/[^/\s]+", key):
                raise ValueError(f"model_paths key '{key}' must be '<model-prefix>/<precision>'")
        return value

    @model_validator(mode="after")
    def _one_model_path_rule(self) -> Launcher:
        if self.model_paths and self.staged_models is not None:
            raise FieldError(
                ("staged_models",), "a launcher sets MODEL_PATH by model_paths or staged_models"
            )
        return self


class HardwareRules(Strict):
    runners: list[RunnerRule]
    launchers: dict[str, Launcher]
    gpus: dict[str, Gpu]

    @model_validator(mode="after")
    def _runner_targets_known(self) -> HardwareRules:
        for index, rule in enumerate(self.runners):
            if rule.hardware not in self.gpus:
                raise FieldError(
                    ("runners", index, "hardware"),
                    f"'{rule.hardware}' is not a hardware id listed under gpus",
                )
        return self

    def hardware_for_runner(self, runner_label: str) -> str | None:
        """Taxonomy id for a runner label or node/fleet name; None when no rule matches."""
        label = runner_label.removeprefix("cluster:")
        for rule in self.runners:
            if fnmatch.fnmatchcase(label, rule.pattern):
                return rule.hardware
        return None


# --- models.yaml ---------------------------------------------------------------------------


class ModelRule(Strict):
    """Benchmark model id → recipe file, where the recipe's own model ids don't say it."""

    benchmark_model: str = Field(min_length=1)
    recipe: str = Field(pattern=r"^[^/\s]+/[^/\s]+$", description="<org>/<repo> of models/")
    variant: str | None = None
    precisions: dict[str, str] = Field(
        default_factory=dict, description="benchmark precision → recipe variant key"
    )
    reason: str = ""


class ModelRules(Strict):
    models: list[ModelRule] = Field(default_factory=list)
    unrendered_frameworks: dict[str, str] = Field(
        default_factory=dict, description="framework → why recipes do not render it"
    )
    checkpoint_tags: dict[str, int] = Field(
        default_factory=dict,
        description="quantisation tag of a checkpoint name → bits per weight (new variants)",
    )


# --- flags.yaml ----------------------------------------------------------------------------


class FlagRule(Strict):
    flag: str = Field(pattern=r"^--?[A-Za-z0-9][A-Za-z0-9_.-]*$")
    value: str | None = Field(default=None, description="only this value, when given")
    reason: str = Field(min_length=1)


class JsonKeyRule(Strict):
    flag: str = Field(pattern=r"^--[a-z0-9-]+$", description="the JSON-valued flag")
    key: str = Field(min_length=1)
    value: str | int | float | bool | None = Field(
        default=None, description="only this value, when given"
    )
    reason: str = Field(min_length=1)


Placement = Literal["profile", "hardware", "strategy", "generation"]


class TuningRule(Strict):
    flag: str = Field(pattern=r"^--[a-z0-9-]+$")
    placement: Placement
    reason: str = Field(min_length=1)


class FlagRules(Strict):
    front_end: list[FlagRule]
    benchmark_only: list[FlagRule]
    benchmark_only_json_keys: list[JsonKeyRule]
    tuning: list[TuningRule]
    new_flag_placement: Placement = "profile"


# --- env.yaml ------------------------------------------------------------------------------


class EnvRule(Strict):
    pattern: str = Field(min_length=1, description="fnmatch pattern on the variable name")
    reason: str = Field(min_length=1)
    placement: Placement | None = Field(
        default=None, description="where a new variable of this kind is added to a recipe"
    )


# rules/env.yaml's lists, in the order they are matched (not knob classes: rules/knobs.yaml)
EnvList = Literal["benchmark_only", "front_end", "serving"]
ENV_LISTS: tuple[EnvList, ...] = ("benchmark_only", "front_end", "serving")


class EnvRules(Strict):
    benchmark_only: list[EnvRule]
    front_end: list[EnvRule] = Field(default_factory=list)
    serving: list[EnvRule]

    def classify(self, name: str) -> tuple[EnvList, EnvRule] | None:
        """(the list, its rule) for ``name``; the first list that matches wins."""
        for kind in ENV_LISTS:
            rule: EnvRule
            for rule in getattr(self, kind):
                if fnmatch.fnmatchcase(name, rule.pattern):
                    return kind, rule
        return None

    def inert(self, name: str) -> bool:
        """A benchmark-only or front-end variable: its value never changes serving."""
        found = self.classify(name)
        return found is not None and found[0] != "serving"


# --- policy.yaml ---------------------------------------------------------------------------


class EvalThreshold(Strict):
    task: str = Field(min_length=1)
    metric: str = Field(min_length=1, description="lm-eval filter, e.g. strict-match")
    minimum: float = Field(ge=0, le=1)
    model_prefix: str | None = Field(default=None, description="only for this model prefix")


class PrPolicy(Strict):
    draft: bool = True
    max_open: int = Field(default=10, ge=1)
    max_new_per_hour: int = Field(default=5, ge=1)
    labels: list[str] = Field(default_factory=lambda: ["automated", "recipe-sync"])


class Policy(Strict):
    trigger_label: str = Field(default="recipe-sync", min_length=1)
    comment_command: str = Field(default="/recipe-sync", pattern=r"^/[a-z][a-z0-9-]*$")
    branch_prefix: str = Field(default="recipe-sync/", pattern=r"^[A-Za-z0-9._/-]+/$")
    recipe_only_flags: Literal["report", "remove"] = "report"
    mark_verified: bool = True
    # report: hand-written guide sections are compared, never rewritten; adopt: a hand-written
    # section documenting the same benchmark lane is replaced by the managed one
    guide_sections: Literal["report", "adopt"] = "report"
    # when the guide gets a benchmark reproduction block: with_edits = only in an alignment
    # PR that also edits the recipe (never a guide-only PR), always = also on its own,
    # never = no block at all. Maintainers wrote reproduction sections for 3 lanes in July
    # 2026 (recipes #635, #673, and the seed's review asked for one beside its edits) while
    # "always" would have written 142 since June, 41 PRs of them guide-only.
    reproduction: Literal["with_edits", "always", "never"] = "with_edits"
    # a candidate edit goes into the diff when its adoption estimate (bot.align.confidence,
    # from rules/practice.yaml) reaches this; the others are offered as a checklist
    propose_above: float = Field(default=0.5, ge=0.0, le=1.0)
    # … and the adoptions behind it are by at least this many distinct maintainers
    propose_min_authors: int = Field(default=2, ge=0)
    eval_thresholds: list[EvalThreshold]
    pr: PrPolicy = PrPolicy()
    dashboard: bool = False
    dashboard_title: str = "recipe-sync: recipe drift dashboard"
    knob_policy: KnobPolicy = KnobPolicy()
    workload_features: list[WorkloadFeature] = Field(default_factory=list)

    def workload_feature(self, scenario: str | None) -> WorkloadFeature | None:
        """The opt-in feature a benchmark scenario's workload settings belong behind."""
        return next((w for w in self.workload_features if w.scenario == scenario), None)

    def threshold(self, task: str, metric: str, model_prefix: str | None = None) -> float | None:
        """Pass threshold for (task, metric); a model-specific rule beats a generic one."""
        generic: float | None = None
        for rule in self.eval_thresholds:
            if rule.task != task or rule.metric != metric:
                continue
            if rule.model_prefix is None:
                generic = rule.minimum
            elif rule.model_prefix == model_prefix:
                return rule.minimum
        return generic
