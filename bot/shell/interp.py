"""Partial evaluation of a bash script, statement by statement, without running anything.

The evaluator walks the tree-sitter syntax tree and keeps a :class:`~bot.shell.state.State`
(variables, functions, positional parameters, files the script "wrote" in memory). It runs
nothing: no process, no file write, no read outside the repository source it is given. What it
cannot know becomes a named placeholder that carries an :class:`Unresolved` item.

:class:`Evaluator` owns one evaluation's state and statements; its collaborators do the rest
(each sees it through :class:`bot.shell.host.Host`): :mod:`~bot.shell.fork` (conditions known
only at run time: explored on both sides and joined, values that differ becoming unknown, or
decided in path-sensitive mode), :mod:`~bot.shell.vfs` (the files, behind
:class:`bot.shell.protocols.Files`), :mod:`~bot.shell.declare` (variables),
:mod:`~bot.shell.redirects`, :mod:`~bot.shell.control` (lists, pipelines, ``if``, ``case``,
loops) and :mod:`~bot.shell.commands` (commands, functions, sourcing). The first argv the
embedding's launch detector accepts (:class:`bot.shell.handlers.Handlers`) stops the
evaluation and becomes the result.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import ClassVar

from tree_sitter import Node

from bot.placeholders import placeholder
from bot.shell import arith, textutils
from bot.shell.budget import Budget
from bot.shell.commands import Commands
from bot.shell.control import ControlFlow
from bot.shell.declare import Declarations
from bot.shell.errors import BudgetExceeded, ExtractionError
from bot.shell.fields import DEFAULT_IFS, Field, Piece, join_pieces
from bot.shell.fork import Explorer
from bot.shell.handlers import Handlers
from bot.shell.parse import ParsedFile, ScriptParser, first_token, named_children, short_text
from bot.shell.redirects import Redirections
from bot.shell.result import ScriptResult, SourceSpan, Status, Unresolved, item_key, mentions
from bot.shell.signals import ExitSignal, Launch, LaunchSignal, LoopSignal, ReturnSignal
from bot.shell.state import Capture, FileSystem, State, Var
from bot.shell.text import EMPTY, EMPTY_TAINTS, REASONS, Run, Text, opaque, taints_in_input
from bot.shell.usage import positions_read
from bot.shell.vfs import VirtualFiles
from bot.shell.words import Expander, ExpansionError, VarView
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
        # the collaborators: each holds this evaluator and reads the current state from it
        self.paths: Explorer = Explorer(self, plan)  # undecidable conditions: join or decide
        self.files: VirtualFiles = VirtualFiles(self, source, workdir)  # repository + writes
        self.vars: Declarations = Declarations(self)  # assignments, declare/local/export, unset
        self.redirects: Redirections = Redirections(self)
        self.flow: ControlFlow = ControlFlow(self)  # lists, pipelines, if/case, loops
        self.commands: Commands = Commands(self)  # commands, functions, sourcing, child scripts
        self.expander: Expander = Expander(self)  # word expansion, reading variables from here
        self.handlers = handlers or Handlers()
        self.parser = parser
        self.script = script
        self.job_env = dict(env)
        self.budget = budget or Budget(parser.limits)
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

    # the protocols' entry points (bot.shell.protocols), answered by the collaborators

    def set_var(self, name: str, value: Text, span: SourceSpan, *, export: bool = False) -> None:
        self.vars.set_var(name, value, span, export=export)

    def set_array(self, name: str, values: list[Text], span: SourceSpan, *, append: bool) -> None:
        self.vars.set_array(name, values, span, append=append)

    def source_file(self, argv: list[Text], span: SourceSpan) -> None:
        self.commands.source_file(argv, span)

    def opaque_command(self, argv: list[Text], span: SourceSpan, why: str) -> None:
        self.commands.opaque_command(argv, span, why)

    def _initial_state(self) -> State:
        self.input_vars: dict[str, Var] = {}  # as the job gave them (a launch compares them)
        for name, value in self.job_env.items():
            taints = taints_in_input(value, self.env_label)
            self.input_vars[name] = Var(scalar=Text.lit(value, None, taints), exported=True)
        return State(
            frames=[dict(self.input_vars)],
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

    def written_files(self) -> dict[str, str]:
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
            files=self.written_files(),
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
            for item in sorted(taints, key=item_key):
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
        return self.st.names()

    def home(self, span: SourceSpan) -> Text:
        var = self.st.lookup("HOME")
        if var is not None and var.scalar is not None:
            return var.scalar
        return opaque("HOME", "home", self.unresolved(span, "$HOME", REASONS["home"]))

    def pwd(self, span: SourceSpan) -> Text:
        var = self.st.lookup("PWD")
        if var is not None and var.scalar is not None and self.st.cwd == "":
            return var.scalar
        if self.files.workdir is not None and self.st.cwd is not None:
            return Text.lit(posixpath.join(self.files.workdir, self.st.cwd).rstrip("/") or "/")
        item = self.unresolved(span, "$PWD", REASONS["working-directory"])
        return opaque("PWD", "working-directory", item)

    def param(self, name: str, index: str | None, span: SourceSpan) -> VarView:
        st = self.st
        if textutils.is_integer(name):
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
            position = self.index(index, span)
            if position is None:
                item = self.unresolved(span, f"${{{name}[{index}]}}", "index is not known")
                return VarView([opaque(f"{name}[]", "derived", item)], True)
            if position < 0 and var.items is not None and var.items:
                position = var.items[-1][0] + 1 + position
            found = var.get(position)
        if found is None:
            return VarView([], False)
        return VarView([found.with_taints(maybe)], True)

    def index(self, index: str, span: SourceSpan) -> int | None:
        value = self.arithmetic(Text.lit(index), span)
        return int(value.s) if value.known else None

    def _dynamic(self, name: str, span: SourceSpan) -> Var | None:
        st = self.st
        if name == "LINENO":
            positions_read()
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
        self.vars.set_var(name, value, span)

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
                self.vars.set_var(name, text, span)
            else:
                self.vars.set_element(name, str(idx), text, span)

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
            text_out = (
                self.files.read_file(self.expander.string(target_pf, redirected), span) or EMPTY
            )
            self.last_subst_status = 0
        else:
            capture = Capture()
            status = self.paths.in_subshell(lambda: self.exec_nodes(body, target_pf), out=capture)
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
        self.paths.in_subshell(lambda: self.exec_nodes(named_children(node), pf), out=capture)
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
        self.paths.in_subshell(lambda: self.exec_stmt(node, pf))
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
                f"`{short_text(pf.text(node))}`",
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
                        span,
                        f"`{short_text(pf.text(node))}`",
                        "shell text that could not be parsed",
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

    def errexit(self, span: SourceSpan) -> None:
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
                    self.vars.exec_assignment(assignment, pf)
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
            self.redirects.with_redirects(
                redirects, pf, lambda: self._simple(node, assignments, words, pf)
            )
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
                self.vars.exec_assignment(assignment, pf)
            self.st.status = self.last_subst_status if self.last_subst_status is not None else 0
            return
        self.commands.run_command(fields, field_spans, prefix, span, pf)
        self.errexit(span)

    # functions --------------------------------------------------------------------------------

    # variables --------------------------------------------------------------------------------

    # redirections -----------------------------------------------------------------------------

    # files (in memory only) -------------------------------------------------------------------

    # compound commands ------------------------------------------------------------------------

    def exec_subshell(self, node: Node, pf: ParsedFile) -> None:
        status = self.paths.in_subshell(lambda: self.exec_block(node, pf))
        self.st.status = status

    def exec_compound(self, node: Node, pf: ParsedFile) -> None:
        if first_token(node) == "((":
            span = SourceSpan(pf.display, pf.node_line(node))
            inner_start = node.children[0].end_byte
            inner_end = (
                node.children[-1].start_byte if node.children[-1].type == "))" else node.end_byte
            )
            value = self.arithmetic(
                join_pieces(self.arith_pieces(pf, inner_start, inner_end)), span
            )
            self.st.status = None if not value.known else (1 if value.s == "0" else 0)
            return
        self.exec_block(node, pf)

    def arith_pieces(self, pf: ParsedFile, start: int, end: int) -> list[Piece]:
        return self.expander.heredoc_pieces(pf, start, end)

    def run_condition(self, nodes: Sequence[Node], pf: ParsedFile) -> int | None:
        self.st.condition += 1
        try:
            self.st.status = 0
            self.exec_nodes(nodes, pf)
            return self.st.status
        finally:
            self.st.condition -= 1

    # loops ------------------------------------------------------------------------------------

    # builtins needing state -------------------------------------------------------------------

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


Evaluator._handlers = {
    "command": Evaluator.exec_command,
    "variable_assignment": lambda ev, node, pf: ev.vars.exec_variable_assignment(node, pf),
    "variable_assignments": lambda ev, node, pf: ev.vars.exec_variable_assignments(node, pf),
    "declaration_command": lambda ev, node, pf: ev.vars.exec_declaration(node, pf),
    "unset_command": lambda ev, node, pf: ev.vars.exec_unset(node, pf),
    "redirected_statement": lambda ev, node, pf: ev.redirects.exec_redirected_statement(node, pf),
    "list": lambda ev, node, pf: ev.flow.exec_list(node, pf),
    "pipeline": lambda ev, node, pf: ev.flow.exec_pipeline(node, pf),
    "negated_command": lambda ev, node, pf: ev.flow.exec_negated(node, pf),
    "if_statement": lambda ev, node, pf: ev.flow.exec_if(node, pf),
    "while_statement": lambda ev, node, pf: ev.flow.exec_while(node, pf),
    "for_statement": lambda ev, node, pf: ev.flow.exec_for(node, pf),
    "c_style_for_statement": lambda ev, node, pf: ev.flow.exec_c_for(node, pf),
    "case_statement": lambda ev, node, pf: ev.flow.exec_case(node, pf),
    "function_definition": lambda ev, node, pf: ev.commands.exec_function_definition(node, pf),
    "subshell": Evaluator.exec_subshell,
    "compound_statement": Evaluator.exec_compound,
    "test_command": lambda ev, node, pf: ev.flow.exec_test(node, pf),
    "comment": lambda ev, node, pf: None,
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
