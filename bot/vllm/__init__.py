"""vLLM CLI semantics: normalise ``vllm serve`` argv, defaults by version, semantic diff.

``normalise`` reproduces vLLM's argument parser; ``diff_launch`` compares a benchmark launch
with a recipe rendering and says, per flag, whether the served configuration differs.
"""

from bot.vllm.catalogue import canonical_flag
from bot.vllm.diff import diff_launch
from bot.vllm.diff_report import DeviceContext, DiffReport, FlagDiff, LaunchSide, Verdict
from bot.vllm.normalise import normalise, split_launch_line
from bot.vllm.serve_config import Finding, ServeConfig, Setting
from bot.vllm.versions import VersionResolution, parse_image, resolve_version

__all__ = [
    "DeviceContext",
    "DiffReport",
    "Finding",
    "FlagDiff",
    "LaunchSide",
    "ServeConfig",
    "Setting",
    "Verdict",
    "VersionResolution",
    "canonical_flag",
    "diff_launch",
    "normalise",
    "parse_image",
    "resolve_version",
    "split_launch_line",
]
