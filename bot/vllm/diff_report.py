"""What :func:`bot.vllm.diff.diff_launch` compares and answers: the two launch sides, the
device, and a :class:`DiffReport` of one :class:`FlagDiff` (verdict and reason) per canonical
key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.vllm.serve_config import Finding
from bot.vllm.versions import VersionResolution, fmt_version


@dataclass(frozen=True)
class LaunchSide:
    """One side of the comparison: the server argv, its environment and image."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    image: str | None = None
    config_files: Mapping[str, str] = field(default_factory=dict)  # --config FILE → content


@dataclass(frozen=True)
class DeviceContext:
    hardware: str | None
    memory_gib: float | None  # per GPU, GiB
    device_name: str | None
    platform: str | None


class Verdict(StrEnum):
    SAME = "same"
    EQUIVALENT = "equivalent (default)"
    DIFFERS = "differs"
    BENCHMARK_ONLY = "benchmark-only"
    FRONT_END_ONLY = "front-end-only"
    RECIPE_ONLY = "recipe-only"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class FlagDiff:
    kind: str  # "flag" | "env" | "image"
    key: str  # canonical key ("scheduler.max_num_seqs", "speculative_config", env name, "image")
    flag: str  # canonical long spelling ("--max-num-seqs"; env: the variable name)
    verdict: Verdict
    bench_value: Any  # canonical values (None when absent)
    recipe_value: Any
    bench_tokens: tuple[str, ...]  # raw tokens as spelled on each side, () when absent
    recipe_tokens: tuple[str, ...]
    reason: str  # one sentence a reviewer can check
    category: str  # engine | maybe | api | tracing | topology | front-end | benchmark | env | image
    benchmark_only_keys: tuple[str, ...] = ()  # e.g. JSON keys stripped from --speculative-config

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": self.key,
            "flag": self.flag,
            "verdict": self.verdict.value,
            "bench_value": self.bench_value,
            "recipe_value": self.recipe_value,
            "bench_tokens": list(self.bench_tokens),
            "recipe_tokens": list(self.recipe_tokens),
            "reason": self.reason,
            "category": self.category,
            "benchmark_only_keys": list(self.benchmark_only_keys),
        }


# Categories whose differences change the served configuration (docs/spec/vllm-cli-semantics.md
# §5.8-5.9).
CONFIG_CATEGORIES = frozenset({"engine", "maybe", "env", "image"})
MISMATCH_VERDICTS = frozenset({Verdict.DIFFERS, Verdict.RECIPE_ONLY, Verdict.UNKNOWN})


@dataclass(frozen=True)
class DiffReport:
    diffs: tuple[FlagDiff, ...]  # flags, then env, then image
    version: VersionResolution
    device: DeviceContext
    tier: str | None  # the device's tier label; None when the device is unknown
    usage_context: str
    bench_findings: tuple[Finding, ...]
    recipe_findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()

    @property
    def mismatches(self) -> tuple[FlagDiff, ...]:
        """Differences of the served configuration (not front-end, API, tracing, topology)."""
        return tuple(
            d
            for d in self.diffs
            if d.verdict in MISMATCH_VERDICTS and d.category in CONFIG_CATEGORIES
        )

    @property
    def benchmark_only(self) -> tuple[FlagDiff, ...]:
        return tuple(d for d in self.diffs if d.verdict is Verdict.BENCHMARK_ONLY)

    @property
    def identical(self) -> bool:
        """§5.9: no engine differences and no unresolved maybe-equivalences remain."""
        return not self.mismatches

    def to_json(self) -> dict[str, Any]:
        def finding(f: Finding) -> dict[str, Any]:
            return {
                "severity": f.severity,
                "code": f.code,
                "message": f.message,
                "tokens": list(f.tokens),
            }

        return {
            "version": {
                "version": self.version.label,
                "rules": fmt_version(self.version.rules),
                "source": self.version.source,
                "reason": self.version.reason,
                "notes": list(self.version.notes),
            },
            "device": {
                "hardware": self.device.hardware,
                "memory_gib": self.device.memory_gib,
                "device_name": self.device.device_name,
                "platform": self.device.platform,
                "tier": self.tier,
            },
            "usage_context": self.usage_context,
            "identical": self.identical,
            "diffs": [d.to_json() for d in self.diffs],
            "findings": {
                "bench": [finding(f) for f in self.bench_findings],
                "recipe": [finding(f) for f in self.recipe_findings],
            },
            "notes": list(self.notes),
        }
