"""Deterministic alignment-branch names that always pass ``git check-ref-format --branch``."""

from __future__ import annotations

import re

MAX_COMPONENT = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def sanitize_component(text: str) -> str:
    """One ref component: only ``[A-Za-z0-9._-]``, no ``..``, no leading ``.``/``-``,
    no trailing ``.``, no ``.lock`` suffix, never empty."""
    part = _UNSAFE.sub("-", text)
    part = re.sub(r"\.{2,}", ".", part)
    part = re.sub(r"-{2,}", "-", part)
    part = part[:MAX_COMPONENT]
    part = part.lstrip(".-").rstrip(".")
    while part.endswith(".lock"):
        part = part[: -len(".lock")] + "-lock"
    return part.rstrip(".") or "x"


def recipe_slug(recipe_path: str) -> str:
    """``models/deepseek-ai/DeepSeek-R1.yaml`` → ``deepseek-ai-deepseek-r1`` (lower case,
    because branches differing only in case collide on case-insensitive file systems)."""
    stem = re.sub(r"\.ya?ml$", "", recipe_path)
    parts = [part for part in stem.split("/") if part]
    if parts and parts[0] == "models":
        parts = parts[1:]
    return sanitize_component("-".join(parts).lower())


def alignment_branch(prefix: str, bench_repo: str, pr_number: int, recipe_path: str) -> str:
    """``<prefix><benchmark-repo>-<pr>/<recipe-slug>`` (rules/policy.yaml ``branch_prefix``):
    one branch per (benchmark PR, recipe file)."""
    components = [sanitize_component(c) for c in prefix.strip("/").split("/") if c]
    repo_name = bench_repo.rsplit("/", 1)[-1]
    components.append(sanitize_component(f"{repo_name}-{pr_number}"))
    components.append(recipe_slug(recipe_path))
    return "/".join(components)
