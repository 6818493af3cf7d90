"""``recipe-sync rules``: validate a rules directory."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bot.rules import RULE_FILES, load_rules


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rules",
        help="validate the rules/ files (mapping, flags, env, policy)",
        description="Load and validate every file of a rules directory (default: the bundled "
        "rules/): hardware, models, flags, env, policy and vllm-defaults. A bad value is one "
        "line naming file, key and line, exit status 2; a valid directory prints a count of "
        "each kind of rule.",
    )
    parser.add_argument("--rules", type=Path, default=None, help="rules directory")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.vllm.defaults import DEFAULTS_FILE, read_vllm_defaults

    rules = load_rules(args.rules)
    read_vllm_defaults(rules.directory)
    print(f"rules OK: {rules.directory} ({', '.join((*RULE_FILES, DEFAULTS_FILE))})")
    print(
        f"  {len(rules.hardware.runners)} runner rules, {len(rules.hardware.gpus)} GPUs, "
        f"{len(rules.models.models)} model rules, "
        f"{len(rules.flags.front_end) + len(rules.flags.benchmark_only)} flag rules, "
        f"{len(rules.env.benchmark_only) + len(rules.env.serving)} env rules"
    )
    return 0
