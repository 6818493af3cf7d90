"""Benchmark: ``recipe-sync score`` (or ``backtest``) of a window of history, whole processes.

    python -m bench.replay_window --bench-repo DIR --recipes DIR --since DATE --until DATE
        [--what score|backtest] [--jobs 2] [--runs N] [--baseline CHECKOUT]

Runs ``python -m bot score --since … --until … --jobs J --format json --out TMP`` (no replay
cache) as a new process each time; wall and CPU seconds and peak memory (the largest process,
a worker or the parent) from the kernel's accounting. With ``--baseline CHECKOUT`` (another
checkout of recipe-sync, e.g. ``git worktree add /tmp/base main``) the same command runs there
too, alternating run for run, and the ratio is taken pair by pair (this checkout / baseline),
so a shared machine whose load drifts moves both alike; the two outputs are compared as JSON
(timing fields left out) and the bench says whether they are equal.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.procs import Run, median, timed

ROOT = Path(__file__).resolve().parents[1]
TIMING = frozenset({"seconds"})  # per-row replay time: the only field that may differ


def _without_timing(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _without_timing(v) for k, v in data.items() if k not in TIMING}
    if isinstance(data, list):
        return [_without_timing(v) for v in data]
    return data


def _row(label: str, runs: list[Run]) -> str:
    return (
        f"{label:<10} wall {median([r.wall for r in runs]):7.1f} s "
        f"(min {min(r.wall for r in runs):.1f}, max {max(r.wall for r in runs):.1f}), "
        f"CPU {median([r.cpu for r in runs]):7.1f} s, peak {max(r.peak_mib for r in runs):.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bench-repo", type=Path, required=True)
    parser.add_argument("--recipes", type=Path, required=True)
    parser.add_argument("--since", required=True)
    parser.add_argument("--until", required=True)
    parser.add_argument("--what", choices=("score", "backtest"), default="score")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="another checkout, run alongside")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        outs = {"this": Path(tmp) / "this.json", "baseline": Path(tmp) / "baseline.json"}

        def command(out: Path) -> list[str]:
            return [
                sys.executable, "-m", "bot", args.what, "--bench-repo", str(args.bench_repo),
                "--recipes", str(args.recipes), "--since", args.since, "--until", args.until,
                "--jobs", str(args.jobs), "--format", "json", "--out", str(out),
            ]  # fmt: skip

        mine: list[Run] = []
        theirs: list[Run] = []
        for _ in range(args.runs):
            mine.append(timed(command(outs["this"]), ROOT))
            if args.baseline is not None:
                theirs.append(timed(command(outs["baseline"]), args.baseline))
        print(f"{args.what} {args.since} … {args.until}, --jobs {args.jobs}, {args.runs} run(s)")
        print(_row("this", mine))
        if theirs:
            print(_row("baseline", theirs))
            pairs = [a.wall / b.wall for a, b in zip(mine, theirs, strict=True)]
            print(f"wall ratio (this / baseline), pair by pair: median {median(pairs):.3f}")
            same = _without_timing(json.loads(outs["this"].read_text())) == _without_timing(
                json.loads(outs["baseline"].read_text())
            )
            print(f"outputs equal as JSON (timing left out): {'yes' if same else 'NO'}")
            if not same:  # kept for reading: a replay over its time budget on a loaded machine?
                for name, path in outs.items():
                    kept = Path(tempfile.gettempdir()) / f"replay-window-{name}.json"
                    kept.write_bytes(path.read_bytes())
                    print(f"  {name}: {kept}")


if __name__ == "__main__":
    main()
