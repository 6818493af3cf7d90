"""Step and size budget: pathological scripts stop with a typed error, never hang or blow up."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from bot.shell.errors import BudgetExceeded, JobTooLarge


@dataclass(frozen=True)
class Limits:
    """Ceilings far above what a real benchmark script needs (a few thousand steps)."""

    max_steps: int = 400_000
    max_string: int = 1_000_000  # characters in one value
    max_array: int = 50_000  # elements in one array / fields of one word
    max_loop_iterations: int = 50_000  # iterations of one loop
    max_depth: int = 60  # nesting of calls, substitutions, sourced files, compound commands
    max_file_bytes: int = 1_000_000  # one script or library


@dataclass
class JobBudget:
    """Steps and wall time shared by every evaluation of one job (all points of all keys):
    a per-script budget alone multiplies with the number of points."""

    max_steps: int
    seconds: float
    steps: int = 0
    deadline: float = 0.0
    _next_clock_check: int = 0

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def charge(self, amount: int) -> None:
        self.steps += amount
        if self.steps > self.max_steps:
            raise JobTooLarge(
                f"too large to analyse: more than {self.max_steps:,} evaluation steps "
                "across all points of the change"
            )
        if self.steps >= self._next_clock_check:
            self._next_clock_check = self.steps + 2048
            if time.monotonic() > self.deadline:
                raise JobTooLarge(
                    f"too large to analyse: evaluating every point took longer than "
                    f"{self.seconds:.0f} s"
                )


_JOB: ContextVar[JobBudget | None] = ContextVar("recipe_sync_job_budget", default=None)


@contextmanager
def job_budget(max_steps: int, seconds: float) -> Iterator[JobBudget]:
    """Every :class:`Budget` created inside (this thread/context) also charges one
    :class:`JobBudget`; nested calls keep the outer one."""
    current = _JOB.get()
    if current is not None:
        yield current
        return
    job = JobBudget(max_steps, seconds)
    token = _JOB.set(job)
    try:
        yield job
    finally:
        _JOB.reset(token)


@dataclass
class Budget:
    limits: Limits = field(default_factory=Limits)
    steps: int = 0
    depth: int = 0
    job: JobBudget | None = field(default_factory=_JOB.get)

    def step(self, file: str, line: int | None, amount: int = 1) -> None:
        self.steps += amount
        if self.job is not None:
            self.job.charge(amount)
        if self.steps > self.limits.max_steps:
            raise BudgetExceeded(
                file,
                line,
                f"step budget of {self.limits.max_steps} exhausted (script too big, "
                "or a loop/recursion that does not terminate)",
            )

    def enter(self, file: str, line: int | None) -> None:
        self.depth += 1
        if self.depth > self.limits.max_depth:
            raise BudgetExceeded(
                file,
                line,
                f"nesting deeper than {self.limits.max_depth} (recursion or nesting "
                "of functions, substitutions, sourced files)",
            )

    def leave(self) -> None:
        self.depth -= 1

    def check_string(self, size: int, file: str, line: int | None) -> None:
        if size > self.limits.max_string:
            raise BudgetExceeded(
                file, line, f"a value grew beyond {self.limits.max_string} characters"
            )

    def check_array(self, size: int, file: str, line: int | None) -> None:
        if size > self.limits.max_array:
            raise BudgetExceeded(file, line, f"more than {self.limits.max_array} words or elements")

    def check_iterations(self, count: int, file: str, line: int | None) -> None:
        if count > self.limits.max_loop_iterations:
            raise BudgetExceeded(
                file, line, f"a loop ran more than {self.limits.max_loop_iterations} iterations"
            )


@dataclass
class _Meter(JobBudget):
    """Counts the steps of the evaluations inside :func:`metered` and passes them on to the
    job budget around it (if any), which still stops a job that grows too large."""

    outer: JobBudget | None = None

    def charge(self, amount: int) -> None:
        self.steps += amount
        if self.outer is not None:
            self.outer.charge(amount)


@contextmanager
def metered() -> Iterator[JobBudget]:
    """The steps charged inside, counted (``.steps``) whatever job budget is around."""
    meter = _Meter(max_steps=0, seconds=0.0, outer=_JOB.get())
    token = _JOB.set(meter)
    try:
        yield meter
    finally:
        _JOB.reset(token)


def charge_job(steps: int) -> None:
    """Charge the current job budget for work reused instead of done again (a cached
    evaluation costs the job what it cost when it ran, so limits do not depend on caching)."""
    job = _JOB.get()
    if job is not None:
        job.charge(steps)
