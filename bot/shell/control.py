"""Control flow: ``&&``/``||`` lists, pipelines, ``!``, ``if``/``elif``, ``[[ … ]]``,
``case``, and ``for``/``while``/``until`` loops (bounded; a loop whose count is only known at
run time is run once and said so)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

from tree_sitter import Node

from bot.shell import patterns
from bot.shell.assigns import assigned_names
from bot.shell.conditions import evaluate_test
from bot.shell.fields import join_pieces
from bot.shell.host import Host
from bot.shell.parse import ParsedFile, first_token, named_children, nodes_text, short_text
from bot.shell.result import SourceSpan, Unresolved
from bot.shell.signals import LoopSignal
from bot.shell.state import Capture, State, Var
from bot.shell.text import (
    EMPTY,
    EMPTY_TAINTS,
    Text,
    opaque,
)

_VARIABLE_REFERENCE = re.compile(r"\$\{?([A-Za-z_]\w*)")


class ControlFlow:
    def __init__(self, ev: Host) -> None:
        self.ev = ev

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
            self.ev.st.status = 0
            return
        condition, body = clauses[0]
        if condition is None:
            self.ev.st.status = 0
            self.ev.exec_nodes(body, pf)
            return
        status = self.ev.run_condition(condition, pf)
        if status is None:
            text = nodes_text(condition, pf)
            why = f"the condition `{short_text(text)}` ({span}){self._unknown_inputs(text)}"
            rest = clauses[1:]
            self.ev.paths.fork(
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
            var = self.ev.st.lookup(name)
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
            for word, why in self.ev.unknown_commands.items()
            if re.search(rf"(?<![\w$-]){re.escape(word)}(?![\w-])", text)
        ]
        return reads + (f", which runs an unknown command: {'; '.join(runs)}" if runs else "")

    def _then(self, body: list[Node], pf: ParsedFile) -> None:
        self.ev.st.status = 0
        self.ev.exec_nodes(body, pf)

    def exec_list(self, node: Node, pf: ParsedFile) -> None:
        children = node.children
        left = children[0]
        op = children[1].type if len(children) > 1 else "&&"
        right = children[2] if len(children) > 2 else None
        self.ev.st.condition += 1
        try:
            self.ev.exec_stmt(left, pf)
        finally:
            self.ev.st.condition -= 1
        status = self.ev.st.status
        if right is None:
            return
        span = SourceSpan(pf.display, pf.node_line(node))
        run_right = (op == "&&" and status == 0) or (op == "||" and status not in (0, None))
        if status is None:
            why = f"the status of `{short_text(pf.text(left))}` ({span})"
            target = right

            def skip() -> None:
                self.ev.st.status = None

            labels = ("is 0", "is not 0") if op == "&&" else ("is not 0", "is 0")
            self.ev.paths.fork([lambda: self.ev.exec_stmt(target, pf), skip], why, span, labels)
            return
        if run_right:
            self.ev.exec_stmt(right, pf)

    def exec_negated(self, node: Node, pf: ParsedFile) -> None:
        inner = named_children(node)
        self.ev.st.condition += 1
        try:
            for child in inner:
                self.ev.exec_stmt(child, pf)
        finally:
            self.ev.st.condition -= 1
        status = self.ev.st.status
        self.ev.st.status = None if status is None else int(status == 0)

    def exec_pipeline(self, node: Node, pf: ParsedFile) -> None:
        stages = [c for c in named_children(node) if c.type != "comment"]
        stdin = self.ev.st.stdin
        status: int | None = 0
        for index, stage in enumerate(stages):
            last = index == len(stages) - 1
            capture = None if last else Capture()
            parent = self.ev.st
            child = parent.clone()
            child.stdin = stdin
            if capture is not None:
                child.out = capture
            status = self.ev.paths.in_process(child, partial(self.ev.exec_stmt, stage, pf))
            stdin = capture.text() if capture is not None else None
        self.ev.st.status = status

    def exec_test(self, node: Node, pf: ParsedFile) -> None:
        result = evaluate_test(self.ev, node, pf)
        self.ev.st.status = (
            None if result is None else (0 if result is True else (2 if result == 2 else 1))
        )
        self.ev.errexit(SourceSpan(pf.display, pf.node_line(node)))

    def exec_case(self, node: Node, pf: ParsedFile) -> None:
        span = SourceSpan(pf.display, pf.node_line(node))
        value = node.child_by_field_name("value")
        subject = self.ev.expander.string(pf, value) if value is not None else EMPTY
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
                    pattern, taints = self.ev.expander.pattern(pf, pattern_node)
                    if taints or not subject.known:
                        matched = None if pattern != "*" else True
                        if matched:
                            break
                        continue
                    if patterns.matches(pattern, subject.s):
                        matched = True
                        break
            if matched is None:
                why = f"`case {short_text(subject.s)}` ({span})"
                self.ev.paths.fork(
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
        self.ev.st.status = 0

    def _case_body(
        self, items: list[Node], index: int, subject: Text, pf: ParsedFile, span: SourceSpan
    ) -> None:
        _, body, terminator = self._case_item_parts(items[index])
        self.ev.st.status = 0
        self.ev.exec_nodes(body, pf)
        if terminator == ";&":
            self._case_from(items, index + 1, subject, pf, span, fallthrough=True)
        elif terminator == ";;&":
            self._case_from(items, index + 1, subject, pf, span, fallthrough=False)

    @contextmanager
    def _loop(self, span: SourceSpan) -> Iterator[None]:
        """Breaks on run-time conditions inside the loop land at its end, joined there."""
        pending: list[State] = []
        self.ev.paths.breaks.append(pending)
        try:
            yield
        finally:
            self.ev.paths.breaks.pop()
        status = self.ev.st.status
        self.ev.paths.landed(pending, f"a break out of the loop at {span}", span)
        self.ev.st.status = status

    def _loop_body(self, body: Node | None, pf: ParsedFile) -> str | None:
        """Run one iteration; returns 'break' or None (continue/normal)."""
        if body is None:
            return None
        try:
            self.ev.exec_block(body, pf)
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
                values.extend(f.text for f in self.ev.expander.fields(pf, child))
                self.ev.budget.check_array(len(values), span.file, span.line)
        else:
            values = list(self.ev.st.positional[-1])
        self.ev.st.status = 0
        with self._loop(span):
            for count, value in enumerate(values, 1):
                self.ev.budget.check_iterations(count, span.file, span.line)
                self.ev.set_var(name, value, span)
                if self._loop_body(body, pf) == "break":
                    break

    def exec_c_for(self, node: Node, pf: ParsedFile) -> None:
        span = SourceSpan(pf.display, pf.node_line(node))
        body = node.child_by_field_name("body")
        parts: list[tuple[int, int]] = []
        open_node = next((c for c in node.children if c.type == "(("), None)
        close_node = next((c for c in node.children if c.type == "))"), None)
        if open_node is None or close_node is None:
            self.ev.control[self.ev.unresolved(span, "for ((…))", "loop header not understood")] = (
                None
            )
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
            return self.ev.arithmetic(join_pieces(self.ev.arith_pieces(pf, *region)), span)

        arith(init)
        count = 0
        while True:
            count += 1
            self.ev.budget.check_iterations(count, span.file, span.line)
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
        self.ev.st.status = 0

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
                self.ev.budget.check_iterations(count, span.file, span.line)
                status = self.ev.run_condition(condition, pf)
                if status is None:
                    self._unknown_loop(node, pf, span, EMPTY_TAINTS)
                    return
                if (status != 0) != until:
                    break
                if self._loop_body(body, pf) == "break":
                    break
        self.ev.st.status = 0

    def _unknown_loop(
        self, node: Node, pf: ParsedFile, span: SourceSpan, taints: frozenset[Unresolved]
    ) -> None:
        """The iteration count is undecidable: what the loop assigns becomes unknown."""
        why = f"assigned in the loop at {span}, whose iteration count cannot be decided"
        for name in sorted(assigned_names(node, pf)):
            item = Unresolved(f"${name}", why, span.file, span.line)
            old = self.ev.st.lookup(name)
            exported = old is not None and old.exported
            self.ev.st.store(
                name,
                Var(scalar=opaque(name, "derived", item).with_taints(taints), exported=exported),
            )
        self.ev.st.status = 0
