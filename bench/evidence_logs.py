"""How fast is a job log analysed? ``python -m bench.evidence_logs [--mib N]``

Builds a large job log from the seed eval log (its vLLM start-up noise repeated, as a long
server log streamed into the job log would be) and times the whole per-job analysis the
collector runs (clean lines, launch lines, launcher line, readiness, lm-eval tables, PASS/FAIL
lines) against a reference measured in the same run: splitting the text into lines and
searching each for "vllm serve", the least any line-based parser must do. Prints MiB/s, the
ratio to the reference, and the peak memory of the analysis relative to the log size.
"""

from __future__ import annotations

import argparse
import re
import time
import tracemalloc
from collections.abc import Callable

from bot.evidence.fixtures import SEED_DEFAULTS, SEED_TEMPLATE_DIR, substitute
from bot.evidence.launch import find_launch_lines, launch_context, preferred_launch, server_ready
from bot.evidence.lmeval import parse_eval_tables, parse_verdicts
from bot.evidence.logtext import log_lines

EVAL_LOG = SEED_TEMPLATE_DIR / "logs" / "97311840107.txt"


def build_log(mebibytes: float) -> str:
    text = substitute(EVAL_LOG.read_text(), SEED_DEFAULTS)
    lines = text.split("\n")
    noise = [line for line in lines if "pid=" in line or "it/s]" in line]
    body: list[str] = []
    size = 0
    while size < mebibytes * 2**20:
        body.extend(noise)
        size += sum(len(line) + 1 for line in noise)
    # the launch line and results stay where they are, inside the noise
    middle = len(lines) // 2
    return "\n".join(lines[:middle] + body + lines[middle:])


def analyse(log: str) -> int:
    lines = log_lines(log)
    launch = preferred_launch(find_launch_lines(lines))
    launch_context(lines)
    server_ready(lines)
    rows = parse_eval_tables(lines)
    verdicts = parse_verdicts(lines)
    assert launch is not None and len(rows) == 2 and len(verdicts) == 2
    return len(lines)


_NEEDLE = re.compile("vllm serve")


def reference(log: str) -> int:
    return sum(1 for line in log.split("\n") if _NEEDLE.search(line))


def best_of(runs: int, function: Callable[[str], int], log: str) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function(log)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--mib", type=float, default=32.0, help="log size to build (MiB)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    log = build_log(args.mib)
    size = len(log.encode("utf-8")) / 2**20
    lines = log.count("\n") + 1
    ref = best_of(args.runs, reference, log)
    full = best_of(args.runs, analyse, log)
    tracemalloc.start()
    analyse(log)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"log: {size:.1f} MiB, {lines:,} lines")
    print(f"reference (split + search):  {ref:7.3f} s  {size / ref:7.1f} MiB/s")
    print(f"full job analysis:           {full:7.3f} s  {size / full:7.1f} MiB/s")
    print(f"ratio full / reference:      {full / ref:7.2f}x")
    print(
        f"peak memory of the analysis: {peak / 2**20:7.1f} MiB ({peak / 2**20 / size:.2f}x the log)"
    )


if __name__ == "__main__":
    main()
