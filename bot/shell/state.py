"""The shell state the evaluator threads through a script, and merging of undecidable branches."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from bot.shell.parse import ParsedFile
from bot.shell.result import Unresolved
from bot.shell.text import EMPTY, Text, opaque
from bot.shell.usage import (
    every_variable_read,
    function_analysed,
    function_read,
    variable_read,
)


@dataclass(frozen=True, slots=True)
class Var:
    """A variable: scalar text, indexed array (sparse) or associative array; immutable."""

    scalar: Text | None = None
    items: tuple[tuple[int, Text], ...] | None = None  # indexed array, sorted by index
    assoc: tuple[tuple[str, Text], ...] | None = None
    exported: bool = False
    maybe: Unresolved | None = None  # a library helper that was not evaluated may assign it

    @property
    def is_array(self) -> bool:
        return self.items is not None or self.assoc is not None

    def elements(self) -> list[Text]:
        if self.items is not None:
            return [value for _, value in self.items]
        if self.assoc is not None:
            return [value for _, value in self.assoc]
        return [self.scalar] if self.scalar is not None else []

    def keys(self) -> list[str]:
        if self.items is not None:
            return [str(index) for index, _ in self.items]
        if self.assoc is not None:
            return [key for key, _ in self.assoc]
        return ["0"] if self.scalar is not None else []

    def get(self, key: str | int) -> Text | None:
        if self.assoc is not None:
            return dict(self.assoc).get(str(key))
        if self.items is not None:
            return dict(self.items).get(int(key))
        return self.scalar if str(key) == "0" else None

    def first(self) -> Text:
        if self.items is not None or self.assoc is not None:
            found = self.get(0) if self.items is not None else self.get("0")
            return found if found is not None else EMPTY
        return self.scalar if self.scalar is not None else EMPTY


@dataclass(frozen=True)
class FunctionDef:
    name: str
    node: Node  # the body; read it through ``body``
    pf: ParsedFile
    library: str | None  # the registered library being sourced when it was defined

    @property
    def body(self) -> Node:
        """The body, recorded as read for a library function (:mod:`bot.shell.usage`): a
        cached evaluation stays valid while the bodies it read are unchanged."""
        if self.library is not None:
            function_read(self.name)
        return self.node

    @property
    def analysed_body(self) -> Node:
        """The body, for the library handler's analysis (recorded as such: what it reads of
        the body is its :attr:`~bot.shell.handlers.SourceHandler.signature`)."""
        if self.library is not None:
            function_analysed(self.name)
        return self.node


@dataclass
class FileSystem:
    """Files and directories the script created (never written to disk)."""

    files: dict[str, Text] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)


@dataclass
class Capture:
    """A stdout sink: what a command substitution or pipeline stage collects."""

    chunks: list[Text] = field(default_factory=list)

    def text(self) -> Text:
        return Text.join(self.chunks)


@dataclass
class State:
    frames: list[dict[str, Var]]
    export_order: dict[str, None]
    functions: dict[str, FunctionDef]
    positional: list[tuple[Text, ...]]
    fs: FileSystem
    cwd: str | None = ""  # repository-relative working directory (None: unknown)
    status: int | None = 0
    out: Capture | None = None  # None: stdout goes to the job log (discarded)
    stdin: Text | None = None  # None: nothing known on stdin
    errexit: bool = False
    nounset: bool = False
    sources: list[str] = field(default_factory=list)  # BASH_SOURCE, innermost first
    funcnames: list[str] = field(default_factory=list)
    condition: int = 0  # >0 while evaluating an if/while/&&/|| condition (errexit off)

    def clone(self) -> State:
        return replace(
            self,
            frames=[dict(frame) for frame in self.frames],
            export_order=dict(self.export_order),
            functions=dict(self.functions),
            positional=list(self.positional),
            sources=list(self.sources),
            funcnames=list(self.funcnames),
        )

    # --- variables ----------------------------------------------------------------------------

    def lookup(self, name: str) -> Var | None:
        variable_read(name)
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None

    def frame_of(self, name: str) -> dict[str, Var]:
        for frame in reversed(self.frames):
            if name in frame:
                return frame
        return self.frames[0]

    def store(self, name: str, var: Var) -> None:
        self.frame_of(name)[name] = var
        if var.exported and name not in self.export_order:
            self.export_order[name] = None

    def declare_local(self, name: str, var: Var) -> None:
        self.frames[-1][name] = var

    def unset(self, name: str) -> None:
        frame = self.frame_of(name)
        frame.pop(name, None)

    def visible(self, *, recorded: bool = True) -> Iterator[tuple[str, Var]]:
        """Every variable in scope; counts as reading them all unless the caller records
        what it reads itself (``recorded=False``)."""
        if recorded:
            every_variable_read()
        seen: dict[str, Var] = {}
        for frame in self.frames:
            seen.update(frame)
        yield from seen.items()

    def names(self) -> list[str]:
        """The names of the variables set (names only: an evaluation cache entry's input has
        the same names for every environment it serves)."""
        visible = self.visible(recorded=False)
        return [name for name, var in visible if var.scalar is not None or var.is_array]


def _value(var: Var | None) -> object:
    """What a variable holds, ignoring where its characters were written."""
    if var is None:
        return None

    def text(t: Text | None) -> object:
        return None if t is None else (t.s, t.taints)

    items = None if var.items is None else tuple((i, text(v)) for i, v in var.items)
    assoc = None if var.assoc is None else tuple((k, text(v)) for k, v in var.assoc)
    return (text(var.scalar), items, assoc, var.exported, var.maybe)


def _differs(name: str, a: Var | None, b: Var | None) -> bool:
    if a is b:
        return False
    variable_read(name)  # an input value compared with what a branch assigned: read
    return _value(a) != _value(b)


def changed_names(states: list[State]) -> list[str]:
    """Variables whose value differs between ``states`` (all frames, innermost wins)."""
    if len(states) < 2:
        return []
    views = [dict(state.visible(recorded=False)) for state in states]
    names: dict[str, None] = {}
    for view in views:
        names.update(dict.fromkeys(view))
    return [
        name
        for name in names
        if any(_differs(name, views[0].get(name), other.get(name)) for other in views[1:])
    ]


def merge(states: list[State], base: State, why: str, file: str, line: int | None) -> State:
    """One state standing for several branches: values that differ become named unknowns."""
    if len(states) == 1:
        return states[0]
    first = states[0]
    merged = first.clone()
    for depth, frame in enumerate(merged.frames):
        names: dict[str, None] = {}
        for state in states:
            if depth < len(state.frames):
                names.update(dict.fromkeys(state.frames[depth]))
        for name in names:
            candidates = [
                state.frames[depth].get(name) if depth < len(state.frames) else None
                for state in states
            ]
            if all(not _differs(name, candidates[0], other) for other in candidates[1:]):
                if candidates[0] is not None:
                    frame[name] = candidates[0]
                continue
            exported = any(c is not None and c.exported for c in candidates)
            item = Unresolved(f"${name}", f"differs between branches of {why}", file, line)
            inherited: set[Unresolved] = set()
            for candidate in candidates:
                if candidate is not None:
                    for value in candidate.elements():
                        inherited |= value.taints
            value = opaque(name, "undecidable-branch", item).with_taints(frozenset(inherited))
            frame[name] = Var(scalar=value, exported=exported)
    for state in states[1:]:
        for name in state.export_order:
            merged.export_order.setdefault(name, None)
        for name, fn in state.functions.items():
            merged.functions.setdefault(name, fn)
    statuses = {state.status for state in states}
    merged.status = statuses.pop() if len(statuses) == 1 else None
    merged.out = base.out
    return merged
