"""The kind of layer a recipe node is, in maintainers' words ("variant × GPU", "generation").

One vocabulary for the agreement score (where maintainers put a setting) and the PR text
(where an edit puts it, and what the history says of that).
"""

from __future__ import annotations

from collections.abc import Container

PLACEMENTS = (
    "model",
    "variant",
    "variant × GPU",
    "variant × generation",
    "generation",
    "strategy",
    "strategy × GPU",
    "strategy × generation",
    "feature",
    "feature × hardware",
    "mode",
    "mode × hardware",
    "verification",
    "other",
)


def placement_kind(scope: str, gpus: Container[str]) -> str:
    """The kind of layer ``scope`` (a dotted node path, ``variants.mxfp8.hardware_overrides.
    mi300x``) is; a ``hardware_overrides`` key in ``gpus`` is a GPU, any other a generation."""
    parts = scope.split(".")
    if parts[:2] == ["meta", "hardware"]:
        return "verification"
    hardware = ""
    if "hardware_overrides" in parts:
        index = parts.index("hardware_overrides")
        if index + 1 < len(parts):
            hardware = "GPU" if parts[index + 1] in gpus else "generation"
    head = parts[0]
    if head == "model":
        return "model"
    if head == "variants":
        return f"variant × {hardware}" if hardware else "variant"
    if head == "hardware_overrides":
        return "generation" if hardware != "GPU" else "other"
    if head == "strategy_overrides":
        return f"strategy × {hardware}" if hardware else "strategy"
    if head == "features":
        if "modes" in parts:
            return "mode × hardware" if hardware else "mode"
        return "feature × hardware" if hardware else "feature"
    return "other"
