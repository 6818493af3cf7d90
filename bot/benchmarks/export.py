"""What ``recipe-sync extract`` writes of launch lines and script results: their JSON (which
``recipe-sync diff`` reads back) and a shell-quoted text for people."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from bot.benchmarks.model import LaunchLine, Point
from bot.shell import Alternative, ScriptResult
from bot.shell.result import SourceSpan, Unresolved

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


def launch_line_text(line: LaunchLine) -> str:
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


def script_text(result: ScriptResult) -> str:
    out = [f"# {result.script} ({result.status})"]
    if result.status == "launched":
        out.append(_command(result.argv, result.env))
    else:
        out.append(f"  {result.reason}")
    out += _notes(result.unresolved, result.assumptions)
    out += _alternatives(result.alternatives)
    return "\n".join(out)
