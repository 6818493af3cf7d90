"""``recipe-sync extract``: static launch-line extraction from a benchmark repository.

Three modes:

* ``--config-key KEY [--point tp=4,ep=1,dp-attn=false,conc=16] [--arm throughput|eval]
  [--runner-node NODE]``: the launch lines of a master-config key's points;
* ``--script REL_PATH --env K=V …``: one script with a given environment;
* ``--batch IN.jsonl``: one ``{"script": …, "env": {…}}`` per line → one result per line,
  in order; a bad line yields ``{"error": …}`` and the others still run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from bot.benchmarks.export import (
    launch_line_json,
    launch_line_text,
    script_result_json,
    script_text,
)
from bot.benchmarks.model import ARMS, LaunchLine
from bot.benchmarks.repo import BenchRepo, extract, extract_script, load_bench_repo, points
from bot.benchmarks.scope import multinode_reason
from bot.commands.grammar import (
    add_command,
    add_output,
    add_repo,
    note,
    open_repo,
    output_format,
    unknown,
    write,
)
from bot.errors import InputError, Location, RecipeSyncError
from bot.rules import load_rules
from bot.shell import ScriptParser
from bot.sources import FileSource

POINT_KEYS: dict[str, tuple[str, type]] = {
    "tp": ("tp", int),
    "ep": ("ep", int),
    "dp-attn": ("dp_attn", bool),
    "conc": ("conc", int),
    "spec-decoding": ("spec_decoding", str),
    "scenario": ("scenario", str),
    "isl": ("isl", int),
    "osl": ("osl", int),
    "kv-offloading": ("kv_offloading", str),
    "kv-offload-backend": ("kv_offload_backend", str),
    "pp": ("pp", int),
    "dcp": ("dcp", int),
    "pcp": ("pcp", int),
}


def register(subparsers: Any) -> None:
    summary = "statically extract vllm serve launch lines from a benchmark repository"
    parser = add_command(subparsers, "extract", __doc__, summary)
    add_repo(parser, "bench")
    parser.add_argument("--ref", dest="ref_alias", help=argparse.SUPPRESS)  # old spelling
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--config-key", help="master-config key")
    mode.add_argument("--script", help="script path relative to the repository")
    mode.add_argument("--batch", help="JSONL file ('-' for stdin) of {script, env} objects")
    parser.add_argument("--point", help="filter, e.g. tp=4,ep=1,dp-attn=false,conc=16")
    parser.add_argument("--arm", choices=ARMS, help="throughput or eval (default: both)")
    parser.add_argument("--runner-node", help="concrete runner node, e.g. mi355x-amds_03")
    parser.add_argument(
        "--env", action="append", default=[], metavar="K=V", help="script mode environment"
    )
    parser.add_argument("--workdir", help="the job's working directory (script mode)")
    parser.add_argument("--rules", type=Path, help="rules directory")
    add_output(
        parser,
        "write to this file (default: stdout); --batch always writes JSON lines to stdout",
        formats=("md", "json"),
    )
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # = --format json
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.ref_alias:
        note("warning: --ref is deprecated; use --bench-ref")
        args.bench_ref = args.bench_ref or args.ref_alias
    as_json = args.json or output_format(args) == "json"
    source = open_repo(args.bench_repo, args.bench_ref, "--bench-repo")
    if args.batch:
        return _batch(source, args.batch, sys.stdout)
    if args.script:
        env = parse_env(args.env)
        result = extract_script(source, args.script, env, workdir=args.workdir)
        if as_json:
            write(args, json.dumps(script_result_json(result), indent=2) + "\n")
        else:
            write(args, script_text(result) + "\n")
        return 0
    repo = load_bench_repo(source, load_rules(args.rules) if args.rules else None)
    if args.config_key not in repo.configs:
        raise unknown("master-config key", args.config_key, repo.configs, "--config-key")
    if args.runner_node:
        check_runner_node(repo, args.config_key, args.runner_node)
    lines = select_and_extract(repo, args.config_key, args.point, args.arm, args.runner_node)
    if as_json:
        write(args, json.dumps([launch_line_json(line) for line in lines], indent=2) + "\n")
    else:
        write(args, "\n\n".join(launch_line_text(line) for line in lines) + "\n")
    return 0


def check_runner_node(repo: BenchRepo, key: str, node: str) -> None:
    """A runner node must be one ``configs/runners.yaml`` lists for the key's runner label."""
    runners = repo.runners
    if runners is None:
        raise InputError(
            Location("--runner-node", node), "the repository has no configs/runners.yaml to check"
        )
    every = {n for nodes in runners.labels.values() for n in nodes}
    if node not in every:
        raise unknown("runner node", node, every, "--runner-node")
    label = repo.entry(key).runner
    nodes = runners.labels.get(label, ())
    if nodes and node not in nodes:
        raise InputError(
            Location("--runner-node", node),
            f"runner label '{label}' of {key} does not run on this node "
            f"(its nodes: {', '.join(nodes[:8])}{' …' if len(nodes) > 8 else ''})",
        )


