"""Simple commands once expanded: wrappers stripped (``env``, ``nohup``, ``numactl`` …), the
launch detected, builtins and registered models run, script functions called (library
functions inlined or skipped as the embedding says), files sourced and child scripts
evaluated; anything else is an opaque external command."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence

from tree_sitter import Node

from bot.shell.builtins import BUILTINS as _BUILTINS
from bot.shell.builtins import PURE as _PURE
from bot.shell.effects import classify
from bot.shell.fields import Field
from bot.shell.host import Host
from bot.shell.parse import ParsedFile, short_text
from bot.shell.result import SourceSpan, Unresolved, item_key
from bot.shell.signals import ExitSignal, Launch, LaunchSignal, ReturnSignal
from bot.shell.state import FunctionDef, State, Var
from bot.shell.text import (
    EMPTY_TAINTS,
    Text,
    opaque,
)
from bot.shell.usage import variable_read

# The process's own bookkeeping, not part of what a launch line sets (as in the traces).
_NOT_LAUNCH_ENV = frozenset({"PATH", "HOME", "PWD", "OLDPWD", "SHLVL", "_"})

# Commands that run their arguments as a command: stripped to find the program.
_WRAPPERS = frozenset(
    ("env", "nohup", "exec", "command", "builtin", "time", "nice", "setsid", "stdbuf", "timeout")
) | {"taskset", "numactl", "sudo"}
_NUMACTL_VALUE_OPTS = frozenset(
    ("-N", "-m", "-C", "-p", "-i", "--cpunodebind", "--membind", "--physcpubind")
) | {"--preferred", "--interleave"}


class Commands:
    def __init__(self, ev: Host) -> None:
        self.ev = ev

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
            self.ev.st.status = 0
            return
        head = fields[0].text
        argv = [f.text for f in fields]
        words = [t.s for t in argv]
        if not head.known:
            self.opaque_command(argv, span, f"command name {head.s} is not known")
            return
        if self.ev.handlers.is_launch(words):
            self._launch(fields, spans, prefix, span)
        name = head.s
        fn = self.ev.st.functions.get(name)
        handler = self.ev.handlers.commands.get(name)
        if fn is not None and not fn.library:
            self._with_prefix(prefix, lambda: self.call_function(fn, argv[1:], span), True)
        elif handler is not None and (
            fn.library is not None if fn is not None else not handler.defined_only
        ):
            model = handler.model
            self._with_prefix(prefix, lambda: model(self.ev, argv[1:], span), True)
        elif fn is not None:
            self._library_call(fn, argv, prefix, span)
        else:
            builtin = _BUILTINS.get(name)
            if builtin is not None:
                self._with_prefix(prefix, lambda: builtin(self.ev, argv, span, pf), False)
            else:
                self._with_prefix(prefix, lambda: self.external(argv, span, pf), True)
        if is_exec:
            raise ExitSignal(
                self.ev.st.status, span, None if self.ev.st.status == 0 else "exec failed"
            )

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
            frame = self.ev.st.frame_of(name)
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
        # an input variable the script left as it was is never in the launch's env, whatever
        # its value; one it replaced is compared with its input value, which counts as read
        visible = dict(self.ev.st.visible(recorded=False))
        for name, now in visible.items():
            if name in self.ev.job_env and now is not self.ev.input_vars.get(name):
                variable_read(name)
        order = list(self.ev.st.export_order)
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
            if name in self.ev.job_env and self.ev.job_env[name] == value.s:
                continue
            env[name] = value
        for name, value in prefix:
            env.pop(name, None)
            env[name] = value
        prefixed = {name for name, _ in prefix}
        unset = [
            name
            for name in self.ev.job_env
            if name not in prefixed
            and (
                name not in visible
                or not visible[name].exported
                or (visible[name].scalar is None and not visible[name].is_array)
            )
        ]
        globbed = [i for i, f in enumerate(fields) if f.glob]
        for item in sorted(self.ev.orphans, key=item_key):
            self.ev.control[item] = None
        raise LaunchSignal(
            Launch(argv, sources, list(env.items()), unset, span, self.ev.written_files(), globbed)
        )

    def opaque_command(self, argv: list[Text], span: SourceSpan, why: str) -> None:
        if self.ev.st.out is not None:
            what = f"output of `{short_text(' '.join(t.s for t in argv))}`"
            item = self.ev.unresolved(span, what, why)
            self.ev.st.out.chunks.append(
                opaque(argv[0].s.rsplit("/", 1)[-1], "command-output", item)
            )
        self.ev.st.status = None

    def external(self, argv: list[Text], span: SourceSpan, pf: ParsedFile) -> None:
        words = [t.s for t in argv]
        name = words[0].rsplit("/", 1)[-1]
        if name in ("bash", "sh") and self._run_child_script(argv, span, pf):
            return
        pure = _PURE.get(name)
        if pure is not None and pure(self.ev, argv, span):
            return
        effect = classify(words)
        if effect is not None and effect.category == "no-op":
            self.ev.st.status = 0
            return
        if effect is not None:
            if effect.category != "host-probe" and self.ev.st.out is None:
                self.ev.assume(span, "side-effect", f"`{short_text(' '.join(words))}`", effect.note)
            self.opaque_command(
                argv, span, f"the output of {effect.kind} is only known at run time"
            )
            self.ev.st.status = effect.status  # side effects are assumed to succeed; probes unknown
            return
        if any(not t.known for t in argv):
            self.opaque_command(argv, span, "command with unknown arguments is not evaluated")
            return
        unknown = self._unknown_command(words[0])
        self.ev.assume(
            span,
            "side-effect",
            f"`{short_text(' '.join(words))}`",
            f"{unknown}; treated as having no effect on the launch",
        )
        self.opaque_command(argv, span, f"{unknown}; its output and exit status are unknown")

    def _unknown_command(self, word: str) -> str:
        """Why a command is not evaluated: for a bare name, where it was looked for."""
        if "/" in word:
            return f"`{word}` is not evaluated statically"
        where = f" ({', '.join(self.ev.sourced)})" if self.ev.sourced else ""
        why = (
            f"`{word}` is not defined by the script or the files it sources{where} and is not "
            "a command recipe-sync models"
        )
        self.ev.unknown_commands[word] = why
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
            fragment = self.ev.parser.parse_fragment(rest[1].s, span.file, span.line)
            self._child(fragment, rest[2:3] or [Text.lit("bash")], rest[3:])
            return True
        target = rest[0]
        path = self.ev.files.repo_path(target)
        if path is None or not self.ev.source.exists(path):
            return False
        child_pf = self.ev.parser.parse_file(self.ev.source, path)
        self._child(child_pf, [Text.lit(target.s)], rest[1:])
        return True

    def _child(self, pf: ParsedFile, zero: list[Text], args: list[Text]) -> None:
        parent = self.ev.st
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

        def script() -> None:
            self.ev.budget.enter(pf.display, None)
            try:
                self.ev.exec_block(pf.root, pf)
            finally:
                self.ev.budget.leave()

        self.ev.st.status = self.ev.paths.in_process(child, script, zero=zero[0].s)

    def exec_function_definition(self, node: Node, pf: ParsedFile) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None or body is None:
            return
        name = pf.text(name_node)
        self.ev.st.functions[name] = FunctionDef(
            name, body, pf, library=self.ev.libraries[-1] if self.ev.libraries else None
        )
        self.ev.st.status = 0

    def call_function(self, fn: FunctionDef, args: Sequence[Text], span: SourceSpan) -> None:
        st = self.ev.st
        self.ev.budget.enter(span.file, span.line)
        st.positional.append(tuple(args))
        st.frames.append({})
        st.funcnames.append(fn.name)
        st.sources.insert(0, fn.pf.display)
        depth = len(st.frames)
        pending: list[State] = []
        self.ev.paths.returns.append(pending)
        saved_breaks, self.ev.paths.breaks = self.ev.paths.breaks, []
        try:
            try:
                if fn.body.type == "compound_statement":
                    self.ev.exec_block(fn.body, fn.pf)
                else:
                    self.ev.exec_stmt(fn.body, fn.pf)
            except ReturnSignal as signal:
                self.ev.st.status = signal.status
            finally:
                self.ev.paths.returns.pop()
                self.ev.paths.breaks = saved_breaks
            self.ev.paths.landed(pending, f"an early return from {fn.name}", span)
        finally:
            st = self.ev.st
            del st.frames[depth - 1 :]
            st.positional.pop()
            st.funcnames.pop()
            st.sources.pop(0)
            self.ev.budget.leave()

    def _library_call(
        self, fn: FunctionDef, argv: list[Text], prefix: list[tuple[str, Text]], span: SourceSpan
    ) -> None:
        """A library helper without a model: inlined if its library says so, else a no-op."""
        assert fn.library is not None
        analysis = self.ev.handlers.sources[fn.library].analyse(fn, self.ev.st.functions)
        if analysis.inline:
            self._with_prefix(prefix, lambda: self.call_function(fn, argv[1:], span), True)
            return
        item = self.ev.unresolved(
            span,
            "",
            f"library function {fn.name} is a side-effect helper and is not evaluated; "
            "it may assign this variable",
        )
        for name in analysis.assigns:
            var = self.ev.st.lookup(name)
            what = f"${name}"
            marked = Unresolved(what, item.why, item.file, item.line)
            if var is None:
                self.ev.st.frames[0][name] = Var(maybe=marked)
            else:
                self.ev.st.store(name, Var(var.scalar, var.items, var.assoc, var.exported, marked))
        if self.ev.st.out is not None:
            self.opaque_command(argv, span, f"library function {fn.name} is not evaluated")
        self.ev.st.status = 0

    def source_file(self, argv: list[Text], span: SourceSpan) -> None:
        if len(argv) < 2:
            self.ev.st.status = 2
            return
        target = argv[1]
        path = self.ev.files.repo_path(target)
        if path is not None and not self.ev.source.exists(path):
            known = self.ev.handlers.library_of(posixpath.basename(path))
            fallback = known.fallback if known is not None else None
            if known is not None and fallback is not None and self.ev.source.exists(fallback):
                self.ev.assume(
                    span,
                    "source",
                    f"source {target.s}",
                    f"no such file; {known.label} at {fallback} was used "
                    "(as the job environment provides it)",
                )
                path = fallback
        if path is None or not self.ev.source.exists(path):
            why = (
                "the path is not statically known"
                if not target.known
                else "file not found in the repository (or outside it)"
            )
            self.ev.control[self.ev.unresolved(span, f"source {target.s}", why)] = None
            self.ev.st.status = 1
            return
        pf = self.ev.parser.parse_file(self.ev.source, path)
        if path not in self.ev.sourced:
            self.ev.sourced.append(path)
        library = self.ev.handlers.library_of(posixpath.basename(path))
        st = self.ev.st
        if len(argv) > 2:
            st.positional.append(tuple(argv[2:]))
        st.sources.insert(0, target.s)
        if library is not None:
            self.ev.libraries.append(library.name)
        self.ev.budget.enter(span.file, span.line)
        try:
            with self.ev.paths.barrier():  # a `return` here leaves the file, not the caller
                self.ev.exec_block(pf.root, pf)
        except ReturnSignal as signal:
            self.ev.st.status = signal.status
        finally:
            self.ev.budget.leave()
            if library is not None:
                self.ev.libraries.pop()
            self.ev.st.sources.pop(0)
            if len(argv) > 2:
                self.ev.st.positional.pop()
