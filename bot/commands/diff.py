"""``recipe-sync diff``: compare a benchmark launch with a recipe rendering.

Each side is a JSON file: what ``recipe-sync extract --format json`` prints (one launch
line: narrow it with --point and --arm), what ``recipe-sync render --format json`` prints
(a single-command rendering), or ``{"argv": [...], "env": {...}, "image": "..."}``
("command" may replace "argv" with a shell line; a recipe side may add
"min_vllm_version", either side "config_files": {path: yaml text} for --config FILE).

Exit status: 0 when the served configurations are identical and both argvs parse, 1
otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bot.commands.grammar import (
    add_command,
    add_output,
    casefold_choice,
    did_you_mean,
    output_format,
    write,
)
from bot.errors import InputError, Location
from bot.recipes.repo import load_hardware, per_gpu_memory
from bot.rules import load_rules
from bot.sources import DirectorySource
from bot.vllm.diff import diff_launch
from bot.vllm.report_text import render_text
from bot.vllm.sides import read_side
from bot.vllm.versions import names_a_version


def register(subparsers: Any) -> None:
    summary = "semantic diff of a benchmark vllm serve launch and a recipe rendering"
    parser = add_command(subparsers, "diff", __doc__, summary)
    parser.add_argument(
        "--bench-json", type=Path, required=True, metavar="FILE", help="the benchmark side"
    )
    parser.add_argument(
        "--recipe-json", type=Path, required=True, metavar="FILE", help="the recipe side"
    )
    parser.add_argument("--vllm-version", metavar="V", help="e.g. 0.27.1 or nightly")
    parser.add_argument("--hardware", metavar="H", help="recipes taxonomy hardware id")
    parser.add_argument(
        "--recipes",
        type=Path,
        metavar="DIR",
        help="recipes repo: per-GPU memory from taxonomy.yaml",
    )
    parser.add_argument("--rules", type=Path, default=None, help="rules directory")
    add_output(parser, "write the diff to this file (default: stdout)", formats=("md", "json"))
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # = --format json
    parser.set_defaults(func=run)


def taxonomy_vram(recipes_dir: Path) -> dict[str, float]:
    """Per-GPU memory by hardware id, from the recipes' ``taxonomy.yaml`` alone."""
    return per_gpu_memory(load_hardware(DirectorySource(recipes_dir)))


def run(args: argparse.Namespace) -> int:
    if args.vllm_version is not None and not names_a_version(args.vllm_version):
        raise InputError(
            Location("--vllm-version"),
            f"'{args.vllm_version}' is not a vLLM version (a release such as 0.27.1 or v0.33, "
            "nightly, or latest)",
        )
    rules = load_rules(args.rules)
    bench, _ = read_side(args.bench_json)
    recipe, min_version = read_side(args.recipe_json)
    vram = taxonomy_vram(args.recipes) if args.recipes is not None else None
    if args.hardware is not None:
        known = set(rules.hardware.gpus) | set(vram or {})
        spelled = casefold_choice(args.hardware, known)
        if spelled is None:
            hint = did_you_mean(args.hardware, known)
            raise InputError(
                Location("--hardware"),
                f"unknown hardware id '{args.hardware}'{hint} (not in rules/hardware.yaml gpus"
                + (" nor the taxonomy)" if vram is not None else "; pass --recipes DIR)"),
            )
        args.hardware = spelled
    report = diff_launch(
        bench,
        recipe,
        hardware=args.hardware,
        rules=rules,
        taxonomy_vram=vram,
        version=args.vllm_version,
        recipe_min_version=min_version,
    )
    if args.json or output_format(args) == "json":
        write(args, json.dumps(report.to_json(), indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        write(args, render_text(report) + "\n")
    errors = [f for f in (*report.bench_findings, *report.recipe_findings) if f.severity == "error"]
    return 0 if report.identical and not errors else 1
