"""Values of the benchmark model: a matrix point and the launch line it produces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from bot.shell.effects import patches_engine
from bot.shell.result import Alternative, SourceSpan, Unresolved

Arm = Literal["throughput", "eval"]
ARMS: tuple[str, ...] = ("throughput", "eval")
LaunchStatus = Literal["launched", "invalid", "no-launch", "no-script"]


@dataclass(frozen=True)
class Point:
    """One matrix row's identity (docs/spec/benchmark-extraction.md §1.2)."""

    tp: int
    ep: int
    dp_attn: bool
    conc: int
    spec_decoding: str
    scenario: str  # "fixed-seq-len" | "agentic-coding"
    isl: int | None
    osl: int | None
    kv_offloading: str | None
    kv_offload_backend: str | None
    pp: int = 1
    dcp: int = 1
    pcp: int = 1

    def label(self) -> str:
        """Short human form: ``tp=4,ep=1,dp-attn=false,conc=16`` (+ what differs)."""
        parts = [f"tp={self.tp}", f"ep={self.ep}", f"dp-attn={str(self.dp_attn).lower()}"]
        parts.append(f"conc={self.conc}")
        if self.spec_decoding != "none":
            parts.append(f"spec-decoding={self.spec_decoding}")
        if self.scenario == "fixed-seq-len":
            parts.append(f"isl={self.isl},osl={self.osl}")
        else:
            parts.append("scenario=agentic-coding")
            parts.append(f"kv-offloading={self.kv_offloading}")
            if self.kv_offload_backend:
                parts.append(f"kv-offload-backend={self.kv_offload_backend}")
        for name, value in (("pp", self.pp), ("dcp", self.dcp), ("pcp", self.pcp)):
            if value != 1:
                parts.append(f"{name}={value}")
        return ",".join(parts)


@dataclass(frozen=True, eq=False)
class LaunchLine:
    """What one (config key, point, arm) launches, statically extracted from its script."""

    config_key: str
    point: Point
    arm: str  # "throughput" | "eval"
    framework: str
    runner: str
    model: str
    precision: str
    image: str
    model_prefix: str
    script: str | None
    script_blob_sha: str | None
    argv: tuple[str, ...]  # ("vllm", "serve", model, ...) exactly as executed
    argv_sources: tuple[SourceSpan, ...]  # same length as argv
    env: Mapping[str, str]  # the launch's own env additions (script + library), export order
    job_env: Mapping[str, str]  # the input environment the job gave the script
    unresolved: tuple[Unresolved, ...]
    invalid: str | None  # "point not valid for this script: <why> (file:line)"
    status: LaunchStatus = "launched"
    reason: str | None = None  # why there is no argv (no script, no launch, invalid)
    env_unset: tuple[str, ...] = ()  # job env variables the script unset
    assumptions: tuple[Unresolved, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)  # files the script wrote first
    launch: SourceSpan | None = None  # the launch command (or the exit) in the script
    fleet: str | None = None
    runner_node: str | None = None
    # facts a reader needs that are neither unknown nor assumed: e.g. the label also runs on
    # a fleet whose launcher changes this line
    notes: tuple[str, ...] = ()
    # the launcher stages the model in a directory chosen on the node: (the placeholder the
    # model argument holds, the model it is a copy of: the config's MODEL)
    staged_model: tuple[str, str] | None = None
    alternatives: tuple[Alternative, ...] = ()  # launch lines selected at run time
    # where each unresolved item reaches: "argv:<index>" / "env:<NAME>" (none: the whole line)
    reach: Mapping[Unresolved, tuple[str, ...]] = field(default_factory=dict)

    @property
    def resolved(self) -> bool:
        return self.status == "launched" and not self.unresolved

    @property
    def engine_patch(self) -> Unresolved | None:
        """The patch the script applied to installed code before this launch (``git apply``
        in the container): the lane ran a patched engine, not its image as published."""
        return next((item for item in self.assumptions if patches_engine(item)), None)
