"""GitHub Actions job names of benchmark runs → the matrix point they ran.

Display name = ``<caller job> / <template job>`` (docs/spec/benchmark-extraction.md §3.1). GitHub
may
append matrix values in parentheses to the caller part, so the template part is the segment
after the last `` / `` that starts with ``p<digits> |``. Template (empty optional parts leave
runs of spaces, so it is split on whitespace)::

    p<prio> | <prefix> <precision> <runner> <fw> TP<tp>[/PP<n>][/DCP<n>][/PCP<n>][/EP<n>][/DPA]
              [<spec>] [<mode> KV offload] [<backend>] c<conc>[ | eval-only | | eval]

Multi-node: ``<fw> [<n>P ](TP…)[ x <m>D (TP…)] … c<c1>x<c2>…`` (the parentheses around a group
are optional here). :func:`parse_job_name` returns None for any other job (``collect-evals``,
set-up jobs), never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

EvalMode = Literal["eval-only", "eval"]
Role = Literal["", "prefill", "decode"]

# Job-name abbreviations of frameworks (benchmark-tmpl.yml), expanded back to config values.
FRAMEWORK_NAMES = {"sgl": "sglang", "dyn-sgl": "dynamo-sglang", "sgl-disagg": "sglang-disagg"}

_TEMPLATE_START = re.compile(r" / (?=p\d+\s*\|)")
_PRIORITY = re.compile(r"p(\d+)")
_GROUP = re.compile(r"\(?TP(\d+)((?:/(?:PP|DCP|PCP|EP)\d+|/DPA)*)\)?")
_GROUP_PART = re.compile(r"/(PP|DCP|PCP|EP)(\d+)|/(DPA)")
_WORKERS = re.compile(r"(\d+)([PD])")
_CONCURRENCY = re.compile(r"c(\d+(?:x\d+)*)")
_MATRIX_SUFFIX = re.compile(r"\s*\((?P<values>[^()]*)\)\s*$")


@dataclass(frozen=True)
class ParallelGroup:
    """One worker group's parallelism: the whole job on single node, P or D on multi-node."""

    tp: int
    pp: int = 1
    dcp: int = 1
    pcp: int = 1
    ep: int = 1
    dpa: bool = False
    role: Role = ""
    workers: int | None = None  # the <n> of "<n>P" / "<m>D"


@dataclass(frozen=True)
class JobName:
    raw: str
    caller: str  # caller job name as shown, with any appended matrix values
    bucket: str  # caller job name without them: "agentic eval", "single-node 8k1k", …
    matrix_values: str | None  # text GitHub appended in parentheses to the caller part
    priority: int
    model_prefix: str
    precision: str
    runner: str  # runner label, e.g. "cluster:mi355x-amds"
    framework: str  # config value (abbreviations expanded)
    groups: tuple[ParallelGroup, ...]
    spec: str | None  # speculative decoding ("mtp"); None when the name shows none
    kv_offload: str | None  # KV offload mode ("dram"); None when the name shows none
    kv_offload_backend: str | None
    concurrency: tuple[int, ...]  # (64,) single node; (8, 16) for "c8x16"
    eval_mode: EvalMode | None
    template: str  # the part after the caller, whitespace-normalised: "p40 | … c32 | eval-only"
    extra: tuple[str, ...] = ()  # tokens the grammar does not place (future name parts)

    @property
    def tp(self) -> int:
        return self.groups[0].tp

    @property
    def pp(self) -> int:
        return self.groups[0].pp

    @property
    def dcp(self) -> int:
        return self.groups[0].dcp

    @property
    def pcp(self) -> int:
        return self.groups[0].pcp

    @property
    def ep(self) -> int:
        return self.groups[0].ep

    @property
    def dpa(self) -> bool:
        return self.groups[0].dpa

    @property
    def conc(self) -> int:
        return self.concurrency[0]

    @property
    def is_eval(self) -> bool:
        return self.eval_mode is not None

    @property
    def is_multinode(self) -> bool:
        return len(self.groups) > 1 or self.groups[0].role != ""


