"""Declarative mapping and policy (``rules/*.yaml``), validated at load.

``load_rules()`` reads the project's ``rules/`` directory (or the copy bundled in the wheel,
or ``$RECIPE_SYNC_RULES``) and returns a frozen :class:`Rules`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from bot.digits import is_integer
from bot.errors import InputError, Location
from bot.rules.knobs import KnobClass, KnobKind, KnobRules
from bot.rules.loader import load_validated, validate
from bot.rules.models import EnvRules, FlagRules, HardwareRules, ModelRules, Policy
from bot.rules.practice import PracticeRules
from bot.yamlio.positions import line_of, parse_yaml_with_positions, read_yaml_with_positions

__all__ = ["RULE_FILES", "KnobClass", "KnobKind", "Rules", "default_rules", "load_rules"]

RULE_FILES = (
    "hardware.yaml",
    "models.yaml",
    "flags.yaml",
    "env.yaml",
    "knobs.yaml",
    "policy.yaml",
)


@dataclass(frozen=True)
class Rules:
    directory: Path
    hardware: HardwareRules
    models: ModelRules
    flags: FlagRules
    env: EnvRules
    policy: Policy
    knobs: KnobRules
    # what the recipes history says maintainers do (optional: rules/practice.yaml)
    practice: PracticeRules = field(default_factory=PracticeRules)

    def knob_class(self, kind: KnobKind, name: str) -> KnobClass:
        """The class of a flag (any spelling: ``--no-x``, ``_``, ``--x=v``, dotted units) or
        env variable, from ``rules/knobs.yaml``; ``unclassified`` when it is not listed."""
        found = self.knobs.lookup(kind, name)
        return found[0] if found is not None else KnobClass.UNCLASSIFIED


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

    rules = Rules(
        directory=root,
        hardware=load("hardware.yaml", HardwareRules),  # type: ignore[arg-type]
        models=load("models.yaml", ModelRules),  # type: ignore[arg-type]
        flags=load("flags.yaml", FlagRules),  # type: ignore[arg-type]
        env=load("env.yaml", EnvRules),  # type: ignore[arg-type]
        policy=load("policy.yaml", Policy),  # type: ignore[arg-type]
        knobs=load("knobs.yaml", KnobRules),  # type: ignore[arg-type]
        practice=(
            load("practice.yaml", PracticeRules)  # type: ignore[arg-type]
            if (root / "practice.yaml").is_file()
            else PracticeRules()
        ),
    )
    _every_rule_classed(rules, root)
    return rules


def _every_rule_classed(rules: Rules, root: Path) -> None:
    """Each flag of flags.yaml and each variable env.yaml names exactly has a knob class
    (env.yaml's catch-all patterns such as ``VLLM_*`` only say how the diff reads them)."""
    named: list[tuple[str, str, str, str]] = []
    for section in ("front_end", "benchmark_only", "tuning"):
        for index, flag_rule in enumerate(getattr(rules.flags, section)):
            named.append(("flag", flag_rule.flag, "flags.yaml", f"{section}.{index}.flag"))
    for section in ("benchmark_only", "front_end", "serving"):
        for index, env_rule in enumerate(getattr(rules.env, section)):
            if "*" not in env_rule.pattern:
                named.append(("env", env_rule.pattern, "env.yaml", f"{section}.{index}.pattern"))
    for kind, name, file, key in named:
        if rules.knobs.lookup("flag" if kind == "flag" else "env", name) is None:
            path = root / file
            parts = [int(p) if is_integer(p) else p for p in key.split(".")]
            line = line_of(read_yaml_with_positions(path), parts)
            raise InputError(
                Location(str(path), key, line),
                f"{name} has no class in knobs.yaml (kernel, serving, accuracy, tuning, "
                "workload or harness)",
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
