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
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from bot.benchmarks.model import ARMS, LaunchLine, Point
from bot.benchmarks.repo import BenchRepo, extract, extract_script, load_bench_repo, points
from bot.benchmarks.scope import multinode_reason
from bot.commands.grammar import (
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
from bot.shell import Alternative, ScriptParser, ScriptResult
from bot.shell.result import SourceSpan, Unresolved
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
    parser = subparsers.add_parser(
        "extract",
        help="statically extract vllm serve launch lines from a benchmark repository",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
            write(args, _human_script(result) + "\n")
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
        write(args, "\n\n".join(_human_line(line) for line in lines) + "\n")
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


# --- JSON -------------------------------------------------------------------------------------


def _span(span: SourceSpan | None) -> dict[str, object] | None:
    return None if span is None else {"file": span.file, "line": span.line}


def _item(item: Unresolved) -> dict[str, object]:
    return {"what": item.what, "why": item.why, "file": item.file, "line": item.line}


def point_json(point: Point) -> dict[str, object]:
    return {
        "tp": point.tp, "ep": point.ep, "dp-attn": point.dp_attn, "conc": point.conc,
        "spec-decoding": point.spec_decoding, "scenario": point.scenario,
        "isl": point.isl, "osl": point.osl, "kv-offloading": point.kv_offloading,
        "kv-offload-backend": point.kv_offload_backend,
        "pp": point.pp, "dcp": point.dcp, "pcp": point.pcp,
    }  # fmt: skip


def launch_line_json(line: LaunchLine) -> dict[str, object]:
    return {
        "config_key": line.config_key,
        "point": point_json(line.point),
        "arm": line.arm,
        "status": line.status,
        "reason": line.reason,
        "invalid": line.invalid,
        "framework": line.framework,
        "runner": line.runner,
        "fleet": line.fleet,
        "runner_node": line.runner_node,
        "model": line.model,
        "precision": line.precision,
        "image": line.image,
        "model_prefix": line.model_prefix,
        "script": line.script,
        "script_blob_sha": line.script_blob_sha,
        "argv": list(line.argv),
        "argv_sources": [_span(s) for s in line.argv_sources],
        "env": dict(line.env),
        "env_unset": list(line.env_unset),
        "job_env": dict(line.job_env),
        "unresolved": [_item(u) for u in line.unresolved],
        "assumptions": [_item(u) for u in line.assumptions],
        "notes": list(line.notes),
        "files": dict(line.files),
        "launch": _span(line.launch),
        "alternatives": [_alternative(a) for a in line.alternatives],
    }


def _alternative(alternative: Alternative) -> dict[str, object]:
    return {
        "argv": list(alternative.argv),
        "env": dict(alternative.env),
        "env_unset": list(alternative.env_unset),
        "conditions": list(alternative.conditions),
    }


def script_result_json(result: ScriptResult) -> dict[str, object]:
    return {
        "script": result.script,
        "status": result.status,
        "reason": result.reason,
        "invalid": result.invalid,
        "argv": list(result.argv),
        "argv_sources": [_span(s) for s in result.argv_sources],
        "env": dict(result.env),
        "env_unset": list(result.env_unset),
        "unresolved": [_item(u) for u in result.unresolved],
        "assumptions": [_item(u) for u in result.assumptions],
        "files": dict(result.files),
        "launch": _span(result.launch),
        "alternatives": [_alternative(a) for a in result.alternatives],
        "paths": result.paths,
    }


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


# --- human output -----------------------------------------------------------------------------


def _command(argv: tuple[str, ...], env: Mapping[str, str]) -> str:
    """Shell-quoted, one option (with its value) per line."""
    lines: list[str] = []
    for index, arg in enumerate(argv):
        if index == 0 or (arg.startswith("-") and index > 1):
            lines.append(shlex.quote(arg))
        else:
            lines[-1] += " " + shlex.quote(arg)
    body = " \\\n    ".join(lines)
    prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    return f"{prefix} \\\n{body}" if prefix else body


def _notes(unresolved: tuple[Unresolved, ...], assumptions: tuple[Unresolved, ...]) -> list[str]:
    lines = [f"  unresolved: {u}" for u in unresolved]
    lines += [f"  assumed:    {u}" for u in assumptions]
    return lines


def _human_line(line: LaunchLine) -> str:
    head = f"{line.config_key} [{line.arm}] {line.point.label()}"
    where = f"{line.script or 'no script'} ({line.status})"
    out = [f"# {head}", f"# {where}  image={line.image}"]
    if line.status == "launched":
        out.append(_command(line.argv, line.env))
    else:
        out.append(f"  {line.reason}")
    out += _notes(line.unresolved, line.assumptions)
    out += [f"  note:       {note}" for note in line.notes]
    out += _alternatives(line.alternatives)
    return "\n".join(out)


def _alternatives(alternatives: tuple[Alternative, ...]) -> list[str]:
    """The launch lines a run-time condition selects between, each with its condition."""
    out: list[str] = []
    for number, alternative in enumerate(alternatives, 1):
        when = "; ".join(alternative.conditions) or "otherwise"
        out.append(f"# alternative {number} of {len(alternatives)}, when {when}:")
        out.append(_command(alternative.argv, alternative.env))
    return out


def _human_script(result: ScriptResult) -> str:
    out = [f"# {result.script} ({result.status})"]
    if result.status == "launched":
        out.append(_command(result.argv, result.env))
    else:
        out.append(f"  {result.reason}")
    out += _notes(result.unresolved, result.assumptions)
    out += _alternatives(result.alternatives)
    return "\n".join(out)
