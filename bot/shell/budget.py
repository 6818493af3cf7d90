"""Step and size budget: pathological scripts stop with a typed error, never hang or blow up."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.shell.errors import BudgetExceeded


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
class Budget:
    limits: Limits = field(default_factory=Limits)
    steps: int = 0
    depth: int = 0

    def step(self, file: str, line: int | None, amount: int = 1) -> None:
        self.steps += amount
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
