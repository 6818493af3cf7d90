"""Shell string values that remember where their characters were written and what is unknown.

A :class:`Text` is a sequence of runs; each run carries the script line its characters were
written on (``None`` when they came from the input environment or were computed, so the use
site is the best line to point at) and the :class:`Unresolved` items that make it uncertain.
Unknown values are spelled as named placeholders, ``<NAME:opaque:reason>``, and always carry
the item that explains them, so a placeholder can never pass for a real value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.placeholders import PLACEHOLDER_RE, placeholder
from bot.shell.result import SourceSpan, Unresolved

EMPTY_TAINTS: frozenset[Unresolved] = frozenset()


@dataclass(frozen=True, slots=True)
class Run:
    s: str
    origin: SourceSpan | None = None
    taints: frozenset[Unresolved] = EMPTY_TAINTS


class Text:
    """An immutable string with per-run provenance and uncertainty."""

    __slots__ = ("runs", "s")

    runs: tuple[Run, ...]
    s: str

    def __init__(self, runs: Iterable[Run] = ()) -> None:
        merged: list[Run] = []
        for run in runs:
            if not run.s and not run.taints:
                continue
            if merged and merged[-1].origin == run.origin and merged[-1].taints == run.taints:
                merged[-1] = Run(merged[-1].s + run.s, run.origin, run.taints)
            else:
                merged.append(run)
        self.runs = tuple(merged)
        self.s = merged[0].s if len(merged) == 1 else "".join([run.s for run in merged])

    @staticmethod
    def lit(
        s: str, origin: SourceSpan | None = None, taints: frozenset[Unresolved] = EMPTY_TAINTS
    ) -> Text:
        # what ``Text((Run(s, origin, taints),))`` builds, without the merge loop (one run
        # merges with nothing; an empty untainted one is dropped): the commonest Text
        text = Text.__new__(Text)
        text.runs = (Run(s, origin, taints),) if s or taints else ()
        text.s = s
        return text

    @staticmethod
    def join(parts: Iterable[Text], sep: str = "") -> Text:
        runs: list[Run] = []
        for index, part in enumerate(parts):
            if index and sep:
                runs.append(Run(sep))
            runs.extend(part.runs)
        return Text(runs)

    def __add__(self, other: Text) -> Text:
        return Text(self.runs + other.runs)

    def __len__(self) -> int:
        return len(self.s)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and self.runs == other.runs

    def __hash__(self) -> int:
        return hash(self.runs)

    def __repr__(self) -> str:
        return f"Text({self.s!r}{', tainted' if self.taints else ''})"

    @property
    def taints(self) -> frozenset[Unresolved]:
        if len(self.runs) == 1:
            return self.runs[0].taints
        out: set[Unresolved] = set()
        for run in self.runs:
            out |= run.taints
        return frozenset(out)

    @property
    def known(self) -> bool:
        return not any(run.taints for run in self.runs)

    def origin(self) -> SourceSpan | None:
        """Where the first written character came from (None: input env or computed)."""
        for run in self.runs:
            if run.s:
                return run.origin
        return None

    def slice(self, start: int, end: int | None = None) -> Text:
        """Characters [start, end), keeping provenance; taints of a run touched are kept."""
        stop = len(self.s) if end is None else end
        out: list[Run] = []
        pos = 0
        for run in self.runs:
            lo, hi = pos, pos + len(run.s)
            pos = hi
            if not run.s:
                if start <= lo <= stop and run.taints:
                    out.append(run)
                continue
            a, b = max(start, lo), min(stop, hi)
            if a < b:
                out.append(Run(run.s[a - lo : b - lo], run.origin, run.taints))
        return Text(out)

    def stamped(self, origin: SourceSpan) -> Text:
        """Give characters without a line the line ``origin`` (they were placed there)."""
        return Text(Run(r.s, r.origin or origin, r.taints) for r in self.runs)

    def computed(self, extra: frozenset[Unresolved] = EMPTY_TAINTS) -> Text:
        """The same characters as one computed run (no line), keeping every taint."""
        return Text.lit(self.s, None, self.taints | extra)

    def with_taints(self, taints: frozenset[Unresolved]) -> Text:
        if not taints:
            return self
        if not self.runs:
            return Text.lit("", None, taints)
        return Text(Run(r.s, r.origin, r.taints | taints) for r in self.runs)


EMPTY = Text()

# Human explanations of the reason slugs used by the evaluator and the benchmark model.
REASONS: dict[str, str] = {
    "slurm-job-id": "the launcher derives it from the Slurm job id, known only once the job runs",
    "runner-node": "depends on the runner node that picks the job, known once the job runs",
    "launcher-staged-model": "the launcher picks a pre-staged model directory at run time",
    "launcher-unlisted-model": (
        "rules/hardware.yaml (launchers: model_paths) lists no staged model directory for this "
        "model prefix and precision: the launcher exits for a model it does not stage, or the "
        "rule is out of date"
    ),
    "working-directory": "the job's working directory is chosen by the launcher at run time",
    "process-id": "a process id exists only at run time",
    "command-output": "the output of a command that is not evaluated statically",
    "host-probe": "the value is probed on the host at run time",
    "home": "the runner user's home directory is not known statically",
    "recipe-fingerprint": "computed by process_changelog.py from the whole matrix row",
    "runners-yaml": "needs configs/runners.yaml hardware facts that are missing",
    "undecidable-branch": "it differs between branches of a condition that cannot be decided",
    "library-side-effect": "a library helper that is not evaluated may assign it",
    "derived": "computed from a value that is not statically known",
    "unknown-input": "the value was given as unknown",
    "secret": "a repository secret, never known statically",
    "workflow-input": "a workflow input or PR label chosen when the sweep is dispatched",
}


def opaque(name: str, reason: str, item: Unresolved) -> Text:
    """A named placeholder standing for an unknown value, tainted with its explanation."""
    return Text.lit(placeholder(name, reason), None, frozenset({item}))


def taints_in_input(value: str, source: str) -> frozenset[Unresolved]:
    """Explanations for the placeholders a caller wrote into an input value."""
    found = {
        Unresolved(f"${match.group(1)}", REASONS.get(match.group(2), match.group(2)), source, None)
        for match in PLACEHOLDER_RE.finditer(value)
    }
    return frozenset(found)
