"""Whole-process timing for the benchmarks: wall and CPU seconds and peak memory of one run,
from the kernel's accounting of the finished child (``wait4``), as ``/usr/bin/time -v``."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # user + system seconds, the process and the children it waited for
    peak_mib: float  # the largest resident set of the process or one of its children
    status: int


def timed(command: Sequence[str], cwd: Path | None = None) -> Run:
    """Run ``command`` (its output discarded) and account for it. Python may write its
    bytecode caches, as an installed package has them (an environment that forbids it,
    ``PYTHONDONTWRITEBYTECODE``, would add compiling every module to every start)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    child = subprocess.Popen(
        list(command), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode)


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
