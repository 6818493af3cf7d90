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

from bot.commands.grammar import add_output, casefold_choice, did_you_mean, output_format, write
from bot.errors import InputError, Location
from bot.recipes.repo import load_hardware, per_gpu_memory
from bot.rules import load_rules
from bot.sources import DirectorySource
from bot.vllm.diff import DiffReport, FlagDiff, LaunchSide, diff_launch
from bot.vllm.normalise import Finding, split_launch_line
from bot.vllm.values import compact
from bot.vllm.versions import names_a_version
from bot.words import count

VALUE_WIDTH = 36


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="semantic diff of a benchmark vllm serve launch and a recipe rendering",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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


def _load_json(path: Path) -> Any:
    name = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(Location(name), f"cannot read file: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise InputError(Location(name), "file is not UTF-8") from err
    except json.JSONDecodeError as err:
        raise InputError(Location(name, line=err.lineno), f"malformed JSON: {err.msg}") from err
    return _launch(data, name)


def _launch(data: Any, name: str) -> dict[str, Any]:
    """The {argv, env, image[, config_files]} of extract's or render's JSON (else ``data``)."""
    if isinstance(data, list) and all(isinstance(item, dict) for item in data):
        # recipe-sync extract --config-key …: one object per point
        if len(data) != 1:
            raise InputError(
                Location(name),
                f"holds {len(data)} launch lines; narrow `recipe-sync extract` to one with "
                "--point and --arm",
            )
        data = data[0]
    if not isinstance(data, dict):
        raise InputError(Location(name), "expected a JSON object with argv, env and image")
    if "commands" in data and "recipe_path" in data:  # recipe-sync render --format json
        commands = data["commands"]
        if not isinstance(commands, list) or len(commands) != 1:
            roles = [c.get("role") for c in commands] if isinstance(commands, list) else []
            raise InputError(
                Location(name, "commands"),
                f"a rendering with {len(roles)} commands ({', '.join(map(str, roles))}); "
                "diff compares one",
            )
        command = commands[0]
        return {
            "argv": command.get("argv"),
            "env": command.get("env", {}),
            "image": data.get("image"),
        }
    if "argv_sources" in data:  # recipe-sync extract (a launch line or a script result)
        if data.get("status") not in (None, "launched"):
            why = data.get("reason") or data.get("invalid") or data.get("status")
            raise InputError(Location(name, "status"), f"no launch to compare: {why}")
        files = data.get("files") or {}
        return {
            "argv": data.get("argv"),
            "env": data.get("env", {}),
            "image": data.get("image"),
            "config_files": files if isinstance(files, dict) else {},
        }
    return data


def _side(path: Path) -> tuple[LaunchSide, str | None]:
    data = _load_json(path)
    name = str(path)
    unknown = set(data) - {"argv", "command", "env", "image", "min_vllm_version", "config_files"}
    if unknown:
        raise InputError(Location(name, sorted(unknown)[0]), "unknown key")
    env: dict[str, str] = {}
    if "command" in data and "argv" not in data:
        if not isinstance(data["command"], str):
            raise InputError(Location(name, "command"), "expected a string")
        env, argv = split_launch_line(data["command"])
    else:
        raw_argv = data.get("argv")
        if not isinstance(raw_argv, list) or not all(isinstance(t, str) for t in raw_argv):
            raise InputError(Location(name, "argv"), "expected a list of strings")
        argv = tuple(raw_argv)
    raw_env = data.get("env", {})
    if not isinstance(raw_env, dict) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) for k, v in raw_env.items()
    ):
        raise InputError(Location(name, "env"), "expected an object of string values")
    env.update({k: str(v) for k, v in raw_env.items()})
    image = data.get("image")
    if image is not None and not isinstance(image, str):
        raise InputError(Location(name, "image"), "expected a string or null")
    configs = data.get("config_files", {})
    if not isinstance(configs, dict) or not all(isinstance(v, str) for v in configs.values()):
        raise InputError(Location(name, "config_files"), "expected an object of YAML texts")
    min_version = data.get("min_vllm_version")
    if min_version is not None and not isinstance(min_version, str):
        raise InputError(Location(name, "min_vllm_version"), "expected a string")
    return LaunchSide(argv, env, image, configs), min_version


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
    bench, _ = _side(args.bench_json)
    recipe, min_version = _side(args.recipe_json)
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


def _cell(diff: FlagDiff, bench: bool) -> str:
    tokens = diff.bench_tokens if bench else diff.recipe_tokens
    value = diff.bench_value if bench else diff.recipe_value
    if not tokens and value is None:
        return "(omitted)"
    text = compact(value)
    return text if len(text) <= VALUE_WIDTH else text[: VALUE_WIDTH - 1] + "…"


def _findings(title: str, findings: tuple[Finding, ...]) -> list[str]:
    if not findings:
        return []
    return [f"{title}:"] + [f"  {f.severity:6} {f.code}: {f.message}" for f in findings]


def render_text(report: DiffReport) -> str:
    """A compact aligned table: verdict, flag, bench, recipe, reason."""
    device = report.device
    where = (
        f"{device.hardware}, {device.memory_gib:g} GiB per GPU, tier {report.tier}"
        if device.hardware and device.memory_gib is not None
        else "unknown (compared on every tier)"
    )
    lines = [
        f"vLLM {report.version.label} ({report.version.source}): {report.version.reason}",
        f"device: {where}; usage context {report.usage_context}",
        *(f"note: {n}" for n in (*report.version.notes, *report.notes)),
        "",
    ]
    rows = [("VERDICT", "FLAG", "BENCH", "RECIPE", "REASON")]
    rows += [
        (d.verdict.value, d.flag, _cell(d, True), _cell(d, False), d.reason) for d in report.diffs
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        lines.append(
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4]
        )
    lines.append("")
    lines += _findings("benchmark findings", report.bench_findings)
    lines += _findings("recipe findings", report.recipe_findings)
    mismatches = report.mismatches
    lines.append(
        f"{count(len(mismatches), 'serving-configuration difference')}, "
        f"{len(report.benchmark_only)} benchmark-only; identical: "
        f"{'yes' if report.identical else 'no'}"
    )
    return "\n".join(lines)
