"""Partial evaluation of a bash script, statement by statement, without running anything.

The evaluator walks the tree-sitter syntax tree and keeps a :class:`~bot.shell.state.State`
(variables, functions, positional parameters, files the script "wrote" in memory). It runs
nothing: no process, no file write, no read outside the repository source it is given. What it
cannot know becomes a named placeholder that carries an :class:`Unresolved` item.

Conditions that cannot be decided are explored on both sides and the states merged: values
that differ become unknown (and say why), a side that only ``exit``s is recorded as an
assumption. The first ``vllm serve`` (or ``python -m vllm.entrypoints.openai.api_server``)
reached stops the evaluation and becomes the result.
"""

from __future__ import annotations

import posixpath
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from tree_sitter import Node

from bot.errors import InputError
from bot.shell import arith, patterns
from bot.shell.assigns import assigned_names
from bot.shell.budget import Budget
from bot.shell.builtins import BUILTINS as _BUILTINS
from bot.shell.builtins import PURE as _PURE
from bot.shell.conditions import evaluate_test
from bot.shell.effects import classify
from bot.shell.errors import BudgetExceeded, ExtractionError
from bot.shell.handlers import Handlers
from bot.shell.parse import ParsedFile, ScriptParser, first_token, named_children
from bot.shell.result import ScriptResult, SourceSpan, Status, Unresolved, mentions
from bot.shell.signals import ExitSignal, Launch, LaunchSignal, LoopSignal, ReturnSignal
from bot.shell.state import Capture, FileSystem, FunctionDef, State, Var, changed_names, merge
from bot.shell.text import (
    EMPTY,
    EMPTY_TAINTS,
    PLACEHOLDER_RE,
    REASONS,
    Run,
    Text,
    opaque,
    placeholder,
    taints_in_input,
)
from bot.shell.words import (
    DEFAULT_IFS,
    Expander,
    ExpansionError,
    Field,
    Piece,
    VarView,
    join_pieces,
)
from bot.sources import FileSource

_DYNAMIC_OPAQUE = {
    "RANDOM": "process-id",
    "SRANDOM": "process-id",
    "SECONDS": "process-id",
    "EPOCHSECONDS": "process-id",
    "EPOCHREALTIME": "process-id",
    "BASHPID": "process-id",
    "PPID": "process-id",
    "UID": "host-probe",
    "EUID": "host-probe",
    "HOSTNAME": "host-probe",
    "HOSTTYPE": "host-probe",
    "OSTYPE": "host-probe",
    "MACHTYPE": "host-probe",
    "BASH_VERSION": "host-probe",
    "USER": "host-probe",
    "HOME": "home",
    "PATH": "host-probe",
    "SHELL": "host-probe",
    "TERM": "host-probe",
    "LANG": "host-probe",
}
# The process's own bookkeeping, not part of what a launch line sets (as in the traces).
_NOT_LAUNCH_ENV = frozenset({"PATH", "HOME", "PWD", "OLDPWD", "SHLVL", "_"})


@contextmanager
def _recursion_room(limit: int = 6000) -> Iterator[None]:
    old = sys.getrecursionlimit()
    if old < limit:
        sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        if old < limit:
            sys.setrecursionlimit(old)


# Commands that run their arguments as a command: stripped to find the program.
_WRAPPERS = frozenset(
    ("env", "nohup", "exec", "command", "builtin", "time", "nice", "setsid", "stdbuf", "timeout")
) | {"taskset", "numactl", "sudo"}
_NUMACTL_VALUE_OPTS = frozenset(
    ("-N", "-m", "-C", "-p", "-i", "--cpunodebind", "--membind", "--physcpubind")
) | {"--preferred", "--interleave"}


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