def parse_env(items: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InputError(Location("--env", item), "expected K=V")
        env[name] = value
    return env


def parse_point_filter(text: str | None) -> dict[str, object]:
    wanted: dict[str, object] = {}
    if not text:
        return wanted
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or key not in POINT_KEYS:
            known = ", ".join(POINT_KEYS)
            raise InputError(Location("--point", key), f"expected key=value with key in {known}")
        field_name, kind = POINT_KEYS[key]
        if kind is bool:
            if value.lower() not in ("true", "false"):
                raise InputError(Location("--point", key), "expected true or false")
            wanted[field_name] = value.lower() == "true"
        elif kind is int:
            try:
                wanted[field_name] = int(value)
            except ValueError as err:
                raise InputError(Location("--point", key), "expected an integer") from err
        else:
            wanted[field_name] = value
    return wanted


def select_and_extract(
    repo: BenchRepo,
    key: str,
    point_filter: str | None,
    arm: str | None,
    runner_node: str | None,
) -> list[LaunchLine]:
    wanted = parse_point_filter(point_filter)
    entry = repo.entry(key)
    if entry.multinode:
        node = repo.configs[key]
        raise InputError(
            Location(node.file, key, node.line),
            multinode_reason(entry.framework, node.document.get(key)),
        )
    chosen = [
        (point, point_arm)
        for point, point_arm in points(repo, key)
        if (arm is None or point_arm == arm)
        and all(getattr(point, name) == value for name, value in wanted.items())
    ]
    if not chosen:
        raise InputError(
            Location(repo.configs[key].file, key, repo.configs[key].line),
            f"no point matches --point {point_filter or '(any)'} --arm {arm or '(any)'}",
        )
    return [
        extract(repo, key, point, point_arm, runner_node=runner_node) for point, point_arm in chosen
    ]


def _batch(source: FileSource, path: str, out: TextIO) -> int:
    parser = ScriptParser()
    handle = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    failures = 0
    try:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                request = json.loads(raw)
                if not isinstance(request, dict) or not isinstance(request.get("script"), str):
                    raise InputError(
                        Location(path, line=number), 'expected {"script": …, "env": {…}}'
                    )
                env = request.get("env") or {}
                if not isinstance(env, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in env.items()
                ):
                    raise InputError(Location(path, "env", number), "env must map names to strings")
                result = extract_script(source, request["script"], dict(env), parser=parser)
                answer: dict[str, object] = script_result_json(result)
            except json.JSONDecodeError as err:
                failures += 1
                answer = {"error": f"{path}:{number}: not JSON: {err.msg}"}
            except RecipeSyncError as err:
                failures += 1
                answer = {"error": str(err)}
            out.write(json.dumps(answer) + "\n")
    finally:
        if handle is not sys.stdin:
            handle.close()
    return 1 if failures else 0