def _group(token: str, role: Role, workers: int | None) -> ParallelGroup | None:
    match = _GROUP.fullmatch(token)
    if match is None:
        return None
    sizes = {"PP": 1, "DCP": 1, "PCP": 1, "EP": 1}
    dpa = False
    for part in _GROUP_PART.finditer(match.group(2)):
        if part.group(3):
            dpa = True
        else:
            sizes[part.group(1)] = int(part.group(2))
    return ParallelGroup(
        tp=int(match.group(1)),
        pp=sizes["PP"],
        dcp=sizes["DCP"],
        pcp=sizes["PCP"],
        ep=sizes["EP"],
        dpa=dpa,
        role=role,
        workers=workers,
    )


def _groups(tokens: list[str]) -> tuple[tuple[ParallelGroup, ...], int] | None:
    """Parse parallel groups at the start of ``tokens``; return them and tokens consumed."""
    groups: list[ParallelGroup] = []
    i = 0
    while i < len(tokens):
        role: Role = ""
        workers: int | None = None
        start = i
        if groups:
            if tokens[i] != "x":
                break
            i += 1
        if i < len(tokens) and (count := _WORKERS.fullmatch(tokens[i])):
            workers = int(count.group(1))
            role = "prefill" if count.group(2) == "P" else "decode"
            i += 1
        group = _group(tokens[i], role, workers) if i < len(tokens) else None
        if group is None:
            i = start
            break
        groups.append(group)
        i += 1
    return (tuple(groups), i) if groups else None


def parse_job_name(raw: str) -> JobName | None:
    """The matrix point a benchmark job name encodes, or None if it is not one."""
    starts = [m.start() for m in _TEMPLATE_START.finditer(raw)]
    if not starts:
        return None
    caller = raw[: starts[-1]].strip()
    template = raw[starts[-1] + 3 :]
    segments = [segment.split() for segment in template.split("|")]
    if len(segments) < 2 or len(segments[0]) != 1:
        return None
    priority = _PRIORITY.fullmatch(segments[0][0])
    tokens = segments[1]
    eval_mode: EvalMode | None = None
    tail = [token for segment in segments[2:] for token in segment]
    if tail == ["eval-only"] or tail == ["eval"]:
        eval_mode = "eval-only" if tail[0] == "eval-only" else "eval"
    elif tail:
        return None
    if priority is None or len(tokens) < 6:
        return None
    concurrency = _CONCURRENCY.fullmatch(tokens[-1])
    parsed = _groups(tokens[4:-1])
    if concurrency is None or parsed is None:
        return None
    groups, used = parsed
    rest = tokens[4 + used : -1]
    spec, kv_offload, backend, extra = _options(rest)
    bucket = caller
    matrix_values: str | None = None
    if suffix := _MATRIX_SUFFIX.search(caller):
        bucket = caller[: suffix.start()].strip()
        matrix_values = suffix.group("values").strip()
    return JobName(
        raw=raw,
        caller=caller,
        bucket=bucket,
        matrix_values=matrix_values,
        priority=int(priority.group(1)),
        model_prefix=tokens[0],
        precision=tokens[1],
        runner=tokens[2],
        framework=FRAMEWORK_NAMES.get(tokens[3], tokens[3]),
        groups=groups,
        spec=spec,
        kv_offload=kv_offload,
        kv_offload_backend=backend,
        concurrency=tuple(int(c) for c in concurrency.group(1).split("x")),
        eval_mode=eval_mode,
        template=" | ".join(" ".join(segment) for segment in segments),
        extra=extra,
    )


def _options(
    tokens: list[str],
) -> tuple[str | None, str | None, str | None, tuple[str, ...]]:
    """``[<spec>] [<mode> KV offload] [<backend>]`` → (spec, mode, backend, unplaced tokens)."""
    for i in range(1, len(tokens) - 1):
        if tokens[i] == "KV" and tokens[i + 1] == "offload":
            before, mode, after = tokens[: i - 1], tokens[i - 1], tokens[i + 2 :]
            spec = before[0] if before else None
            backend = after[0] if after else None
            return spec, mode, backend, tuple(before[1:] + after[1:])
    spec = tokens[0] if tokens else None
    return spec, None, None, tuple(tokens[1:])
