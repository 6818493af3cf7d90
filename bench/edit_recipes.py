"""Benchmark: the byte-preserving editor against a plain ruamel.yaml round trip.

    python -m bench.edit_recipes [--models DIR] [--runs N]

On every recipe of the corpus, apply the seed-shaped alignment edits (a verified hardware
entry, a new strategy-scoped `--max-num-seqs` list, a pinned AMD image where there is one)
with ``apply_edits``, and — as the reference, in the same run — the naive way: ruamel.yaml
round-trip load, change the data, dump. Reported per file (median / p95 / max over files,
best of N runs each): wall time, and how many lines each approach changed. The editor's
changed lines are exactly its edits; the dump's count shows the reflow it would have sent
reviewers.
"""

from __future__ import annotations

import argparse
import difflib
import io
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ruamel.yaml import YAML

from bot.recipes.edit import Edit, EditError, EnsurePath, InsertKey, SetScalar, apply_edits
from bot.shared_data import corpus_dir

T = TypeVar("T")
DEFAULT_MODELS = corpus_dir() / "models"
NEW_IMAGE = "vllm/vllm-openai-rocm:nightly-eed1f3d0c6043bd494424a22443ee198dd56f657"


def _edits_for(data: Any) -> list[Edit]:
    edits: list[Edit] = []
    meta = data.get("meta") if isinstance(data, dict) else None
    hardware = meta.get("hardware") if isinstance(meta, dict) else None
    if isinstance(hardware, dict) and "bench_gpu" not in hardware:
        edits.append(InsertKey("meta.hardware", "bench_gpu", "verified"))
    image = (data.get("model") or {}).get("docker_image")
    if isinstance(image, dict) and isinstance(image.get("amd"), str):
        edits.append(SetScalar("model.docker_image.amd", NEW_IMAGE))
    edits.append(
        EnsurePath(
            "strategy_overrides.single_node_tp.hardware_overrides.bench_gpu.extra_args",
            ["--max-num-seqs", "128"],
        )
    )
    return edits


def _naive(text: str) -> str:
    """The reference: ruamel round trip of the same change (what the editor must not do)."""
    yaml = YAML(typ="rt")
    data = yaml.load(text)
    meta = data.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get("hardware"), dict):
        meta["hardware"].setdefault("bench_gpu", "verified")
    image = (data.get("model") or {}).get("docker_image")
    if isinstance(image, dict) and isinstance(image.get("amd"), str):
        image["amd"] = NEW_IMAGE
    node = data
    for key in ("strategy_overrides", "single_node_tp", "hardware_overrides", "bench_gpu"):
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node.setdefault("extra_args", ["--max-num-seqs", "128"])
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _changed_lines(old: str, new: str) -> int:
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def _best_of(runs: int, work: Callable[[], T]) -> tuple[float, T]:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def _summary(values: list[float], unit: str, scale: float = 1.0) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"median {statistics.median(ordered) * scale:8.2f} {unit}   p95 {p95 * scale:8.2f} {unit}"
        f"   max {ordered[-1] * scale:8.2f} {unit}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=DEFAULT_MODELS)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    files = sorted(args.models.rglob("*.yaml"))
    if not files:
        print(f"no recipes under {args.models}", file=sys.stderr)
        return 2
    ours_s: list[float] = []
    naive_s: list[float] = []
    ours_lines: list[float] = []
    naive_lines: list[float] = []
    refused: list[str] = []
    loader = YAML(typ="safe", pure=True)
    for path in files:
        text = path.read_text(encoding="utf-8")
        edits = _edits_for(loader.load(text))
        try:
            seconds, result = _best_of(args.runs, partial(apply_edits, text, edits, file=path.name))
        except EditError as err:
            refused.append(str(err))
            continue
        naive_seconds, naive_text = _best_of(args.runs, partial(_naive, text))
        ours_s.append(seconds)
        naive_s.append(naive_seconds)
        ours_lines.append(sum(max(len(r.old_lines), len(r.new_lines)) for r in result.changed))
        naive_lines.append(_changed_lines(text, naive_text))
    count = len(ours_s)
    print(f"recipes edited: {count} of {len(files)} (refused: {len(refused)})")
    for reason in refused[:5]:
        print(f"  refused: {reason}")
    print(f"apply_edits      {_summary(ours_s, 'ms', 1000)}   total {sum(ours_s):.2f} s")
    print(f"ruamel rt dump   {_summary(naive_s, 'ms', 1000)}   total {sum(naive_s):.2f} s")
    print(f"time ratio (apply_edits / round-trip dump), total: {sum(ours_s) / sum(naive_s):.2f}")
    print(f"lines changed, apply_edits   : {_summary(ours_lines, 'lines')}")
    print(f"lines changed, rt dump       : {_summary(naive_lines, 'lines')}")
    reflowed = sum(1 for ours, naive in zip(ours_lines, naive_lines, strict=True) if naive > ours)
    print(f"files where the round-trip dump changes lines beyond the edit: {reflowed} of {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