class Evaluator:
    """Evaluates one script against one input environment; use :meth:`run` once."""

    def __init__(
        self,
        source: FileSource,
        parser: ScriptParser,
        script: str,
        env: Mapping[str, str],
        *,
        budget: Budget | None = None,
        workdir: str | None = None,
        env_label: str = "<job env>",
        handlers: Handlers | None = None,
        plan: Sequence[int] | None = None,
    ) -> None:
        self.source = source
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
        self.expander = Expander(self)  # word expansion, reading variables back from here
        self.handlers = handlers or Handlers()
        self.parser = parser
        self.script = script
        self.job_env = dict(env)
        self.budget = budget or Budget(parser.limits)
        self.workdir = workdir.rstrip("/") if workdir else None
        self.env_label = env_label
        self.assumptions: dict[tuple[str, str, str], Unresolved] = {}
        self.control: dict[Unresolved, None] = {}
        self.last_message: tuple[str, SourceSpan] | None = None
        self.libraries: list[str] = []  # the sourced libraries being evaluated, innermost last
        self.sourced: list[str] = []  # repository files the script sourced, in order
        self.unknown_commands: dict[str, str] = {}  # bare name → why it is not evaluated
        self.zero = script
        self.last_subst_status: int | None = None
        self.orphans: frozenset[Unresolved] = frozenset()  # uncertainty of vanished words
        self._error_until: dict[int, int] = {}
        self.st = self._initial_state()

    # --- setup and result -------------------------------------------------------------------------

    def _initial_state(self) -> State:
        frame: dict[str, Var] = {}
        for name, value in self.job_env.items():
            taints = taints_in_input(value, self.env_label)
            frame[name] = Var(scalar=Text.lit(value, None, taints), exported=True)
        return State(
            frames=[frame],
            export_order=dict.fromkeys(self.job_env),
            functions={},
            positional=[()],
            fs=FileSystem(),
            sources=[self.script],
        )

    def run(self) -> ScriptResult:
        pf = self.parser.parse_file(self.source, self.script)
        try:
            with _recursion_room():
                try:
                    self.exec_block(pf.root, pf)
                except ReturnSignal:
                    pass
                except LoopSignal:
                    pass
        except LaunchSignal as signal:
            return self._launched(signal.launch)
        except ExitSignal as signal:
            return self._exited(signal)
        except RecursionError as err:
            raise BudgetExceeded(self.script, None, "nesting too deep to evaluate") from err
        return self._ended(
            "no-launch",
            f"no {self.handlers.launch_label} found: {self.script} ends without starting "
            f"{self.handlers.server_label}",
        )

    def _files(self) -> dict[str, str]:
        return {path: text.s for path, text in self.st.fs.files.items()}

    def _ended(
        self,
        status: Status,
        reason: str,
        *,
        invalid: str | None = None,
        at: SourceSpan | None = None,
    ) -> ScriptResult:
        """A result without a launch line: what the script left unknown, assumed and wrote."""
        return ScriptResult(
            script=self.script,
            status=status,
            unresolved=tuple(self.control),
            assumptions=tuple(self.assumptions.values()),
            invalid=invalid,
            reason=reason,
            files=self._files(),
            launch=at,
            steps=self.budget.steps,
        )

    def _exited(self, signal: ExitSignal) -> ScriptResult:
        where = f"{signal.span.file}:{signal.span.line}"
        code = "?" if signal.code is None else str(signal.code)
        detail = signal.message or f"exit {code}"
        if signal.code == 0:
            return self._ended(
                "no-launch",
                f"no {self.handlers.launch_label} found: the script exits with status 0 "
                f"at {where} before starting {self.handlers.server_label}",
            )
        invalid = f"point not valid for this script: {detail} (exit {code}) ({where})"
        return self._ended("invalid", invalid, invalid=invalid, at=signal.span)

    def _launched(self, launch: Launch) -> ScriptResult:
        unresolved: dict[Unresolved, None] = {}
        reach: dict[Unresolved, tuple[str, ...]] = {}

        def reaches(taints: Iterable[Unresolved], where: str) -> None:
            for item in sorted(taints, key=_item_key):
                unresolved[item] = None
                reach[item] = (*reach.get(item, ()), where)

        for index, text in enumerate(launch.argv):
            reaches(text.taints, f"argv:{index}")
        env: dict[str, str] = {}
        for name, value in launch.env:
            env[name] = value.s
            reaches(value.taints, f"env:{name}")
        for path, content in self.st.fs.files.items():
            # a file the server reads (`--config x.yaml`) whose contents are not known
            for index, text in enumerate(launch.argv):
                if content.taints and mentions(text.s, path):
                    reaches(content.taints, f"argv:{index}")
        for item in self.control:
            reach.pop(item, None)  # about the whole line, wherever else it shows
        unresolved.update(self.control)
        for index in launch.glob_fields:
            self.assume(
                launch.span,
                "glob",
                f"argv[{index}] {launch.argv[index].s!r}",
                "unquoted glob characters: bash would try pathname expansion (kept as written)",
            )
        return ScriptResult(
            script=self.script,
            status="launched",
            argv=tuple(text.s for text in launch.argv),
            argv_sources=tuple(launch.sources),
            env=env,
            env_unset=tuple(launch.env_unset),
            unresolved=tuple(unresolved),
            assumptions=tuple(self.assumptions.values()),
            files=launch.files,
            launch=launch.span,
            steps=self.budget.steps,
            reach=reach,
        )

    def assume(self, span: SourceSpan, category: str, what: str, why: str) -> None:
        key = (category, span.file, what if category != "side-effect" else why)
        if key not in self.assumptions:
            self.assumptions[key] = Unresolved(what, why, span.file, span.line)

    def unresolved(self, span: SourceSpan, what: str, why: str) -> Unresolved:
        return Unresolved(what, why, span.file, span.line)

    # --- expansion hooks --------------------------------------------------------------------------

    def tick(self, pf: ParsedFile, offset: int) -> None:
        self.budget.step(pf.display, None)

    def check_size(self, text: Text, span: SourceSpan) -> None:
        self.budget.check_string(len(text.s), span.file, span.line)

    def ifs(self) -> str:
        var = self.st.lookup("IFS")
        if var is None or var.scalar is None:
            return DEFAULT_IFS
        return var.scalar.s

    def var_names(self) -> list[str]:
        return [name for name, var in self.st.visible() if var.scalar is not None or var.is_array]

    def home(self, span: SourceSpan) -> Text:
        var = self.st.lookup("HOME")
        if var is not None and var.scalar is not None:
            return var.scalar
        return opaque("HOME", "home", self.unresolved(span, "$HOME", REASONS["home"]))

    def pwd(self, span: SourceSpan) -> Text:
        var = self.st.lookup("PWD")
        if var is not None and var.scalar is not None and self.st.cwd == "":
            return var.scalar
        if self.workdir is not None and self.st.cwd is not None:
            return Text.lit(posixpath.join(self.workdir, self.st.cwd).rstrip("/") or "/")
        item = self.unresolved(span, "$PWD", REASONS["working-directory"])
        return opaque("PWD", "working-directory", item)

    def param(self, name: str, index: str | None, span: SourceSpan) -> VarView:
        st = self.st
        if name.isdigit():
            number = int(name)
            if number == 0:
                return VarView([Text.lit(self.zero)], True)
            args = st.positional[-1]
            if number <= len(args):
                return VarView([args[number - 1]], True)
            return VarView([], False)
        if name in ("@", "*"):
            return VarView(list(st.positional[-1]), True, name)
        if name == "#":
            return VarView([Text.lit(str(len(st.positional[-1])))], True)
        if name == "?":
            if st.status is None:
                item = self.unresolved(span, "$?", "exit status of a command that is not evaluated")
                return VarView([opaque("?", "command-output", item)], True)
            return VarView([Text.lit(str(st.status))], True)
        if name in ("$", "!"):
            item = self.unresolved(span, f"${name}", REASONS["process-id"])
            return VarView([opaque(name, "process-id", item)], True)
        if name == "-":
            return VarView([Text.lit("hB" + ("e" if st.errexit else ""))], True)
        var = st.lookup(name)
        if var is None or (var.scalar is None and not var.is_array):
            dynamic = self._dynamic(name, span)
            if dynamic is None:
                maybe_unset = (
                    frozenset({var.maybe}) if var is not None and var.maybe else EMPTY_TAINTS
                )
                return VarView([], False, "@" if index in ("@", "*") else None, maybe_unset)
            var = dynamic
        maybe = frozenset({var.maybe}) if var.maybe is not None else EMPTY_TAINTS
        if index is None:
            return VarView([var.first().with_taints(maybe)], True)
        if index in ("@", "*"):
            return VarView([v.with_taints(maybe) for v in var.elements()], True, index, maybe)
        if index in ("!@", "!*"):
            return VarView([Text.lit(key) for key in var.keys()], True, index[1])  # noqa: SIM118
        if var.assoc is not None:
            found = var.get(index)
        else:
            position = self._index(index, span)
            if position is None:
                item = self.unresolved(span, f"${{{name}[{index}]}}", "index is not known")
                return VarView([opaque(f"{name}[]", "derived", item)], True)
            if position < 0 and var.items is not None and var.items:
                position = var.items[-1][0] + 1 + position
            found = var.get(position)
        if found is None:
            return VarView([], False)
        return VarView([found.with_taints(maybe)], True)

    def _index(self, index: str, span: SourceSpan) -> int | None:
        value = self.arithmetic(Text.lit(index), span)
        return int(value.s) if value.known else None

    def _dynamic(self, name: str, span: SourceSpan) -> Var | None:
        st = self.st
        if name == "LINENO":
            return Var(scalar=Text.lit(str(span.line)))
        if name == "BASH_SOURCE":
            return Var(items=tuple((i, Text.lit(s)) for i, s in enumerate(st.sources)))
        if name == "FUNCNAME":
            names = [*reversed(st.funcnames), "main"] if st.funcnames else []
            return Var(items=tuple((i, Text.lit(s)) for i, s in enumerate(names)))
        if name == "PWD":
            return Var(scalar=self.pwd(span))
        if name == "IFS":
            return Var(scalar=Text.lit(DEFAULT_IFS))
        if name in _DYNAMIC_OPAQUE:
            reason = _DYNAMIC_OPAQUE[name]
            item = self.unresolved(span, f"${name}", REASONS.get(reason, reason))
            return Var(scalar=opaque(name, reason, item))
        return None

    def unbound(self, name: str, view: VarView, span: SourceSpan) -> None:
        if (
            self.st.nounset
            and not view.is_set
            and not view.taints
            and view.splat is None
            and name not in ("@", "*")
        ):
            raise ExpansionError(f"{name}: unbound variable (set -u)", span)

    def assign_scalar(self, name: str, value: Text, span: SourceSpan) -> None:
        self.set_var(name, value, span)

    def arithmetic(self, expression: Text, span: SourceSpan) -> Text:
        label = expression.s.strip()
        if not expression.known:
            return Text.lit(placeholder(f"$(({label}))", "derived"), None, expression.taints)
        taints: set[Unresolved] = set()

        def get(name: str, idx: int | None) -> str | None:
            view = self.param(name, None if idx is None else str(idx), span)
            value = view.values[0] if view.values else EMPTY
            if not value.known:
                taints.update(value.taints)
                return None
            return value.s

        def put(name: str, idx: int | None, value: int | None) -> None:
            if value is None:
                item = self.unresolved(span, f"${name}", REASONS["derived"])
                text = Text.lit(placeholder(name, "derived"), None, frozenset(taints or {item}))
            else:
                text = Text.lit(str(value))
            if idx is None:
                self.set_var(name, text, span)
            else:
                self.set_element(name, str(idx), text, span)

        hooks = arith.Hooks(get, put, lambda: self.budget.step(span.file, span.line))
        try:
            value = arith.evaluate(expression.s, hooks)
        except arith.ArithError as err:
            item = self.unresolved(span, f"$(({label}))", f"arithmetic error: {err}")
            return opaque(f"$(({label}))", "derived", item)
        if value is None:
            return Text.lit(placeholder(f"$(({label}))", "derived"), None, frozenset(taints))
        return Text.lit(str(value))

    def substitute(self, pf: ParsedFile, node: Node | None, start: int, end: int) -> Text:
        span = self.expander.span_at(pf, node.start_byte if node is not None else start)
        if node is not None:
            body: list[Node] = named_children(node)
            target_pf = pf
        else:
            text = pf.slice(start, end)
            target_pf = self.parser.parse_fragment(text, pf.display, pf.line_of(start))
            body = named_children(target_pf.root)
        redirected = _read_only_redirect(body, target_pf)
        if redirected is not None:  # `$(< file)`: the file's contents (bash reads, runs nothing)
            text_out = self.read_file(self.expander.string(target_pf, redirected), span) or EMPTY
            self.last_subst_status = 0
        else:
            capture = Capture()
            status = self.in_subshell(lambda: self.exec_nodes(body, target_pf), out=capture)
            self.last_subst_status = status
            text_out = capture.text()
        # $(…) drops trailing newlines
        stripped = text_out.s.rstrip("\n")
        result = text_out.slice(0, len(stripped))
        if text_out.taints and not result.taints:
            result = result.with_taints(text_out.taints)
        self.budget.check_string(len(result.s), span.file, span.line)
        return Text(Run(r.s, None, r.taints) for r in result.runs) if result.runs else result

    def process_output(self, node: Node, pf: ParsedFile) -> Text:
        """What ``<(…)`` feeds a reader: the commands' output, trailing newlines kept."""
        capture = Capture()
        self.in_subshell(lambda: self.exec_nodes(named_children(node), pf), out=capture)
        text = capture.text()
        span = self.expander.span_at(pf, node.start_byte)
        self.budget.check_string(len(text.s), span.file, span.line)
        return text

    # --- statements -------------------------------------------------------------------------------

    def exec_block(self, node: Node, pf: ParsedFile) -> None:
        self.exec_nodes(node.children, pf)

    def exec_nodes(self, children: Sequence[Node], pf: ParsedFile) -> None:
        count = len(children)
        for index, child in enumerate(children):
            if not child.is_named or child.type in ("comment", "heredoc_body"):
                continue
            background = index + 1 < count and children[index + 1].type == "&"
            if background:
                self.exec_background(child, pf)
            else:
                self.exec_stmt(child, pf)

    def exec_background(self, node: Node, pf: ParsedFile) -> None:
        self.in_subshell(lambda: self.exec_stmt(node, pf))
        self.st.status = 0

    def exec_stmt(self, node: Node, pf: ParsedFile) -> None:
        line = pf.node_line(node)
        self.budget.step(pf.display, line)
        if (
            node.has_error
            and node.type not in ("ERROR", "function_definition")  # bodies: checked when run
            and node.start_byte >= self._error_until.get(id(pf), -1)
            and _syntax_error(node)
        ):
            # bash would reject this statement; evaluate what tree-sitter recovered, but say so
            self._error_until[id(pf)] = node.end_byte
            item = self.unresolved(
                SourceSpan(pf.display, line),
                f"`{_short(pf.text(node))}`",
                "contains a shell syntax error (bash would reject it); evaluated as recovered",
            )
            self.control[item] = None
        self.budget.enter(pf.display, line)
        try:
            handler = self._handlers.get(node.type)
            if handler is None:
                span = SourceSpan(pf.display, line)
                if node.type == "ERROR" or node.is_missing:
                    item = self.unresolved(
                        span, f"`{_short(pf.text(node))}`", "shell text that could not be parsed"
                    )
                else:
                    item = self.unresolved(span, node.type, "unsupported shell construct")
                self.control[item] = None
                self.st.status = None
                return
            handler(self, node, pf)
        except ExpansionError as err:
            raise ExitSignal(1, err.span, err.message) from err
        finally:
            self.budget.leave()

    def _errexit(self, span: SourceSpan) -> None:
        if self.st.errexit and not self.st.condition and self.st.status not in (0, None):
            raise ExitSignal(self.st.status, span, "a command failed under `set -e`")

    # simple commands --------------------------------------------------------------------------

    def exec_command(self, node: Node, pf: ParsedFile) -> None:
        assignments: list[Node] = []
        words: list[Node] = []
        redirects: list[Node] = []
        for child in node.children:
            if not child.is_named or child.type == "comment":
                continue
            if assignments and not words and _newline_between(pf, assignments[-1], child):
                # tree-sitter-bash joins `X=1` and the next line's command; bash does not
                for assignment in assignments:
                    self.exec_assignment(assignment, pf)
                assignments = []
            if child.type == "variable_assignment" and not words:
                assignments.append(child)
            elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                redirects.append(child)
            elif child.type == "command_name":
                words.extend(named_children(child) or [child])
            else:
                words.append(child)
        if redirects:
            self.with_redirects(redirects, pf, lambda: self._simple(node, assignments, words, pf))
        else:
            self._simple(node, assignments, words, pf)

    def _simple(
        self, node: Node, assignments: list[Node], words: list[Node], pf: ParsedFile
    ) -> None:
        span = SourceSpan(pf.display, pf.node_line(node))
        self.last_subst_status = None
        fields: list[Field] = []
        field_spans: list[SourceSpan] = []
        met: set[Unresolved] = set()
        for word in words:
            word_span = SourceSpan(pf.display, pf.node_line(word))
            word_fields, word_taints = self.expander.fields_and_taints(pf, word)
            met |= word_taints
            for field in word_fields:
                fields.append(field)
                field_spans.append(word_span)
            self.budget.check_array(len(fields), span.file, span.line)
        for field in fields:
            met -= field.text.taints
        self.orphans = frozenset(met)
        prefix: list[tuple[str, Text]] = []
        for assignment in assignments:
            name_node = assignment.child_by_field_name("name")
            value_node = assignment.child_by_field_name("value")
            name = pf.text(name_node) if name_node is not None else ""
            value = self.expander.string(pf, value_node) if value_node is not None else EMPTY
            prefix.append((name, value))
        if not fields:
            for assignment in assignments:
                self.exec_assignment(assignment, pf)
            self.st.status = self.last_subst_status if self.last_subst_status is not None else 0
            return
        self.run_command(fields, field_spans, prefix, span, pf)
        self._errexit(span)

    def run_command(
        self,
        fields: list[Field],
        spans: list[SourceSpan],
        prefix: list[tuple[str, Text]],
        span: SourceSpan,
        pf: ParsedFile,
    ) -> None:
        fields, spans, prefix, is_exec = self._strip_wrappers(fields, spans, prefix)
        if not fields:
            self.st.status = 0
            return
        head = fields[0].text
        argv = [f.text for f in fields]
        words = [t.s for t in argv]
        if not head.known:
            self.opaque_command(argv, span, f"command name {head.s} is not known")
            return
        if self.handlers.is_launch(words):
            self._launch(fields, spans, prefix, span)
        name = head.s
        fn = self.st.functions.get(name)
        handler = self.handlers.commands.get(name)
        if fn is not None and not fn.library:
            self._with_prefix(prefix, lambda: self.call_function(fn, argv[1:], span), True)
        elif handler is not None and (
            fn.library is not None if fn is not None else not handler.defined_only
        ):
            model = handler.model
            self._with_prefix(prefix, lambda: model(self, argv[1:], span), True)
        elif fn is not None:
            self._library_call(fn, argv, prefix, span)
        else:
            builtin = _BUILTINS.get(name)
            if builtin is not None:
                self._with_prefix(prefix, lambda: builtin(self, argv, span, pf), False)
            else:
                self._with_prefix(prefix, lambda: self.external(argv, span, pf), True)
        if is_exec:
            raise ExitSignal(self.st.status, span, None if self.st.status == 0 else "exec failed")

    def _strip_wrappers(
        self, fields: list[Field], spans: list[SourceSpan], prefix: list[tuple[str, Text]]
    ) -> tuple[list[Field], list[SourceSpan], list[tuple[str, Text]], bool]:
        is_exec = False
        prefix = list(prefix)
        while fields and fields[0].text.known and fields[0].text.s in _WRAPPERS:
            name = fields[0].text.s
            rest = [f.text.s for f in fields[1:]]
            skip = 1
            if name == "env":
                while skip < len(fields):
                    arg = fields[skip].text.s
                    if arg in ("-i", "--ignore-environment", "-0", "--null"):
                        skip += 1
                    elif arg in ("-u", "--unset") and skip + 1 < len(fields):
                        skip += 2
                    elif arg == "--":
                        skip += 1
                        break
                    elif re.match(r"[A-Za-z_]\w*=", arg):
                        key, _, _ = arg.partition("=")
                        value = fields[skip].text.slice(len(key) + 1)
                        prefix.append((key, value))
                        skip += 1
                    else:
                        break
                if skip >= len(fields):
                    break  # plain `env`: prints the environment
            elif name == "command":
                if rest[:1] and rest[0] in ("-v", "-V"):
                    break
                skip = 2 if rest[:1] == ["-p"] else 1
            elif name == "exec":
                is_exec = True
                while skip < len(fields) and fields[skip].text.s in ("-c", "-l", "-a"):
                    skip += 2 if fields[skip].text.s == "-a" else 1
            elif name in ("time", "nohup", "builtin", "setsid"):
                while skip < len(fields) and fields[skip].text.s.startswith("-"):
                    skip += 1
            elif name == "nice":
                if rest[:1] == ["-n"]:
                    skip = 3
                elif rest[:1] and re.fullmatch(r"-n?-?\d+", rest[0]):
                    skip = 2
            elif name == "stdbuf":
                while skip < len(fields) and fields[skip].text.s.startswith("-"):
                    skip += 2 if fields[skip].text.s in ("-i", "-o", "-e") else 1
            elif name == "timeout":
                while skip < len(fields) and fields[skip].text.s.startswith("-"):
                    skip += 2 if fields[skip].text.s in ("-s", "-k", "--signal") else 1
                skip += 1  # the duration
            elif name == "taskset":
                while skip < len(fields) and fields[skip].text.s.startswith("-"):
                    skip += 1
                skip += 1  # mask or cpu list
            elif name == "numactl":
                while skip < len(fields) and fields[skip].text.s.startswith("-"):
                    opt = fields[skip].text.s
                    skip += 2 if opt in _NUMACTL_VALUE_OPTS else 1
            elif name == "sudo":
                while skip < len(fields) and fields[skip].text.s.startswith("-"):
                    skip += 2 if fields[skip].text.s in ("-u", "-g") else 1
            fields, spans = fields[skip:], spans[skip:]
        return fields, spans, prefix, is_exec

    def _with_prefix(
        self, prefix: list[tuple[str, Text]], run: Callable[[], object], export: bool
    ) -> None:
        """Run with ``VAR=value`` prefixes in effect (restored afterwards, as bash does)."""
        if not prefix:
            run()
            return
        saved: list[tuple[dict[str, Var], str, Var | None]] = []
        for name, value in prefix:
            frame = self.st.frame_of(name)
            saved.append((frame, name, frame.get(name)))
            old = frame.get(name)
            frame[name] = Var(scalar=value, exported=export or (old is not None and old.exported))
        try:
            run()
        finally:
            for frame, name, old in reversed(saved):
                if old is None:
                    frame.pop(name, None)
                else:
                    frame[name] = old

    def _launch(
        self,
        fields: list[Field],
        spans: list[SourceSpan],
        prefix: list[tuple[str, Text]],
        span: SourceSpan,
    ) -> None:
        argv = [f.text for f in fields]
        sources = [f.text.origin() or spans[i] for i, f in enumerate(fields)]
        visible = dict(self.st.visible())
        order = list(self.st.export_order)
        order += [name for name, var in visible.items() if var.exported and name not in order]
        env: dict[str, Text] = {}
        for name in order:
            var = visible.get(name)
            if var is None or not var.exported or var.is_array or var.scalar is None:
                continue
            if name in _NOT_LAUNCH_ENV:
                continue
            value = var.scalar.with_taints(
                frozenset({var.maybe}) if var.maybe is not None else EMPTY_TAINTS
            )
            if name in self.job_env and self.job_env[name] == value.s:
                continue
            env[name] = value
        for name, value in prefix:
            env.pop(name, None)
            env[name] = value
        prefixed = {name for name, _ in prefix}
        unset = [
            name
            for name in self.job_env
            if name not in prefixed
            and (
                name not in visible
                or not visible[name].exported
                or (visible[name].scalar is None and not visible[name].is_array)
            )
        ]
        globbed = [i for i, f in enumerate(fields) if f.glob]
        for item in sorted(self.orphans, key=_item_key):
            self.control[item] = None
        raise LaunchSignal(
            Launch(argv, sources, list(env.items()), unset, span, self._files(), globbed)
        )

    def opaque_command(self, argv: list[Text], span: SourceSpan, why: str) -> None:
        if self.st.out is not None:
            what = f"output of `{_short(' '.join(t.s for t in argv))}`"
            item = self.unresolved(span, what, why)
            self.st.out.chunks.append(opaque(argv[0].s.rsplit("/", 1)[-1], "command-output", item))
        self.st.status = None

    def external(self, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
        words = [t.s for t in argv]
        name = words[0].rsplit("/", 1)[-1]
        if name in ("bash", "sh") and self._run_child_script(argv, span, pf):
            return
        pure = _PURE.get(name)
        if pure is not None and pure(self, argv, span):
            return
        effect = classify(words)
        if effect is not None and effect.category == "no-op":
            self.st.status = 0
            return
        if effect is not None:
            if effect.category != "host-probe" and self.st.out is None:
                self.assume(span, "side-effect", f"`{_short(' '.join(words))}`", effect.note)
            self.opaque_command(
                argv, span, f"the output of {effect.kind} is only known at run time"
            )
            self.st.status = effect.status  # side effects are assumed to succeed; probes unknown
            return
        if any(not t.known for t in argv):
            self.opaque_command(argv, span, "command with unknown arguments is not evaluated")
            return
        unknown = self._unknown_command(words[0])
        self.assume(
            span,
            "side-effect",
            f"`{_short(' '.join(words))}`",
            f"{unknown}; treated as having no effect on the launch",
        )
        self.opaque_command(argv, span, f"{unknown}; its output and exit status are unknown")

    def _unknown_command(self, word: str) -> str:
        """Why a command is not evaluated: for a bare name, where it was looked for."""
        if "/" in word:
            return f"`{word}` is not evaluated statically"
        where = f" ({', '.join(self.sourced)})" if self.sourced else ""
        why = (
            f"`{word}` is not defined by the script or the files it sources{where} and is not "
            "a command recipe-sync models"
        )
        self.unknown_commands[word] = why
        return why

    def _run_child_script(self, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> bool:
        """``bash path args`` / ``bash -c text``: evaluate a repository script as a child."""
        rest = argv[1:]
        while rest and rest[0].s.startswith("-") and rest[0].s not in ("-c",):
            rest = rest[1:]
        if not rest:
            return False
        if rest[0].s == "-c" and len(rest) > 1:
            if not rest[1].known:
                return False
            fragment = self.parser.parse_fragment(rest[1].s, span.file, span.line)
            self._child(fragment, rest[2:3] or [Text.lit("bash")], rest[3:])
            return True
        target = rest[0]
        path = self.repo_path(target)
        if path is None or not self.source.exists(path):
            return False
        child_pf = self.parser.parse_file(self.source, path)
        self._child(child_pf, [Text.lit(target.s)], rest[1:])
        return True

    def _child(self, pf: ParsedFile, zero: list[Text], args: list[Text]) -> None:
        parent = self.st
        frame = {name: var for name, var in parent.visible() if var.exported}
        child = State(
            frames=[frame],
            export_order={name: None for name in parent.export_order if name in frame},
            functions={},
            positional=[tuple(args)],
            fs=parent.fs,
            cwd=parent.cwd,
            out=parent.out,
            stdin=parent.stdin,
            sources=[zero[0].s],
        )
        saved_zero = self.zero
        self.zero = zero[0].s
        self.st = child
        try:
            self.budget.enter(pf.display, None)
            try:
                with self._barrier():
                    self.exec_block(pf.root, pf)
                status = self.st.status
            except ExitSignal as signal:
                status = signal.code
            except (ReturnSignal, LoopSignal):
                status = self.st.status
            finally:
                self.budget.leave()
        finally:
            self.st = parent
            self.zero = saved_zero
        self.st.status = status

    # functions --------------------------------------------------------------------------------

    def exec_function_definition(self, node: Node, pf: ParsedFile) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None or body is None:
            return
        name = pf.text(name_node)
        self.st.functions[name] = FunctionDef(
            name, body, pf, library=self.libraries[-1] if self.libraries else None
        )
        self.st.status = 0

    def call_function(self, fn: FunctionDef, args: Sequence[Text], span: SourceSpan) -> None:
        st = self.st
        self.budget.enter(span.file, span.line)
        st.positional.append(tuple(args))
        st.frames.append({})
        st.funcnames.append(fn.name)
        st.sources.insert(0, fn.pf.display)
        depth = len(st.frames)
        pending: list[State] = []
        self.returns.append(pending)
        saved_breaks, self.breaks = self.breaks, []
        try:
            try:
                if fn.body.type == "compound_statement":
                    self.exec_block(fn.body, fn.pf)
                else:
                    self.exec_stmt(fn.body, fn.pf)
            except ReturnSignal as signal:
                self.st.status = signal.status
            finally:
                self.returns.pop()
                self.breaks = saved_breaks
            self._landed(pending, f"an early return from {fn.name}", span)
        finally:
            st = self.st
            del st.frames[depth - 1 :]
            st.positional.pop()
            st.funcnames.pop()
            st.sources.pop(0)
            self.budget.leave()

    def _library_call(
        self, fn: FunctionDef, argv: list[Text], prefix: list[tuple[str, Text]], span: SourceSpan
    ) -> None:
        """A library helper without a model: inlined if its library says so, else a no-op."""
        assert fn.library is not None
        analysis = self.handlers.sources[fn.library].analyse(fn, self.st.functions)
        if analysis.inline:
            self._with_prefix(prefix, lambda: self.call_function(fn, argv[1:], span), True)
            return
        item = self.unresolved(
            span,
            "",
            f"library function {fn.name} is a side-effect helper and is not evaluated; "
            "it may assign this variable",
        )
        for name in analysis.assigns:
            var = self.st.lookup(name)
            what = f"${name}"
            marked = Unresolved(what, item.why, item.file, item.line)
            if var is None:
                self.st.frames[0][name] = Var(maybe=marked)
            else:
                self.st.store(name, Var(var.scalar, var.items, var.assoc, var.exported, marked))
        if self.st.out is not None:
            self.opaque_command(argv, span, f"library function {fn.name} is not evaluated")
        self.st.status = 0

    # variables --------------------------------------------------------------------------------

    def set_var(self, name: str, value: Text, span: SourceSpan, *, export: bool = False) -> None:
        self.budget.check_string(len(value.s), span.file, span.line)
        old = self.st.lookup(name)
        exported = export or (old is not None and old.exported)
        if old is not None and old.is_array:
            self.set_element(name, "0", value, span)
            return
        self.st.store(name, Var(scalar=value, exported=exported))

    def set_element(self, name: str, key: str, value: Text, span: SourceSpan) -> None:
        old = self.st.lookup(name)
        exported = old is not None and old.exported
        if old is not None and old.assoc is not None:
            items = dict(old.assoc)
            items[key] = value
            self.st.store(name, Var(assoc=tuple(items.items()), exported=exported))
            return
        position = self._index(key, span)
        if position is None:
            item = self.unresolved(span, f"${name}", "array index is not known")
            self.st.store(name, Var(scalar=opaque(name, "derived", item), exported=exported))
            return
        elements = dict(old.items or ()) if old is not None and old.items is not None else {}
        if old is not None and old.items is None and old.scalar is not None:
            elements[0] = old.scalar
        if position < 0:
            position = (max(elements) + 1 if elements else 0) + position
        elements[position] = value
        self.budget.check_array(len(elements), span.file, span.line)
        self.st.store(name, Var(items=tuple(sorted(elements.items())), exported=exported))

    def set_array(self, name: str, values: list[Text], span: SourceSpan, *, append: bool) -> None:
        old = self.st.lookup(name)
        exported = old is not None and old.exported
        elements: dict[int, Text] = {}
        if append and old is not None:
            if old.items is not None:
                elements = dict(old.items)
            elif old.scalar is not None:
                elements = {0: old.scalar}
        start = max(elements) + 1 if elements else 0
        for offset, value in enumerate(values):
            elements[start + offset] = value
        self.budget.check_array(len(elements), span.file, span.line)
        self.st.store(name, Var(items=tuple(sorted(elements.items())), exported=exported))

    def exec_assignment(self, node: Node, pf: ParsedFile, *, local: bool = False) -> None:
        span = SourceSpan(pf.display, pf.node_line(node))
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return
        append = any(child.type == "+=" for child in node.children)
        key: str | None = None
        if name_node.type == "subscript":
            base = name_node.child_by_field_name("name")
            index = name_node.child_by_field_name("index")
            name = pf.text(base) if base is not None else pf.text(name_node)
            key = self.expander.string(pf, index).s if index is not None else "0"
        else:
            name = pf.text(name_node)
        self.last_subst_status = None
        if local:
            self.st.declare_local(name, Var())
        if value_node is not None and value_node.type == "array":
            values = self._array_values(value_node, pf)
            old = self.st.lookup(name)
            if (old is not None and old.assoc is not None) or self._assoc_literal(value_node, pf):
                self._assoc_assign(name, value_node, pf, span, append)
            else:
                self.set_array(name, values, span, append=append)
        else:
            value = self.expander.string(pf, value_node) if value_node is not None else EMPTY
            value = _named_after(name, value)
            if key is not None:
                if append:
                    old = self.st.lookup(name)
                    current = old.get(key) if old is not None else None
                    value = (current or EMPTY) + value
                self.set_element(name, key, value, span)
            else:
                if append:
                    old = self.st.lookup(name)
                    if old is not None and old.is_array:
                        self.set_array(name, [value], span, append=True)
                        self.st.status = 0
                        return
                    value = (old.first() if old is not None else EMPTY) + value
                self.set_var(name, value, span)
        status = self.last_subst_status
        self.st.status = status if status is not None else 0

    def _array_values(self, node: Node, pf: ParsedFile) -> list[Text]:
        values: list[Text] = []
        for element in named_children(node):
            if element.type == "comment":
                continue
            span = SourceSpan(pf.display, pf.node_line(element))
            for field in self.expander.fields(pf, element):
                values.append(field.text.stamped(span))
            self.budget.check_array(len(values), span.file, span.line)
        return values

    def _assoc_literal(self, node: Node, pf: ParsedFile) -> bool:
        elements = [e for e in named_children(node) if e.type != "comment"]
        return bool(elements) and all(
            pf.text(e).startswith("[") and "]=" in pf.text(e) for e in elements
        )

    def _assoc_assign(
        self, name: str, node: Node, pf: ParsedFile, span: SourceSpan, append: bool
    ) -> None:
        old = self.st.lookup(name)
        items: dict[str, Text] = dict(old.assoc) if append and old and old.assoc else {}
        for element in named_children(node):
            if element.type == "comment":
                continue
            text = pf.data[element.start_byte : element.end_byte]
            close = text.find(b"]=")
            if not text.startswith(b"[") or close == -1:
                continue
            key = join_pieces(
                self.expander.scan(pf, element.start_byte + 1, element.start_byte + close)
            ).s
            value = join_pieces(
                self.expander.scan(pf, element.start_byte + close + 2, element.end_byte)
            )
            items[key] = value
        exported = old is not None and old.exported
        self.st.store(name, Var(assoc=tuple(items.items()), exported=exported))

    def exec_variable_assignment(self, node: Node, pf: ParsedFile) -> None:
        self.exec_assignment(node, pf)

    def exec_variable_assignments(self, node: Node, pf: ParsedFile) -> None:
        for child in named_children(node):
            if child.type == "variable_assignment":
                self.exec_assignment(child, pf)

    def exec_declaration(self, node: Node, pf: ParsedFile) -> None:
        keyword = first_token(node)
        span = SourceSpan(pf.display, pf.node_line(node))
        options = [pf.text(c) for c in named_children(node) if pf.text(c).startswith("-")]
        if keyword in ("declare", "typeset", "local", "export") and any(
            "p" in option for option in options
        ):
            self._declare_print(node, pf, span)
            return
        flags = ""
        unexport = False
        in_function = len(self.st.frames) > 1
        for child in named_children(node):
            if child.type in ("word", "string", "raw_string", "concatenation") and pf.text(
                child
            ).startswith(("-", "+")):
                text = self.expander.string(pf, child).s
                if text.startswith("+"):
                    unexport = unexport or "x" in text
                else:
                    flags += text[1:]
                continue
            local = keyword == "local" or (
                keyword in ("declare", "typeset") and in_function and "g" not in flags
            )
            export = keyword == "export" or "x" in flags
            if child.type == "variable_assignment":
                self.exec_assignment(child, pf, local=local)
                name_node = child.child_by_field_name("name")
                name = pf.text(name_node) if name_node is not None else ""
                if name_node is not None and name_node.type == "subscript":
                    base = name_node.child_by_field_name("name")
                    name = pf.text(base) if base is not None else name
                self._mark(name, export, unexport, flags, local=False)
            elif child.type in ("variable_name", "word", "string", "raw_string", "concatenation"):
                word = (
                    self.expander.string(pf, child)
                    if child.type != "variable_name"
                    else Text.lit(pf.text(child))
                )
                if "=" in word.s and child.type != "variable_name":
                    name, _, _ = word.s.partition("=")
                    value = word.slice(len(name) + 1)
                    if local:
                        self.st.declare_local(name, Var())
                    self.set_var(name, value, span)
                    self._mark(name, export, unexport, flags, local=False)
                    continue
                name = word.s
                if keyword == "export" and "f" in flags:
                    continue
                if local and self.st.frames[-1].get(name) is None:
                    self.st.declare_local(
                        name,
                        Var(items=() if "a" in flags else None, assoc=() if "A" in flags else None),
                    )
                elif "a" in flags and self.st.lookup(name) is None:
                    self.st.store(name, Var(items=()))
                elif "A" in flags and self.st.lookup(name) is None:
                    self.st.store(name, Var(assoc=()))
                self._mark(name, export, unexport, flags, local=local)
        self.st.status = 0

    def _declare_print(self, node: Node, pf: ParsedFile, span: SourceSpan) -> None:
        """``declare -p NAME…``: status says whether every name is set (a common test)."""
        names = [
            pf.text(c) if c.type == "variable_name" else self.expander.string(pf, c).s
            for c in named_children(node)
            if not pf.text(c).startswith("-")
        ]
        status: int | None = 0
        lines: list[Text] = []
        for name in names:
            var = self.st.lookup(name)
            if var is None or (var.scalar is None and not var.is_array):
                if var is not None and var.maybe is not None:
                    status = None
                    continue
                status = 1 if status is not None else None
                continue
            value = var.first()
            if not value.known or var.maybe is not None:
                status = None
            flag = "-x" if var.exported else "--"
            lines.append(Text.lit(f"declare {flag} {name}=") + value + Text.lit("\n"))
        if self.st.out is not None:
            self.st.out.chunks.extend(lines)
        self.st.status = status

    def _mark(self, name: str, export: bool, unexport: bool, flags: str, *, local: bool) -> None:
        if not name:
            return
        var = self.st.lookup(name)
        if "A" in flags and var is not None and var.assoc is None and not var.items:
            var = Var(assoc=(), exported=var.exported)
            self.st.store(name, var)
        if not (export or unexport):
            return
        if var is None:
            var = Var()
        flag = export and not unexport
        updated = Var(var.scalar, var.items, var.assoc, flag, var.maybe)
        if local:
            self.st.declare_local(name, updated)
        else:
            self.st.store(name, updated)
        if flag:
            self.st.export_order.setdefault(name, None)

    def exec_unset(self, node: Node, pf: ParsedFile) -> None:
        functions = False
        for child in named_children(node):
            text = (
                self.expander.string(pf, child).s
                if child.type != "variable_name"
                else pf.text(child)
            )
            if text == "-f":
                functions = True
                continue
            if text.startswith("-"):
                continue
            if functions:
                self.st.functions.pop(text, None)
                continue
            match = re.fullmatch(r"([A-Za-z_]\w*)\[(.*)\]", text)
            if match:
                var = self.st.lookup(match.group(1))
                if var is not None and var.items is not None:
                    span = SourceSpan(pf.display, pf.node_line(node))
                    position = self._index(match.group(2), span)
                    items = tuple((i, v) for i, v in var.items if i != position)
                    self.st.store(match.group(1), Var(items=items, exported=var.exported))
                continue
            self.st.unset(text)
        self.st.status = 0

    # redirections -----------------------------------------------------------------------------

    def with_redirects(
        self, redirects: list[Node], pf: ParsedFile, run: Callable[[], None]
    ) -> None:
        st = self.st
        saved_out, saved_in = st.out, st.stdin
        writes: list[tuple[str, Capture, bool]] = []
        for redirect in redirects:
            span = SourceSpan(pf.display, pf.node_line(redirect))
            if redirect.type == "heredoc_redirect":
                st.stdin = self.heredoc_text(redirect, pf)
                continue
            if redirect.type == "herestring_redirect":
                word = next((c for c in named_children(redirect)), None)
                st.stdin = (
                    self.expander.string(pf, word) if word is not None else EMPTY
                ) + Text.lit("\n")
                continue
            descriptor = None
            operator = ""
            destination: Node | None = None
            for child in redirect.children:
                if child.type == "file_descriptor":
                    descriptor = pf.text(child)
                elif not child.is_named:
                    operator = child.type
                elif destination is None:
                    destination = child
            if destination is None:
                continue
            if operator in ("<", "<&") and descriptor in (None, "0"):
                if destination.type == "process_substitution" and pf.text(destination)[:2] == "<(":
                    st.stdin = self.process_output(destination, pf)  # `< <(cmd)`: its output
                    continue
                target = self.expander.string(pf, destination)
                st.stdin = self.read_file(target, span)
                continue
            to_stdout = descriptor in (None, "1") or operator.startswith("&")
            if not to_stdout:
                continue
            target_text = pf.text(destination)
            if operator in (">&", "<&") and target_text in ("1", "2", "-"):
                if target_text == "2":
                    st.out = Capture()  # stdout into stderr: not captured
                continue
            target_path = self.expander.string(pf, destination)
            capture = Capture()
            st.out = capture
            if target_path.known and target_path.s != "/dev/null":
                writes.append((target_path.s, capture, operator in (">>", "&>>")))
        try:
            run()
        finally:
            st = self.st
            st.out, st.stdin = saved_out, saved_in
            for path, capture, append in writes:
                self.write_file(path, capture.text(), append=append)

    def heredoc_text(self, node: Node, pf: ParsedFile) -> Text:
        start_node = body = end_node = None
        strip = False
        for child in node.children:
            if child.type == "heredoc_start":
                start_node = child
            elif child.type == "heredoc_body":
                body = child
            elif child.type == "heredoc_end":
                end_node = child
            elif child.type == "<<-":
                strip = True
        if body is None:
            return EMPTY
        data = pf.data
        begin = data.rfind(b"\n", 0, body.start_byte) + 1
        stop = body.end_byte
        if end_node is not None:
            stop = data.rfind(b"\n", 0, end_node.start_byte) + 1
        stop = max(stop, begin)
        delimiter = pf.text(start_node) if start_node is not None else ""
        quoted = any(c in delimiter for c in "'\"\\")
        if quoted:
            text = pf.slice(begin, stop)
            if strip:
                text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
            return Text.lit(text, SourceSpan(pf.display, pf.line_of(begin)))
        if not strip:
            return self.expander.heredoc(pf, begin, stop)
        parts: list[Text] = []
        pos = begin
        while pos < stop:
            line_end = data.find(b"\n", pos, stop)
            line_end = stop if line_end == -1 else line_end
            first = pos
            while first < line_end and data[first] == 0x09:
                first += 1
            parts.append(self.expander.heredoc(pf, first, line_end))
            if line_end < stop:
                parts.append(Text.lit("\n"))
            pos = line_end + 1
        return Text.join(parts)

    def exec_redirected_statement(self, node: Node, pf: ParsedFile) -> None:
        body = node.child_by_field_name("body")
        redirects = [
            c
            for c in named_children(node)
            if c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect")
        ]
        if body is None:
            others = [c for c in named_children(node) if c not in redirects]
            body = others[0] if others else None
        if body is None:
            self.with_redirects(redirects, pf, lambda: None)
            return
        target = body
        self.with_redirects(redirects, pf, lambda: self.exec_stmt(target, pf))

    # files (in memory only) -------------------------------------------------------------------

    def repo_path(self, path: Text) -> str | None:
        """Repository-relative path for ``path`` if it lies inside the repository."""
        if not path.known or not path.s or "\x00" in path.s:
            return None
        raw = path.s
        if raw.startswith("/"):
            if self.workdir is None or not (raw + "/").startswith(self.workdir + "/"):
                return None
            raw = raw[len(self.workdir) :].lstrip("/")
        elif self.st.cwd is None:
            return None
        else:
            raw = posixpath.join(self.st.cwd, raw)
        normal = posixpath.normpath(raw)
        if normal.startswith("..") or normal.startswith("/"):
            return None
        return "" if normal == "." else normal

    def fs_key(self, path: str) -> str:
        if path.startswith("/"):
            return posixpath.normpath(path)
        base = self.st.cwd if self.st.cwd is not None else "<cwd>"
        return posixpath.normpath(posixpath.join(base, path))

    def write_file(self, path: str, content: Text, *, append: bool) -> None:
        key = self.fs_key(path)
        if append and key in self.st.fs.files:
            content = self.st.fs.files[key] + content
        self.budget.check_string(len(content.s), self.script, None)
        self.st.fs.files[key] = content
        self.st.fs.dirs.add(posixpath.dirname(key))

    def read_file(self, path: Text, span: SourceSpan) -> Text | None:
        """Contents of a file the script wrote, or of a repository file; None when unknown."""
        if not path.known:
            return opaque(
                "file",
                "command-output",
                self.unresolved(span, "file contents", "the file name is not known"),
            )
        key = self.fs_key(path.s)
        if key in self.st.fs.files:
            return self.st.fs.files[key]
        repo = self.repo_path(path)
        if repo is not None and is_symlink(self.source, repo):
            item = self.unresolved(span, f"contents of {path.s}", "symlink not followed")
            return opaque("file", "command-output", item)
        if repo is not None and self.source.exists(repo):
            try:
                data = self.source.read_bytes(repo)
            except (InputError, OSError) as err:
                reason = getattr(err, "reason", None) or "file could not be read"
                item = self.unresolved(span, f"contents of {path.s}", f"not read: {reason}")
                return opaque("file", "command-output", item)
            return Text.lit(data.decode("utf-8", "replace"))
        reason = "file outside the repository, not read"
        if repo is not None:
            reason = "file does not exist in the repository"
        item = self.unresolved(span, f"contents of {path.s}", reason)
        return opaque("file", "command-output", item)

    def file_test(self, op: str, path: Text, span: SourceSpan) -> bool | None:
        if not path.known:
            return None
        key = self.fs_key(path.s)
        fs = self.st.fs
        if op in ("-f", "-e", "-s", "-r") and key in fs.files:
            return True if op != "-s" else bool(fs.files[key].s)
        if op in ("-d", "-e") and key in fs.dirs:
            return True
        repo = self.repo_path(path)
        if repo == "":
            return op in ("-d", "-e", "-r")  # the repository root
        if repo is not None:
            if op in ("-f", "-e", "-r", "-s") and self.source.exists(repo):
                return True
            if op in ("-d", "-e") and any(True for _ in self.source.iter_files(repo)):
                return True
            if op in ("-f", "-d", "-e"):
                return False
        return None

    # compound commands ------------------------------------------------------------------------

    def in_subshell(self, run: Callable[[], None], out: Capture | None = None) -> int | None:
        parent = self.st
        child = parent.clone()
        if out is not None:
            child.out = out
        saved_zero = self.zero
        self.st = child
        try:
            try:
                with self._barrier():
                    run()
                status = self.st.status
            except ExitSignal as signal:
                status = signal.code
            except (ReturnSignal, LoopSignal):
                status = self.st.status
        finally:
            self.st = parent
            self.zero = saved_zero
        return status

    def exec_subshell(self, node: Node, pf: ParsedFile) -> None:
        status = self.in_subshell(lambda: self.exec_block(node, pf))
        self.st.status = status

    def exec_compound(self, node: Node, pf: ParsedFile) -> None:
        if first_token(node) == "((":
            span = SourceSpan(pf.display, pf.node_line(node))
            inner_start = node.children[0].end_byte
            inner_end = (
                node.children[-1].start_byte if node.children[-1].type == "))" else node.end_byte
            )
            value = self.arithmetic(
                join_pieces(self._arith_pieces(pf, inner_start, inner_end)), span
            )
            self.st.status = None if not value.known else (1 if value.s == "0" else 0)
            return
        self.exec_block(node, pf)

    def _arith_pieces(self, pf: ParsedFile, start: int, end: int) -> list[Piece]:
        return self.expander.heredoc_pieces(pf, start, end)

    def run_condition(self, nodes: Sequence[Node], pf: ParsedFile) -> int | None:
        self.st.condition += 1
        try:
            self.st.status = 0
            self.exec_nodes(nodes, pf)
            return self.st.status
        finally:
            self.st.condition -= 1

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
        :func:`bot.shell.paths.evaluate_paths` runs the script again for the others); outside
        it, values that differ become named unknowns.
        """
        outcomes = self._explore(branches, span)
        if self._diverge(outcomes):
            if self.path_mode and not self.exploring and (span.file, span.line) in self.split_at:
                self._decide(branches, outcomes, why, span, labels)
                return
            if not self.exploring:
                self.joins.setdefault((span.file, span.line), (why, _decides(outcomes, self.st)))
        self._join(outcomes, why, span)

    def _explore(self, branches: list[Callable[[], None]], span: SourceSpan) -> list[_Outcome]:
        base = self.st
        outcomes: list[_Outcome] = []
        for branch in branches:
            self.st = base.clone()
            self.st.fs = FileSystem(dict(base.fs.files), set(base.fs.dirs))
            capture = Capture() if base.out is not None else None
            self.st.out = capture
            control, assumptions = dict(self.control), dict(self.assumptions)
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
                    self.st,
                    signal,
                    capture,
                    {k: None for k in self.control if k not in control},
                    {k: v for k, v in self.assumptions.items() if k not in assumptions},
                    landed,
                )
            )
            self.control, self.assumptions = control, assumptions
        self.st = base
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
        self.trail.append(Choice(span, why, tuple(names), index, _decides(outcomes, self.st)))
        branches[index]()

    def _join(self, outcomes: list[_Outcome], why: str, span: SourceSpan) -> None:
        base = self.st
        normal = [o for o in outcomes if o.signal is None]
        exits = [o.signal for o in outcomes if isinstance(o.signal, ExitSignal)]
        jumps = [o for o in outcomes if isinstance(o.signal, (ReturnSignal, LoopSignal))]
        launches = [o for o in outcomes if isinstance(o.signal, LaunchSignal)]
        for outcome in outcomes:
            self.assumptions.update(outcome.assumptions)
            if not isinstance(outcome.signal, ExitSignal):
                self.control.update(outcome.control)  # an exiting side reaches no launch
                for into, states in outcome.landed:
                    into.extend(states)
        if launches:
            self.control[self.unresolved(span, "launch", f"reached only on one side of {why}")] = (
                None
            )
            assert launches[0].signal is not None
            raise launches[0].signal
        if not normal and not jumps:
            assert exits
            raise exits[0]
        for gone in exits:
            self.assume(
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
            self.st = merge(states, base, why, span.file, span.line)
            self._join_files([o.st.fs for o in jumps], base.fs, why, span)
            self.st.fs = base.fs
            assert jumps[0].signal is not None
            raise jumps[0].signal
        if jumps:
            self.control[
                self.unresolved(span, "control flow", f"return/break depends on {why}")
            ] = None
        self.st = merge([o.st for o in normal], base, why, span.file, span.line)
        self._join_files([o.st.fs for o in normal], base.fs, why, span)
        self.st.fs = base.fs
        outputs = [o.capture for o in normal if o.capture is not None]
        if base.out is not None and outputs:
            texts = [c.text() for c in outputs]
            if all(t == texts[0] for t in texts):
                base.out.chunks.append(texts[0])
            else:
                item = self.unresolved(span, "output", f"differs between branches of {why}")
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

    def _landed(self, pending: list[State], why: str, span: SourceSpan) -> None:
        """Join the states of branches that left early with the one that fell through."""
        if pending:
            merged = merge([self.st, *pending], self.st, why, span.file, span.line)
            merged.out = self.st.out
            self.st = merged

    @contextmanager
    def _barrier(self) -> Iterator[None]:
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
                    item = self.unresolved(
                        span, f"contents of {key}", f"differ between branches of {why}"
                    )
                    text = opaque("file", "undecidable-branch", item)
                files[key] = text
            into.dirs |= fs.dirs
        into.files.clear()
        into.files.update(files)

    def exec_if(self, node: Node, pf: ParsedFile) -> None:
        clauses: list[tuple[list[Node] | None, list[Node]]] = []
        condition: list[Node] = []
        body: list[Node] = []
        phase = "cond"
        for child in node.children:
            if child.type == "if":
                continue
            if child.type == "then":
                phase = "body"
                continue
            if child.type == "fi":
                continue
            if child.type in ("elif_clause", "else_clause"):
                continue
            if phase == "cond":
                condition.append(child)
            else:
                body.append(child)
        clauses.append((condition, body))
        for child in named_children(node):
            if child.type == "elif_clause":
                cond: list[Node] = []
                part: list[Node] = []
                phase = "cond"
                for grand in child.children:
                    if grand.type in ("elif",):
                        continue
                    if grand.type == "then":
                        phase = "body"
                        continue
                    (cond if phase == "cond" else part).append(grand)
                clauses.append((cond, part))
            elif child.type == "else_clause":
                clauses.append((None, [g for g in child.children if g.type != "else"]))
        self._run_clauses(clauses, pf, SourceSpan(pf.display, pf.node_line(node)))

    def _run_clauses(
        self, clauses: list[tuple[list[Node] | None, list[Node]]], pf: ParsedFile, span: SourceSpan
    ) -> None:
        if not clauses:
            self.st.status = 0
            return
        condition, body = clauses[0]
        if condition is None:
            self.st.status = 0
            self.exec_nodes(body, pf)
            return
        status = self.run_condition(condition, pf)
        if status is None:
            text = _nodes_text(condition, pf)
            why = f"the condition `{_short(text)}` ({span}){self._unknown_inputs(text)}"
            rest = clauses[1:]
            self.fork(
                [
                    lambda: self._then(body, pf),
                    lambda: self._run_clauses(rest, pf, span),
                ],
                why,
                span,
                ("holds", "does not hold"),
            )
            return
        if status == 0:
            self._then(body, pf)
        else:
            self._run_clauses(clauses[1:], pf, span)

    def _unknown_inputs(self, text: str) -> str:
        """``, which reads $v: output of `probe` (x.sh:3)`` for the unknown variables a
        condition reads, so an undecidable branch says what it would take to decide it."""
        notes: list[str] = []
        for name in dict.fromkeys(_VARIABLE_REFERENCE.findall(text)):
            var = self.st.lookup(name)
            value = var.scalar if var is not None else None
            if value is None or value.known:
                continue
            origins = sorted(
                {
                    f"{t.what} ({t.file}:{t.line})" if t.line else f"{t.what} ({t.file})"
                    for t in value.taints
                }
            )
            if origins:
                notes.append(f"${name}: {'; '.join(origins)}")
        reads = f", which reads {'; '.join(notes)}" if notes else ""
        # A condition that runs a helper the library lacks (`if profiling_enabled; then`)
        # is undecidable because of that helper: say so.
        runs = [
            why
            for word, why in self.unknown_commands.items()
            if re.search(rf"(?<![\w$-]){re.escape(word)}(?![\w-])", text)
        ]
        return reads + (f", which runs an unknown command: {'; '.join(runs)}" if runs else "")

    def _then(self, body: list[Node], pf: ParsedFile) -> None:
        self.st.status = 0
        self.exec_nodes(body, pf)

    def exec_list(self, node: Node, pf: ParsedFile) -> None:
        children = node.children
        left = children[0]
        op = children[1].type if len(children) > 1 else "&&"
        right = children[2] if len(children) > 2 else None
        self.st.condition += 1
        try:
            self.exec_stmt(left, pf)
        finally:
            self.st.condition -= 1
        status = self.st.status
        if right is None:
            return
        span = SourceSpan(pf.display, pf.node_line(node))
        run_right = (op == "&&" and status == 0) or (op == "||" and status not in (0, None))
        if status is None:
            why = f"the status of `{_short(pf.text(left))}` ({span})"
            target = right

            def skip() -> None:
                self.st.status = None

            labels = ("is 0", "is not 0") if op == "&&" else ("is not 0", "is 0")
            self.fork([lambda: self.exec_stmt(target, pf), skip], why, span, labels)
            return
        if run_right:
            self.exec_stmt(right, pf)

    def exec_negated(self, node: Node, pf: ParsedFile) -> None:
        inner = named_children(node)
        self.st.condition += 1
        try:
            for child in inner:
                self.exec_stmt(child, pf)
        finally:
            self.st.condition -= 1
        status = self.st.status
        self.st.status = None if status is None else int(status == 0)

    def exec_pipeline(self, node: Node, pf: ParsedFile) -> None:
        stages = [c for c in named_children(node) if c.type != "comment"]
        stdin = self.st.stdin
        status: int | None = 0
        for index, stage in enumerate(stages):
            last = index == len(stages) - 1
            capture = None if last else Capture()
            parent = self.st
            child = parent.clone()
            child.stdin = stdin
            if capture is not None:
                child.out = capture
            self.st = child
            try:
                try:
                    with self._barrier():
                        self.exec_stmt(stage, pf)
                    status = self.st.status
                except ExitSignal as signal:
                    status = signal.code
                except (ReturnSignal, LoopSignal):
                    status = self.st.status
            finally:
                self.st = parent
            stdin = capture.text() if capture is not None else None
        self.st.status = status

    def exec_test(self, node: Node, pf: ParsedFile) -> None:
        result = evaluate_test(self, node, pf)
        self.st.status = (
            None if result is None else (0 if result is True else (2 if result == 2 else 1))
        )
        self._errexit(SourceSpan(pf.display, pf.node_line(node)))

    def exec_case(self, node: Node, pf: ParsedFile) -> None:
        span = SourceSpan(pf.display, pf.node_line(node))
        value = node.child_by_field_name("value")
        subject = self.expander.string(pf, value) if value is not None else EMPTY
        items = [c for c in named_children(node) if c.type == "case_item"]
        self._case_from(items, 0, subject, pf, span, fallthrough=False)

    def _case_item_parts(self, item: Node) -> tuple[list[Node], list[Node], str]:
        patterns_: list[Node] = []
        body: list[Node] = []
        terminator = ";;"
        seen_paren = False
        for child in item.children:
            if not seen_paren:
                if child.type == ")":
                    seen_paren = True
                elif child.is_named and child.type != "comment":
                    patterns_.append(child)
                continue
            if child.type in (";;", ";&", ";;&"):
                terminator = child.type
            else:
                body.append(child)
        return patterns_, body, terminator

    def _case_from(
        self,
        items: list[Node],
        index: int,
        subject: Text,
        pf: ParsedFile,
        span: SourceSpan,
        *,
        fallthrough: bool,
    ) -> None:
        while index < len(items):
            pats, _, _ = self._case_item_parts(items[index])
            matched: bool | None = fallthrough
            if not fallthrough:
                for pattern_node in pats:
                    pattern, taints = self.expander.pattern(pf, pattern_node)
                    if taints or not subject.known:
                        matched = None if pattern != "*" else True
                        if matched:
                            break
                        continue
                    if patterns.matches(pattern, subject.s):
                        matched = True
                        break
            if matched is None:
                why = f"`case {_short(subject.s)}` ({span})"
                self.fork(
                    [
                        partial(self._case_body, items, index, subject, pf, span),
                        partial(
                            self._case_from, items, index + 1, subject, pf, span, fallthrough=False
                        ),
                    ],
                    why,
                    span,
                    (
                        f"matches the pattern at line {pf.node_line(items[index])}",
                        f"does not match the pattern at line {pf.node_line(items[index])}",
                    ),
                )
                return
            if matched:
                self._case_body(items, index, subject, pf, span)
                return
            index += 1
        self.st.status = 0

    def _case_body(
        self, items: list[Node], index: int, subject: Text, pf: ParsedFile, span: SourceSpan
    ) -> None:
        _, body, terminator = self._case_item_parts(items[index])
        self.st.status = 0
        self.exec_nodes(body, pf)
        if terminator == ";&":
            self._case_from(items, index + 1, subject, pf, span, fallthrough=True)
        elif terminator == ";;&":
            self._case_from(items, index + 1, subject, pf, span, fallthrough=False)

    # loops ------------------------------------------------------------------------------------

    @contextmanager
    def _loop(self, span: SourceSpan) -> Iterator[None]:
        """Breaks on run-time conditions inside the loop land at its end, joined there."""
        pending: list[State] = []
        self.breaks.append(pending)
        try:
            yield
        finally:
            self.breaks.pop()
        status = self.st.status
        self._landed(pending, f"a break out of the loop at {span}", span)
        self.st.status = status

    def _loop_body(self, body: Node | None, pf: ParsedFile) -> str | None:
        """Run one iteration; returns 'break' or None (continue/normal)."""
        if body is None:
            return None
        try:
            self.exec_block(body, pf)
        except LoopSignal as signal:
            if signal.levels > 1:
                raise LoopSignal(signal.kind, signal.levels - 1) from None
            return "break" if signal.kind == "break" else None
        return None

    def exec_for(self, node: Node, pf: ParsedFile) -> None:
        span = SourceSpan(pf.display, pf.node_line(node))
        variable = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        name = pf.text(variable) if variable is not None else ""
        has_in = any(c.type == "in" for c in node.children)
        values: list[Text] = []
        if has_in:
            for child in node.children_by_field_name("value"):
                values.extend(f.text for f in self.expander.fields(pf, child))
                self.budget.check_array(len(values), span.file, span.line)
        else:
            values = list(self.st.positional[-1])
        self.st.status = 0
        with self._loop(span):
            for count, value in enumerate(values, 1):
                self.budget.check_iterations(count, span.file, span.line)
                self.set_var(name, value, span)
                if self._loop_body(body, pf) == "break":
                    break

    def exec_c_for(self, node: Node, pf: ParsedFile) -> None:
        span = SourceSpan(pf.display, pf.node_line(node))
        body = node.child_by_field_name("body")
        parts: list[tuple[int, int]] = []
        open_node = next((c for c in node.children if c.type == "(("), None)
        close_node = next((c for c in node.children if c.type == "))"), None)
        if open_node is None or close_node is None:
            self.control[self.unresolved(span, "for ((…))", "loop header not understood")] = None
            return
        start = open_node.end_byte
        for child in node.children:
            if child.type == ";" and open_node.end_byte <= child.start_byte < close_node.start_byte:
                parts.append((start, child.start_byte))
                start = child.end_byte
        parts.append((start, close_node.start_byte))
        while len(parts) < 3:
            parts.append((close_node.start_byte, close_node.start_byte))
        init, cond, update = parts[:3]

        def arith(region: tuple[int, int]) -> Text:
            return self.arithmetic(join_pieces(self._arith_pieces(pf, *region)), span)

        arith(init)
        count = 0
        while True:
            count += 1
            self.budget.check_iterations(count, span.file, span.line)
            # an empty condition is true: `for ((i=0; ; i++))` runs until something stops it
            test = Text.lit("1") if not pf.slice(*cond).strip() else arith(cond)
            if not test.known:
                self._unknown_loop(node, pf, span, test.taints)
                return
            if test.s == "0":
                break
            if self._loop_body(body, pf) == "break":
                break
            arith(update)
        self.st.status = 0

    def exec_while(self, node: Node, pf: ParsedFile) -> None:
        span = SourceSpan(pf.display, pf.node_line(node))
        until = first_token(node) == "until"
        body = node.child_by_field_name("body")
        condition = [c for c in node.children_by_field_name("condition")]
        if not condition:
            condition = [c for c in named_children(node) if c != body]
        count = 0
        with self._loop(span):
            while True:
                count += 1
                self.budget.check_iterations(count, span.file, span.line)
                status = self.run_condition(condition, pf)
                if status is None:
                    self._unknown_loop(node, pf, span, EMPTY_TAINTS)
                    return
                if (status != 0) != until:
                    break
                if self._loop_body(body, pf) == "break":
                    break
        self.st.status = 0

    def _unknown_loop(
        self, node: Node, pf: ParsedFile, span: SourceSpan, taints: frozenset[Unresolved]
    ) -> None:
        """The iteration count is undecidable: what the loop assigns becomes unknown."""
        why = f"assigned in the loop at {span}, whose iteration count cannot be decided"
        for name in sorted(assigned_names(node, pf)):
            item = Unresolved(f"${name}", why, span.file, span.line)
            old = self.st.lookup(name)
            exported = old is not None and old.exported
            self.st.store(
                name,
                Var(scalar=opaque(name, "derived", item).with_taints(taints), exported=exported),
            )
        self.st.status = 0

    # builtins needing state -------------------------------------------------------------------

    def source_file(self, argv: list[Text], span: SourceSpan) -> None:
        if len(argv) < 2:
            self.st.status = 2
            return
        target = argv[1]
        path = self.repo_path(target)
        if path is not None and not self.source.exists(path):
            known = self.handlers.library_of(posixpath.basename(path))
            fallback = known.fallback if known is not None else None
            if known is not None and fallback is not None and self.source.exists(fallback):
                self.assume(
                    span,
                    "source",
                    f"source {target.s}",
                    f"no such file; {known.label} at {fallback} was used "
                    "(as the job environment provides it)",
                )
                path = fallback
        if path is None or not self.source.exists(path):
            why = (
                "the path is not statically known"
                if not target.known
                else "file not found in the repository (or outside it)"
            )
            self.control[self.unresolved(span, f"source {target.s}", why)] = None
            self.st.status = 1
            return
        pf = self.parser.parse_file(self.source, path)
        if path not in self.sourced:
            self.sourced.append(path)
        library = self.handlers.library_of(posixpath.basename(path))
        st = self.st
        if len(argv) > 2:
            st.positional.append(tuple(argv[2:]))
        st.sources.insert(0, target.s)
        if library is not None:
            self.libraries.append(library.name)
        self.budget.enter(span.file, span.line)
        try:
            with self._barrier():  # a `return` here leaves the file, not the caller
                self.exec_block(pf.root, pf)
        except ReturnSignal as signal:
            self.st.status = signal.status
        finally:
            self.budget.leave()
            if library is not None:
                self.libraries.pop()
            self.st.sources.pop(0)
            if len(argv) > 2:
                self.st.positional.pop()

    def write_out(self, text: Text, span: SourceSpan) -> None:
        if self.st.out is not None:
            self.st.out.chunks.append(text)
            self.budget.check_string(
                sum(len(c.s) for c in self.st.out.chunks), span.file, span.line
            )
        message = text.s.strip()
        if message:
            self.last_message = (message, span)

    _handlers: ClassVar[dict[str, Callable[[Evaluator, Node, ParsedFile], None]]] = {}


def _named_after(name: str, value: Text) -> Text:
    """``X=$(opaque command)``: call the placeholder after the variable it lands in."""
    match = PLACEHOLDER_RE.fullmatch(value.s)
    if match is None or match.group(2) != "command-output" or len(value.runs) != 1:
        return value
    return Text.lit(placeholder(name, "command-output"), value.runs[0].origin, value.taints)


def _item_key(item: Unresolved) -> tuple[str, int, str]:
    return (item.file, item.line or 0, item.what)


# Regions the evaluator reads from source text itself, where tree-sitter-bash's grammar gaps
# (e.g. `$((10#$X))`) are not errors bash would see.
_TEXT_EVALUATED = frozenset({"arithmetic_expansion", "expansion", "c_style_for_statement", "regex"})


def _syntax_error(node: Node) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            return True
        if not current.has_error or current.type in _TEXT_EVALUATED:
            continue
        if (
            current.type == "compound_statement"
            and current.children[:1]
            and (current.children[0].type == "((")
        ):
            continue
        stack.extend(current.children)
    return False


def _newline_between(pf: ParsedFile, before: Node, after: Node) -> bool:
    """An unescaped newline separates two nodes (so they are two commands to bash)."""
    gap = pf.data[before.end_byte : after.start_byte]
    return b"\n" in gap.replace(b"\\\n", b"")


_VARIABLE_REFERENCE = re.compile(r"\$\{?([A-Za-z_]\w*)")


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _nodes_text(nodes: Sequence[Node], pf: ParsedFile) -> str:
    return " ".join(pf.text(n) for n in nodes if n.is_named)


Evaluator._handlers = {
    "command": Evaluator.exec_command,
    "variable_assignment": Evaluator.exec_variable_assignment,
    "variable_assignments": Evaluator.exec_variable_assignments,
    "declaration_command": Evaluator.exec_declaration,
    "unset_command": Evaluator.exec_unset,
    "redirected_statement": Evaluator.exec_redirected_statement,
    "list": Evaluator.exec_list,
    "pipeline": Evaluator.exec_pipeline,
    "negated_command": Evaluator.exec_negated,
    "if_statement": Evaluator.exec_if,
    "while_statement": Evaluator.exec_while,
    "for_statement": Evaluator.exec_for,
    "c_style_for_statement": Evaluator.exec_c_for,
    "case_statement": Evaluator.exec_case,
    "function_definition": Evaluator.exec_function_definition,
    "subshell": Evaluator.exec_subshell,
    "compound_statement": Evaluator.exec_compound,
    "test_command": Evaluator.exec_test,
    "comment": lambda self, node, pf: None,
}


__all__ = ["Evaluator", "ExtractionError"]


def _read_only_redirect(body: Sequence[Node], pf: ParsedFile) -> Node | None:
    """The file word of ``$(< file)`` (a substitution that is one input redirection)."""
    if len(body) != 1 or body[0].type != "file_redirect":
        return None
    redirect = body[0]
    operators = [c.type for c in redirect.children if not c.is_named]
    targets = [c for c in redirect.children if c.is_named and c.type != "file_descriptor"]
    if operators != ["<"] or len(targets) != 1 or redirect.child_by_field_name("descriptor"):
        return None
    return targets[0]


def is_symlink(source: FileSource, path: str) -> bool:
    """Whether ``path`` is a symbolic link in ``source`` (never followed: reported as such)."""
    probe = getattr(source, "is_symlink", None)
    return bool(probe(path)) if callable(probe) else False
