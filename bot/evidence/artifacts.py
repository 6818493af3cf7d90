"""Artifact formats of benchmark jobs (docs/spec/benchmark-extraction.md §3.2–3.3), parsed as data.

The collector reads job logs; these parsers serve a caller that downloaded artifacts:

* command files (``vllm_command.txt`` / ``server_command.txt`` in ``agentic_<RF>``, one
  ``printf '%q '`` line per command; ``lmcache_command.txt`` has one per shard);
* lm-eval's ``results_<timestamp>.json`` (in ``eval_<EXP_NAME>_<RF>``): keys
  ``results.<task>["<metric>,<filter>"]`` and ``["<metric>_stderr,<filter>"]``, ``n-shot``,
  ``versions``, ``lm_eval_version`` (its presence marks an lm-eval file);
* ``agg_eval_all.json`` (``eval_results_all``, written by collect-evals): one row per eval job.

Untrusted input: malformed content yields no rows, never an exception.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from bot.evidence.bashwords import QuotingError, split_words
from bot.evidence.lmeval import EvalRow

_NUM_CONCURRENT = re.compile(r"num_concurrent=(\d+)")


def parse_command_file(text: str) -> tuple[tuple[str, ...], ...]:
    """Each non-empty line of a ``printf '%q '`` command file as an argv."""
    commands: list[tuple[str, ...]] = []
    for line in text.split("\n"):
        try:
            words = split_words(line.rstrip("\r"))
        except QuotingError:
            continue
        if words:
            commands.append(words)
    return tuple(commands)


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # malformed, or hostile nesting
        return None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _fraction(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_lm_eval_results(text: str) -> tuple[EvalRow, ...]:
    """Rows of an lm-eval ``results_*.json`` (empty if it is not one)."""
    data = _load(text)
    if not isinstance(data, dict) or "lm_eval_version" not in data:
        return ()
    results, shots, versions, config = (
        _object(data.get(key)) for key in ("results", "n-shot", "versions", "config")
    )
    model_args = config.get("model_args")
    conc_match = _NUM_CONCURRENT.search(model_args) if isinstance(model_args, str) else None
    conc = int(conc_match.group(1)) if conc_match else None
    rows: list[EvalRow] = []
    for task, metrics in results.items():
        if not isinstance(metrics, dict):
            continue
        version = versions.get(task)
        for key, value in metrics.items():
            metric, comma, filter_name = str(key).partition(",")
            if not comma or metric.endswith("_stderr") or _fraction(value) is None:
                continue
            rows.append(
                EvalRow(
                    task=str(task),
                    version=None if version is None else str(version),
                    filter=filter_name or None,
                    n_shot=_int(shots.get(task)),
                    metric=metric,
                    value=_fraction(value),
                    stderr=_fraction(metrics.get(f"{metric}_stderr,{filter_name}")),
                    conc=conc,
                    line_number=0,
                )
            )
    return tuple(rows)


@dataclass(frozen=True)
class AggEvalRow:
    """One row of ``agg_eval_all.json``: an eval job's identity and its gsm8k-style scores."""

    model_prefix: str
    hw: str  # runner label
    framework: str
    precision: str
    spec_decoding: str | None
    tp: int | None
    ep: int | None
    conc: int | None
    dp_attention: bool | None
    is_multinode: bool
    task: str
    em_strict: float | None
    em_strict_se: float | None
    em_flexible: float | None
    em_flexible_se: float | None
    n_eff: int | None


def parse_agg_eval(text: str) -> tuple[AggEvalRow, ...]:
    """Rows of collect-evals' ``agg_eval_all.json`` (rows missing identity fields skipped)."""
    data = _load(text)
    if not isinstance(data, list):
        return ()
    rows: list[AggEvalRow] = []
    for item in data:
        if not isinstance(item, dict):
            continue
        names = [item.get(key) for key in ("model_prefix", "hw", "framework", "precision", "task")]
        if not all(isinstance(name, str) for name in names):
            continue
        spec = item.get("spec_decoding")
        dp = item.get("dp_attention")
        rows.append(
            AggEvalRow(
                model_prefix=str(names[0]),
                hw=str(names[1]),
                framework=str(names[2]),
                precision=str(names[3]),
                spec_decoding=spec if isinstance(spec, str) else None,
                tp=_int(item.get("tp")),
                ep=_int(item.get("ep")),
                conc=_int(item.get("conc")),
                dp_attention=dp if isinstance(dp, bool) else None,
                is_multinode=item.get("is_multinode") is True,
                task=str(names[4]),
                em_strict=_fraction(item.get("em_strict")),
                em_strict_se=_fraction(item.get("em_strict_se")),
                em_flexible=_fraction(item.get("em_flexible")),
                em_flexible_se=_fraction(item.get("em_flexible_se")),
                n_eff=_int(item.get("n_eff")),
            )
        )
    return tuple(rows)
