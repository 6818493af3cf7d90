"""The comment's table of compared points (bot/present/points.py): what a benchmark author
reads first is the outcome, so long lists fold."""

from __future__ import annotations

from dataclasses import replace

from bot.align.result import AlignRun, KeyResult
from bot.present.points import (
    OTHER_FRAMEWORKS_IN_TABLE,
    ROWS_OPEN,
    ROWS_SHOWN,
    points_section,
    points_table,
)

SGLANG = "framework sglang is not rendered by vLLM recipes"


def _other(key: KeyResult, n: int, framework: str = "sglang") -> KeyResult:
    reason = f"framework {framework} is not rendered by vLLM recipes"
    affected = replace(key.key, key=f"k{n}-{framework}", framework=framework, out_of_scope=reason)
    return KeyResult(affected, (), problem=reason)


def test_many_keys_of_other_frameworks_fold_into_one_list(seed_run: AlignRun) -> None:
    """InferenceX #2323 (a harness change to every key) listed 77 SGLang, TensorRT-LLM and
    ATOM keys as rows of the table; past a few they are one folded list, counted by
    framework, each key still named."""
    key = seed_run.keys[0]
    few = [_other(key, n) for n in range(OTHER_FRAMEWORKS_IN_TABLE)]
    lines = points_section(replace(seed_run, keys=(key, *few)))
    assert sum(SGLANG in line and line.startswith("| `k") for line in lines) == len(few)
    many = [*few, _other(key, 7, "trt"), _other(key, 8, "sglang")]
    lines = points_section(replace(seed_run, keys=(key, *many)))
    assert not any(line.startswith("| `k") for line in lines)
    summary = next(line for line in lines if "of other frameworks" in line)
    assert "5 keys of other frameworks (sglang 4, trt 1): not rendered by vLLM recipes" in summary
    assert f"- {SGLANG}: `k0-sglang`, `k1-sglang`, `k2-sglang`, `k8-sglang`" in lines


def test_a_long_table_folds(seed_run: AlignRun) -> None:
    """#2323's comment opened with 118 rows for a PR that needed nothing, #1571's with 149
    keys: past a dozen rows the table is folded (each recipe's section below says what
    happened); the seed's two rows stay open."""
    (key,) = [k for k in seed_run.keys if k.points]
    assert points_section(replace(seed_run, keys=(key,)))[0].startswith("| Config key")
    copies = tuple(replace(key, key=replace(key.key, key=f"copy-{n}")) for n in range(ROWS_OPEN))
    lines = points_section(replace(seed_run, keys=copies))
    assert lines[0].startswith("<details><summary>Launch lines compared: 12 keys, ")
    assert lines[-1] == "</details>"
    assert sum(line.startswith("| `copy-") for line in lines) > ROWS_OPEN  # all still there


def test_keys_whose_launch_lines_did_not_change_are_named_not_rowed(seed_run: AlignRun) -> None:
    """A library change reaches every key that sources it (#1970: 37 vLLM keys, each a row
    saying "… changed and … sources it, but none of its launch lines did"); the comment's
    opening counts them, the table keeps the keys to look at, and the rest are named once."""
    (key,) = [k for k in seed_run.keys if k.points]
    why = "benchmarks/benchmark_lib.sh changed, but none of its launch lines did"
    same = [
        KeyResult(replace(key.key, key=f"same-{n}", unchanged=why), (), problem=why)
        for n in range(2)
    ]
    # as align() hands them over: the change that reached them says their launch lines held
    change = replace(seed_run.change, keys=(*seed_run.change.keys, *(k.key for k in same)))
    lines = points_section(replace(seed_run, keys=(key, *same), change=change))
    assert not any(line.startswith("| `same-") for line in lines)
    assert sum(line.startswith(f"| {'`' + key.key.key}") for line in lines) >= 1
    assert "<details><summary>2 keys whose launch lines did not change</summary>" in lines
    assert "`same-0`, `same-1`" in lines


def test_a_table_past_what_a_comment_can_hold_says_how_many_rows_it_leaves_out(
    seed_run: AlignRun,
) -> None:
    """#2263 (configs deprecated on 48 keys) made 216 rows, 49 KB of a comment GitHub cuts at
    64 KB, and the cut lost every recipe's section: past ROWS_SHOWN the rest are counted."""
    (key,) = [k for k in seed_run.keys if k.points]
    copies = tuple(replace(key, key=replace(key.key, key=f"copy-{n}")) for n in range(ROWS_SHOWN))
    lines = points_section(replace(seed_run, keys=copies))
    rows = [line for line in lines if line.startswith("| `copy-")]
    assert len(rows) == ROWS_SHOWN
    hidden = len(points_table(replace(seed_run, keys=copies))) - 2 - ROWS_SHOWN
    assert hidden > 0
    assert (
        f"| … | | | | {hidden} more rows not shown: `recipe-sync align` of this PR " in (lines[-3])
    )


def test_points_of_one_row_keep_every_tp_and_workload(seed_run: AlignRun) -> None:
    """One row holds the points of an arm, a profile and a status; their concurrencies are
    joined, but #2328's context row (TP 2 and TP 4) read "tp=4,…,conc=1/2/5/…/1/2/5" as if
    every point ran TP 4: points differing in more than concurrency keep their labels."""
    (key,) = [k for k in seed_run.keys if k.points]
    throughput = [p for p in key.points if p.arm == "throughput"]
    first, second = throughput[0], throughput[1]
    other_tp = [replace(p, point=replace(p.point, tp=2)) for p in (first, second)]
    offload = [replace(first, point=replace(first.point, conc=999, kv_offloading="dram"))]
    mixed = replace(key, points=(*throughput, *other_tp, *offload))
    (row,) = [r for r in points_table(replace(seed_run, keys=(mixed,))) if "| throughput |" in r]
    concs = "/".join(str(p.point.conc) for p in throughput)
    assert f"tp=4,ep=1,dp-attn=false,conc={concs},spec" in row
    assert f"; tp=2,ep=1,dp-attn=false,conc={first.point.conc}/{second.point.conc},spec" in row
    assert "conc=999,spec-decoding=mtp,scenario=agentic-coding,kv-offloading=dram" in row
    assert row.count("tp=") == 3
