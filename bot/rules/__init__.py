"""Declarative mapping and policy (``rules/*.yaml``), validated at load.

``load_rules()`` reads the project's ``rules/`` directory (or the copy bundled in the wheel,
or ``$RECIPE_SYNC_RULES``) and returns a frozen :class:`Rules`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from bot.errors import InputError, Location
from bot.rules.loader import load_validated, parse_yaml_with_positions, validate
from bot.rules.models import EnvRules, FlagRules, HardwareRules, ModelRules, Policy

RULE_FILES = ("hardware.yaml", "models.yaml", "flags.yaml", "env.yaml", "policy.yaml")


@dataclass(frozen=True)
class Rules:
    directory: Path
    hardware: HardwareRules
    models: ModelRules
    flags: FlagRules
    env: EnvRules
    policy: Policy


def default_rules_dir() -> Path:
    """``$RECIPE_SYNC_RULES``, else the checkout's ``rules/``, else the bundled copy."""
    env = os.environ.get("RECIPE_SYNC_RULES")
    if env:
        return Path(env)
    package = Path(__file__).resolve().parent.parent
    for candidate in (package.parent / "rules", package / "_bundled" / "rules"):
        if candidate.is_dir():
            return candidate
    raise InputError(Location("rules/"), "no rules directory found; set RECIPE_SYNC_RULES")


def load_rules(directory: Path | None = None) -> Rules:
    root = directory or default_rules_dir()
    if not root.is_dir():
        raise InputError(Location(str(root)), "rules directory does not exist")

    def load(name: str, model: type) -> object:
        path = root / name
        return load_validated(path, model, display=str(path))

    return Rules(
        directory=root,
        hardware=load("hardware.yaml", HardwareRules),  # type: ignore[arg-type]
        models=load("models.yaml", ModelRules),  # type: ignore[arg-type]
        flags=load("flags.yaml", FlagRules),  # type: ignore[arg-type]
        env=load("env.yaml", EnvRules),  # type: ignore[arg-type]
        policy=load("policy.yaml", Policy),  # type: ignore[arg-type]
    )


REPO_POLICY_PATH = ".github/recipe-sync.yml"


def repo_policy(text: str, base: Policy, display: str = REPO_POLICY_PATH) -> Policy:
    """A benchmark repository's ``.github/recipe-sync.yml`` over ``base`` (the service's policy).

    Same schema as ``rules/policy.yaml``; every key is optional and overrides the service's
    (``pr`` key by key). Raises :class:`InputError` naming file, key and line.
    """
    data = parse_yaml_with_positions(text, display)
    if data is not None and not isinstance(data, dict):
        raise InputError(Location(display, line=1), "expected a mapping of policy keys")
    return validate(data, Policy, display, defaults=base.model_dump())


@cache
def default_rules() -> Rules:
    """The default rules, loaded once per process."""
    return load_rules()
