"""lm-eval results and the benchmark's own PASS/FAIL lines, read from a job log
(docs/spec/benchmark-extraction.md §3.3).

lm-eval prints one Markdown table per run, one row per (task, filter)::

    |Tasks|Version|     Filter     |n-shot|  Metric   |   |Value |   |Stderr|
    |-----|------:|----------------|-----:|-----------|---|-----:|---|-----:|
    |gsm8k|      3|flexible-extract|     5|exact_match|↑  |0.9412|±  |0.0065|
    |     |       |strict-match    |     5|exact_match|↑  |0.9386|±  |0.0066|

Columns are found by header name (the ``±`` and arrow columns may be absent); a blank task
cell repeats the row above. ``utils/evals/validate_scores.py`` then prints
``PASS: [conc=<N>] <task> <metric>,<filter> = <v> (>= <thr> from <src>)`` or
``FAIL: … (< <thr> from <src>)``. Batched evals print several tables; the concurrency of each
is the ``num_concurrent=`` lm-eval echoed last before it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from bot.digits import is_integer
from bot.evidence.logtext import LogLine, log_lines

_NUM_CONCURRENT = re.compile(r"num_concurrent=(\d+)")
_VERDICT = re.compile(
    r"\s*(?:##\[error\])?(?P<verdict>PASS|FAIL): (?:\[conc=(?P<conc>\d+)\] )?"
    r"(?P<task>\S+) (?P<metric>\S+) = (?P<value>\S+) "
    r"\((?P<op>>=|<) (?P<threshold>\S+) from (?P<source>[^()]+)\)\s*"
)
_SEPARATOR = re.compile(r"\|(?:\s*:?-+:?\s*\|)+")


@dataclass(frozen=True)
class EvalRow:
    task: str
    version: str | None
    filter: str | None  # "strict-match", "flexible-extract", …
    n_shot: int | None
    metric: str  # "exact_match"
    value: float | None
    stderr: float | None
    conc: int | None  # lm-eval num_concurrent for this table, when the log shows it
    line_number: int


@dataclass(frozen=True)
class EvalVerdict:
    passed: bool
    conc: int | None
    task: str
    metric: str  # "exact_match"
    filter: str | None  # "strict-match"
    value: float
    threshold: float
    source: str  # "default", "models.<prefix>", "min-score"
    line_number: int
    text: str


def _number(cell: str) -> float | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _cells(text: str) -> list[str]:
    inner = text.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [cell.strip() for cell in inner.split("|")]


def _header_columns(cells: list[str]) -> dict[str, int] | None:
    names = {name.lower(): i for i, name in reversed(list(enumerate(cells))) if name}
    first = cells[0].lower() if cells else ""
    if first not in ("tasks", "groups") or "value" not in names or "metric" not in names:
        return None
    return names


def _table_start(lines: list[LogLine], index: int) -> dict[str, int] | None:
    """Columns of the lm-eval table whose header is at ``index`` (header + separator line)."""
    if not lines[index].text.lstrip().startswith("|") or index + 1 >= len(lines):
        return None
    columns = _header_columns(_cells(lines[index].text))
    if columns is None or _SEPARATOR.fullmatch(lines[index + 1].text.strip()) is None:
        return None
    return columns


def _table_body(
    lines: list[LogLine], start: int, columns: dict[str, int], conc: int | None
) -> tuple[list[EvalRow], int]:
    """Rows of the table whose header is at ``start``, and the index just past its body."""
    rows: list[EvalRow] = []
    task: str | None = None
    version: str | None = None
    n_shot: int | None = None
    width = len(_cells(lines[start].text))
    index = start + 2
    while index < len(lines):
        line = lines[index]
        if not line.text.lstrip().startswith("|") or _table_start(lines, index) is not None:
            break  # the table ends (a new header starts the next one)
        index += 1
        cells = _cells(line.text)
        if len(cells) != width:
            continue
        cell = _column_reader(cells, columns)
        if name := cell("tasks") or cell("groups"):
            task = name.lstrip("- ").strip() or name
            version = cell("version") or None
            n_shot = None
        elif task is None:
            continue
        if shots := cell("n-shot"):
            n_shot = int(shots) if is_integer(shots) else None
        rows.append(
            EvalRow(
                task=task,
                version=version,
                filter=cell("filter") or None,
                n_shot=n_shot,
                metric=cell("metric"),
                value=_number(cell("value")),
                stderr=_number(cell("stderr")),
                conc=conc,
                line_number=line.number,
            )
        )
    return rows, index


def _column_reader(cells: list[str], columns: dict[str, int]) -> Callable[[str], str]:
    def cell(name: str) -> str:
        index = columns.get(name)
        return cells[index] if index is not None else ""

    return cell


def parse_eval_tables(log: str | list[LogLine]) -> tuple[EvalRow, ...]:
    """Every row of every lm-eval result table in the log, in log order (one forward pass)."""
    lines = log_lines(log) if isinstance(log, str) else log
    rows: list[EvalRow] = []
    conc: int | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if found := _NUM_CONCURRENT.findall(line.text):
            conc = int(found[-1])
        columns = _table_start(lines, index)
        if columns is None:
            index += 1
            continue
        body, index = _table_body(lines, index, columns, conc)
        rows.extend(body)
    return tuple(rows)


def parse_verdicts(log: str | list[LogLine]) -> tuple[EvalVerdict, ...]:
    """Every PASS/FAIL line of the score check, in log order."""
    lines = log_lines(log) if isinstance(log, str) else log
    verdicts: list[EvalVerdict] = []
    for line in lines:
        if "PASS: " not in line.text and "FAIL: " not in line.text:
            continue
        match = _VERDICT.fullmatch(line.text)
        if match is None:
            continue
        value = _number(match["value"])
        threshold = _number(match["threshold"])
        if value is None or threshold is None:
            continue
        metric, _, filter_name = match["metric"].partition(",")
        verdicts.append(
            EvalVerdict(
                passed=match["verdict"] == "PASS",
                conc=int(match["conc"]) if match["conc"] else None,
                task=match["task"],
                metric=metric,
                filter=filter_name or None,
                value=value,
                threshold=threshold,
                source=match["source"].strip(),
                line_number=line.number,
                text=line.text.strip(),
            )
        )
    return tuple(verdicts)
