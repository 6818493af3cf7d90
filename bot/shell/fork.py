"""Conditions known only at run time, inside one evaluation: every branch runs on a copy of
the state and what they leave behind is joined (values that differ become named unknowns),
or, in path-sensitive mode, a branch is taken as the plan says (:mod:`bot.shell.path_sensitive` runs
the script again for the others). Subshells start from a copy and leave nothing behind."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from bot.shell.host import Host
from bot.shell.result import SourceSpan, Unresolved
from bot.shell.signals import ExitSignal, LaunchSignal, LoopSignal, ReturnSignal
from bot.shell.state import Capture, FileSystem, State, changed_names, merge
from bot.shell.text import (
    Text,
    opaque,
)


@dataclass
class _Outcome:
    """What one explored branch of an undecidable condition left behind."""

    st: State
    signal: BaseException | None  # exit / return / break / launch; None: it fell through
    capture: Capture | None
    control: dict[Unresolved, None]  # control items it added
    assumptions: dict[tuple[str, str, str], Unresolved]  # assumptions it added
    landed: list[tuple[list[State], list[State]]]  # (where, states) of returns/breaks it left


@dataclass(frozen=True)
class Choice:
    """A condition known only at run time whose branches lead to different places."""

    span: SourceSpan
    why: str  # "the condition `[[ -d "$dir" ]]` (x.sh:4)"
    labels: tuple[str, ...]  # how each branch reads: "holds", "does not hold"
    taken: int
    decides: str  # what the branches differ in: "$RAIL, an exit"

    def condition(self) -> str:
        """``the condition `[[ … ]]` (x.sh:4) holds`` (what it reads is said elsewhere)."""
        head = self.why.split(", which ", 1)[0]
        return f"{head} {self.labels[self.taken]}"


def _decides(outcomes: list[_Outcome], base: State) -> str:
    """What the branches of a decision differ in, for "assumed irrelevant: decides only …"."""
    parts: list[str] = []
    staying = [
        o.st for o in outcomes if not isinstance(o.signal, (ExitSignal, LaunchSignal))
    ]  # the states the script goes on with, here or where a return/break lands
    parts += [f"${name}" for name in changed_names([base, *staying])]
    kinds = {
        ExitSignal: "whether the script exits",
        ReturnSignal: "whether the function returns early",
        LoopSignal: "when the loop ends",
        LaunchSignal: "where the launch is reached",
    }
    for kind, text in kinds.items():
        if any(isinstance(o.signal, kind) for o in outcomes) and text not in parts:
            parts.append(text)
    files = {
        key
        for o in outcomes
        for key in o.st.fs.files
        if o.signal is None and key not in base.fs.files
    }
    parts += sorted(f"the contents of {key}" for key in files)
    return ", ".join(dict.fromkeys(parts)) or "nothing visible to the launch"


class Explorer:
    """Undecidable conditions of one evaluation: branches forked and joined, or decided."""

    def __init__(self, ev: Host, plan: Sequence[int] | None) -> None:
        self.ev = ev
        # path-sensitive mode (a plan, possibly empty): undecidable conditions whose branches
        # lead to different places are decisions, taken as the plan says (then branch 0)
        self.path_mode = plan is not None
        self.plan = tuple(plan or ())
        self.trail: list[Choice] = []
        self.exploring = 0
        # only decisions at these conditions (file, line) split the path; others are joined
        self.split_at: frozenset[tuple[str, int]] = frozenset()
        # conditions joined with differences: (file, line) → (why, what the branches decide)
        self.joins: dict[tuple[str, int], tuple[str, str]] = {}
        # states of branches that left early, joined where they land: the end of the
        # function (`return`) or of the loop (`break`); a subshell or script starts afresh
        self.returns: list[list[State]] = []
        self.breaks: list[list[State]] = []

    def in_subshell(self, run: Callable[[], None], out: Capture | None = None) -> int | None:
        child = self.ev.st.clone()
        if out is not None:
            child.out = out
        return self.in_process(child, run)

    def in_process(
        self, child: State, run: Callable[[], None], zero: str | None = None
    ) -> int | None:
        """Run ``run`` as a new process on ``child`` (a subshell, a pipeline stage, a child
        script): nothing it does reaches the caller's state but its exit status."""
        parent = self.ev.st
        saved_zero = self.ev.zero
        if zero is not None:
            self.ev.zero = zero
        self.ev.st = child
        try:
            try:
                with self.barrier():
                    run()
                status = self.ev.st.status
            except ExitSignal as signal:
                status = signal.code
            except (ReturnSignal, LoopSignal):
                status = self.ev.st.status
        finally:
            self.ev.st = parent
            self.ev.zero = saved_zero
        return status

    def fork(
        self,
        branches: list[Callable[[], None]],
        why: str,
        span: SourceSpan,
        labels: Sequence[str] = (),
    ) -> None:
        """Run every branch on a copy of the state, then join what they leave behind.

        Branches that leave the same state (or only exit) are merged here. Otherwise, in
        path-sensitive mode, this is a decision: one branch is taken (the plan says which;
        :func:`bot.shell.path_sensitive.evaluate_paths` runs the script again for the
        others); outside it, values that differ become named unknowns.
        """
        outcomes = self._explore(branches, span)
        if self._diverge(outcomes):
            if self.path_mode and not self.exploring and (span.file, span.line) in self.split_at:
                self._decide(branches, outcomes, why, span, labels)
                return
            if not self.exploring:
                self.joins.setdefault((span.file, span.line), (why, _decides(outcomes, self.ev.st)))
        self._join(outcomes, why, span)

    def _explore(self, branches: list[Callable[[], None]], span: SourceSpan) -> list[_Outcome]:
        base = self.ev.st
        outcomes: list[_Outcome] = []
        for branch in branches:
            self.ev.st = base.clone()
            self.ev.st.fs = FileSystem(dict(base.fs.files), set(base.fs.dirs))
            capture = Capture() if base.out is not None else None
            self.ev.st.out = capture
            control, assumptions = dict(self.ev.control), dict(self.ev.assumptions)
            pending = [(into, len(into)) for into in (*self.returns, *self.breaks)]
            self.exploring += 1
            signal: BaseException | None = None
            try:
                branch()
            except (ExitSignal, ReturnSignal, LoopSignal, LaunchSignal) as caught:
                signal = caught
            finally:
                self.exploring -= 1
            # early returns/breaks it left: kept only if this branch is joined, not decided
            landed = [(into, into[size:]) for into, size in pending]
            for into, size in pending:
                del into[size:]
            outcomes.append(
                _Outcome(
                    self.ev.st,
                    signal,
                    capture,
                    {k: None for k in self.ev.control if k not in control},
                    {k: v for k, v in self.ev.assumptions.items() if k not in assumptions},
                    landed,
                )
            )
            self.ev.control, self.ev.assumptions = control, assumptions
        self.ev.st = base
        return outcomes

    def _diverge(self, outcomes: list[_Outcome]) -> bool:
        """True when the branches lead to different places: a join would lose information."""
        kinds = {type(o.signal) for o in outcomes if not isinstance(o.signal, ExitSignal)}
        if not kinds:
            return True  # every branch exits: which exit decides the result
        if kinds != {type(None)}:
            return True  # a launch, return or break on some side
        normal = [o for o in outcomes if o.signal is None]
        if any(o.control != normal[0].control for o in normal[1:]):
            return True
        if changed_names([o.st for o in normal]):
            return True
        if any(o.st.fs.files != normal[0].st.fs.files for o in normal[1:]):
            return True
        texts = [o.capture.text() for o in normal if o.capture is not None]
        return any(t != texts[0] for t in texts[1:])

    def _decide(
        self,
        branches: list[Callable[[], None]],
        outcomes: list[_Outcome],
        why: str,
        span: SourceSpan,
        labels: Sequence[str],
    ) -> None:
        index = self.plan[len(self.trail)] if len(self.trail) < len(self.plan) else 0
        names = [labels[i] if i < len(labels) else f"branch {i + 1}" for i in range(len(branches))]
        self.trail.append(Choice(span, why, tuple(names), index, _decides(outcomes, self.ev.st)))
        branches[index]()

    def _join(self, outcomes: list[_Outcome], why: str, span: SourceSpan) -> None:
        base = self.ev.st
        normal = [o for o in outcomes if o.signal is None]
        exits = [o.signal for o in outcomes if isinstance(o.signal, ExitSignal)]
        jumps = [o for o in outcomes if isinstance(o.signal, (ReturnSignal, LoopSignal))]
        launches = [o for o in outcomes if isinstance(o.signal, LaunchSignal)]
        for outcome in outcomes:
            self.ev.assumptions.update(outcome.assumptions)
            if not isinstance(outcome.signal, ExitSignal):
                self.ev.control.update(outcome.control)  # an exiting side reaches no launch
                for into, states in outcome.landed:
                    into.extend(states)
        if launches:
            self.ev.control[
                self.ev.unresolved(span, "launch", f"reached only on one side of {why}")
            ] = None
            assert launches[0].signal is not None
            raise launches[0].signal
        if not normal and not jumps:
            assert exits
            raise exits[0]
        for gone in exits:
            self.ev.assume(
                gone.span,
                "exit",
                f"exit at {gone.span.file}:{gone.span.line}",
                f"taken only if {why} goes that way, which cannot be decided statically; "
                "assumed not taken" + (f" ({gone.message})" if gone.message else ""),
            )
        if jumps and normal and self._land(jumps):
            jumps = []
        if jumps and not normal:
            states = [o.st for o in jumps]
            self.ev.st = merge(states, base, why, span.file, span.line)
            self._join_files([o.st.fs for o in jumps], base.fs, why, span)
            self.ev.st.fs = base.fs
            assert jumps[0].signal is not None
            raise jumps[0].signal
        if jumps:
            self.ev.control[
                self.ev.unresolved(span, "control flow", f"return/break depends on {why}")
            ] = None
        self.ev.st = merge([o.st for o in normal], base, why, span.file, span.line)
        self._join_files([o.st.fs for o in normal], base.fs, why, span)
        self.ev.st.fs = base.fs
        outputs = [o.capture for o in normal if o.capture is not None]
        if base.out is not None and outputs:
            texts = [c.text() for c in outputs]
            if all(t == texts[0] for t in texts):
                base.out.chunks.append(texts[0])
            else:
                item = self.ev.unresolved(span, "output", f"differs between branches of {why}")
                base.out.chunks.append(opaque("output", "undecidable-branch", item))

    def _land(self, jumps: list[_Outcome]) -> bool:
        """Keep early ``return``s / ``break``s to join where they land; False when one
        cannot be followed (a ``continue``, several levels, no enclosing function/loop)."""
        targets: list[tuple[list[State], State]] = []
        for outcome in jumps:
            signal = outcome.signal
            if isinstance(signal, ReturnSignal) and self.returns:
                outcome.st.status = signal.status
                targets.append((self.returns[-1], outcome.st))
            elif (
                isinstance(signal, LoopSignal)
                and signal.kind == "break"
                and signal.levels == 1
                and self.breaks
            ):
                targets.append((self.breaks[-1], outcome.st))
            else:
                return False
        for into, state in targets:
            into.append(state)
        return True

    def landed(self, pending: list[State], why: str, span: SourceSpan) -> None:
        """Join the states of branches that left early with the one that fell through."""
        if pending:
            merged = merge([self.ev.st, *pending], self.ev.st, why, span.file, span.line)
            merged.out = self.ev.st.out
            self.ev.st = merged

    @contextmanager
    def barrier(self) -> Iterator[None]:
        """A new process (subshell, pipeline stage, child script): returns and breaks inside
        it do not land outside it."""
        saved = self.returns, self.breaks
        self.returns, self.breaks = [], []
        try:
            yield
        finally:
            self.returns, self.breaks = saved

    def _join_files(
        self, systems: list[FileSystem], into: FileSystem, why: str, span: SourceSpan
    ) -> None:
        """Files the branches wrote, in place (a subshell's parent shares them); a file whose
        contents differ between branches becomes unknown."""
        files: dict[str, Text] = {}
        for fs in systems:
            for key, text in fs.files.items():
                if key in files and files[key] != text:
                    item = self.ev.unresolved(
                        span, f"contents of {key}", f"differ between branches of {why}"
                    )
                    text = opaque("file", "undecidable-branch", item)
                files[key] = text
            into.dirs |= fs.dirs
        into.files.clear()
        into.files.update(files)
