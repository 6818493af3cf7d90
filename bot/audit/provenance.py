"""Where each side of a difference is written: the recipe YAML node and the script line.

The renderer records a YAML path per emitted flag and env var (``model.base_args[3]``,
``strategies/single_node_tep.yaml:vllm_args[0]``); the extractor records a script line per
argv element. The dashboard links both, so a maintainer lands on the line to change.
Recipe paths are resolved to line numbers once per report (:func:`locate_recipe_lines`),
outside the cached comparison, from the recipes repository's files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from bot.argv import option_name
from bot.audit.model import AuditRow, FlagRow
from bot.benchmarks import LaunchLine
from bot.recipes import Rendering
from bot.sources import FileSource, read_text
from bot.vllm import FlagDiff
from bot.yamlio.yaml12 import line_of

_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
SEP = "#"  # "models/x.yaml#model.base_args[3]" until the line is known


def recipe_origin(rendering: Rendering, diff: FlagDiff) -> str:
    """``file#yaml.path`` of the recipe's side of ``diff`` ("" when the recipe omits it)."""
    path: str | None = None
    if diff.kind == "image":
        path = rendering.image_origin
    elif rendering.commands:
        command = rendering.commands[0]
        if diff.kind == "env":
            for env in command.env_origins:
                if env.name == diff.flag:
                    path = env.path
        elif diff.recipe_tokens:
            spelled = option_name(diff.recipe_tokens[0])
            for arg in command.args:
                if arg.flag is not None and arg.flag in (spelled, diff.flag):
                    path = arg.path
    if not path or path.startswith("default-image"):
        return ""
    file, _, node = path.rpartition(":") if ":" in path else ("", "", path)
    return f"{file or rendering.recipe_path}{SEP}{node}"


def bench_origin(launch: LaunchLine, diff: FlagDiff) -> str:
    """``script:line`` where the benchmark spells its side of ``diff`` (else the launch)."""
    if diff.kind == "flag" and diff.bench_tokens:
        spelled = option_name(diff.bench_tokens[0])
        for index in range(len(launch.argv) - 1, -1, -1):
            token = option_name(launch.argv[index])
            if token == spelled and index < len(launch.argv_sources):
                return str(launch.argv_sources[index])
    return str(launch.launch) if launch.launch is not None else ""


def with_bench_origins(flags: Iterable[FlagRow], origins: dict[str, str]) -> tuple[FlagRow, ...]:
    return tuple(replace(f, bench_at=origins.get(f.flag, "")) for f in flags)


def yaml_parts(node: str) -> list[str | int]:
    return [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PART.finditer(node)]


def locate_recipe_lines(rows: Iterable[AuditRow], source: FileSource) -> tuple[AuditRow, ...]:
    """Replace each ``file#yaml.path`` with ``file:line`` (the path stays when it is not found)."""
    texts: dict[str, str | None] = {}
    lines: dict[str, str] = {}

    def resolve(origin: str) -> str:
        if SEP not in origin:
            return origin
        if origin not in lines:
            file, node = origin.split(SEP, 1)
            if file not in texts:
                texts[file] = read_text(source, file) if source.exists(file) else None
            text = texts[file]
            line = line_of(text, yaml_parts(node)) if text is not None else None
            lines[origin] = f"{file}:{line}" if line is not None else f"{file} ({node})"
        return lines[origin]

    out: list[AuditRow] = []
    for row in rows:
        if any(SEP in f.recipe_at for f in row.flags):
            flags = tuple(replace(f, recipe_at=resolve(f.recipe_at)) for f in row.flags)
            row = replace(row, flags=flags)
        out.append(row)
    return tuple(out)
