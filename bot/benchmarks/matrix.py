"""Search-space expansion into matrix rows, and eval selection (docs/spec/benchmark-extraction.md
§1.2)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

from bot.benchmarks.configs import MasterEntry, SearchEntry
from bot.benchmarks.model import Point

MIN_EVAL_CONC = 16
SEQ_LEN_NAMES = {(1024, 1024): "1k1k", (8192, 1024): "8k1k"}
EVAL_SEQ_LEN = (8192, 1024)
AGENTIC_DURATION = 3600


@dataclass(frozen=True)
class Row:
    """One matrix row: a point plus the derived fields the job environment needs."""

    point: Point
    exp_name: str
    max_model_len: int  # isl + osl + 256; 0 for agentic rows
    dram_utilization: float | None
    kv_offload_backend: dict[str, Any] | None  # the backend object, for its metadata JSON
    eval: bool = False


def seq_len_name(isl: int, osl: int) -> str:
    return SEQ_LEN_NAMES.get((isl, osl), f"{isl}_{osl}")


def agentic_exp_name(prefix: str, point: Point) -> str:
    kv = (
        "kvnone"
        if point.kv_offloading in (None, "none")
        else (f"kv{point.kv_offloading}-{point.kv_offload_backend}")
    )
    name = f"{prefix}_tp{point.tp}_conc{point.conc}_{kv}"
    if point.spec_decoding != "none":
        name += f"_spec-{point.spec_decoding}"
    return name


Offload = tuple[str | None, str | None]  # (kv_offloading, kv_offload_backend)


def _point(
    bmk: SearchEntry, conc: int, scenario: str, isl: int | None, osl: int | None, offload: Offload
) -> Point:
    """A search-space entry's point at one concurrency; the scenario gives the rest."""
    assert bmk.tp is not None
    return Point(
        tp=bmk.tp,
        ep=bmk.ep if bmk.ep is not None else 1,
        dp_attn=bool(bmk.dp_attn),
        conc=conc,
        spec_decoding=bmk.spec_decoding,
        scenario=scenario,
        isl=isl,
        osl=osl,
        kv_offloading=offload[0],
        kv_offload_backend=offload[1],
        pp=bmk.pp,
        dcp=bmk.dcp_size,
        pcp=bmk.pcp_size,
    )


def expand(entry: MasterEntry) -> list[Row]:
    """Every single-node row of a master entry, in generator order; eval rows marked."""
    if entry.multinode:
        return []
    rows: list[Row] = []
    for scenario in entry.scenarios.fixed_seq_len:
        for bmk in scenario.search_space:
            assert bmk.tp is not None
            for conc in bmk.concurrencies():
                point = _point(bmk, conc, "fixed-seq-len", scenario.isl, scenario.osl, (None, None))
                rows.append(
                    Row(
                        point,
                        f"{entry.model_prefix}_{seq_len_name(scenario.isl, scenario.osl)}",
                        scenario.isl + scenario.osl + 256,
                        None,
                        None,
                    )
                )
    for agentic in entry.scenarios.agentic_coding:
        for bmk in agentic.search_space:
            assert bmk.tp is not None
            backend = bmk.kv_offload_backend
            for conc in bmk.concurrencies():
                offload = (
                    bmk.kv_offloading or "none",
                    backend.name if backend is not None else None,
                )
                point = _point(bmk, conc, "agentic-coding", None, None, offload)
                rows.append(
                    Row(
                        point,
                        agentic_exp_name(entry.model_prefix, point),
                        0,
                        agentic.dram_utilization,
                        backend.model_dump(exclude_none=True) if backend is not None else None,
                    )
                )
    return mark_evals(rows)


def mark_evals(rows: list[Row]) -> list[Row]:
    """8k1k rows with conc ≥ 16 at the group's highest or median distinct conc; agentic: the
    highest-conc rows. Groups are per (spec-decoding, dp-attn) within one config key."""
    selected: set[int] = set()
    groups: dict[tuple[str, bool], list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        point = row.point
        if point.scenario != "fixed-seq-len" or (point.isl, point.osl) != EVAL_SEQ_LEN:
            continue
        if point.conc < MIN_EVAL_CONC:
            continue
        groups[(point.spec_decoding, point.dp_attn)].append(index)
    for members in groups.values():
        concs = sorted({rows[i].point.conc for i in members})
        targets = {concs[-1], concs[len(concs) // 2]}
        selected.update(i for i in members if rows[i].point.conc in targets)
    agentic = [i for i, row in enumerate(rows) if row.point.scenario == "agentic-coding"]
    if agentic:
        top = max(rows[i].point.conc for i in agentic)
        selected.update(i for i in agentic if rows[i].point.conc == top)
    return [replace(row, eval=index in selected) for index, row in enumerate(rows)]
